// A real browser judges the catalog format: headless Chromium's EventSource
// reads a relayed recording from `cargo run --example relay_server`
// (RELAY_SERVER=path of the built example), renders each event into the
// page, is cut off mid-stream, reconnects by itself with Last-Event-ID, and
// must end up with every event exactly once, in order, as the relay sent it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { launchChromium } from "./chromium.mjs";

const server = process.env.RELAY_SERVER;
const root = process.env.SSEFOLD_ROOT;
if (!server || !root) throw new Error("RELAY_SERVER and SSEFOLD_ROOT must be set (make js-test sets them)");

const cases = [
  ["tests/fixtures/anthropic/interleaved_tools.sse", 4],
  ["tests/fixtures/anthropic/thinking_text_citations.sse", 7],
  ["tests/fixtures/openai_chat/parallel_tools.sse", 3],
  ["tests/fixtures/openai_responses/reasoning_text_tool.sse", 5],
];

function startServer(fixture, cutAfter) {
  return new Promise((resolve, reject) => {
    const child = spawn(server, [join(root, fixture), String(cutAfter)], { stdio: ["ignore", "pipe", "inherit"] });
    child.stdout.setEncoding("utf8");
    child.stdout.once("data", (line) => resolve({ child, url: line.trim() }));
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`relay_server exited with ${code}`)));
  });
}

let browser;
test.before(async () => {
  browser = await launchChromium();
});
test.after(async () => {
  await browser?.close();
});

for (const [fixture, cutAfter] of cases) {
  test(`EventSource gets every event once across a reconnection: ${fixture}`, { timeout: 60_000 }, async () => {
    assert.ok(existsSync(join(root, fixture)), `missing fixture ${fixture}`);
    const { child, url } = await startServer(fixture, cutAfter);
    try {
      const expected = await (await fetch(url + "expected")).json();
      assert.ok(expected.length > cutAfter, `the cut must fall inside the stream (${expected.length} events)`);
      const page = await browser.newPage();
      await page.goto(url);
      await page.waitForFunction("window.done === true", { timeout: 30_000 });
      const { received, opens, rendered } = await page.evaluate(() => ({
        received: window.received,
        opens: window.opens,
        rendered: document.querySelectorAll("#log li").length,
      }));
      await page.close();
      assert.ok(opens >= 2, `the browser reconnected (${opens} opens)`);
      assert.deepEqual(received, expected);
      assert.equal(rendered, expected.length, "every event rendered");
      const ids = received.map((e) => Number(e.id));
      assert.deepEqual(ids, ids.map((_, i) => i + 1), "ids 1..N, no gap, no duplicate");
    } finally {
      await fetch(url + "quit").catch(() => {});
      child.kill();
    }
  });
}
