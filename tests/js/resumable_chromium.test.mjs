// A stream that survives its server process: headless Chromium's EventSource
// reads a catalog stream that python/examples/resumable_server.py keeps in a
// real redis-server. A producer process relays a recorded provider stream
// (paced) into Redis; two server processes listen on one port
// (SO_REUSEPORT); mid-stream the one serving the browser is SIGKILLed. The
// browser reconnects by itself with Last-Event-ID, lands on the other (which
// never saw the stream), and must end up with every event the producer
// wrote exactly once, in order, ending with `finish`.
//
// SSEFOLD_PYTHON: a Python with ssefold and redis installed (make js-test
// passes the venv's; `make python-develop` builds it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { launchChromium } from "./chromium.mjs";

const root = process.env.SSEFOLD_ROOT;
const python = process.env.SSEFOLD_PYTHON;
const redisServer = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((p) => existsSync(p));
if (!root || !python) throw new Error("SSEFOLD_ROOT and SSEFOLD_PYTHON must be set (make js-test sets them)");
if (!redisServer) throw new Error("redis-server not found: tools/setup.sh installs Debian's redis-server");

const example = join(root, "python/examples/resumable_server.py");
const fixture = join(root, "tests/fixtures/anthropic/interleaved_tools.sse");

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Spawns a process and resolves with it once it printed its first line;
 * `lines` collects the lines after it. */
function started(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "inherit"] });
    const lines = [];
    const input = createInterface({ input: child.stdout });
    input.once("line", (line) => {
      input.on("line", (next) => lines.push(next.trim()));
      resolve({ child, line: line.trim(), lines });
    });
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`${args[1] ?? cmd} exited with ${code} before it was ready`)));
  });
}

function exited(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });
}

async function waitForRedis(port) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      execFileSync("redis-cli", ["-p", String(port), "ping"], { stdio: "pipe" });
      return;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

test("EventSource resumes on a second server process when the first is killed mid-stream", { timeout: 60_000 }, async () => {
  const children = [];
  const dir = mkdtempSync(join(tmpdir(), "ssefold-redis-"));
  let browser;
  try {
    const redisPort = await freePort();
    const redis = spawn(
      redisServer,
      ["--port", String(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
      { stdio: "ignore" },
    );
    children.push(redis);
    await waitForRedis(redisPort);
    const redisUrl = `redis://127.0.0.1:${redisPort}/0`;
    const port = await freePort();
    const serve = [example, "serve", "--redis", redisUrl, "--port", String(port), "--block-ms", "200"];
    // Two server processes on one port (SO_REUSEPORT): the kernel gives the
    // browser's connection to one of them; that one is killed mid-stream.
    const servers = [await started(python, serve), await started(python, serve)];
    children.push(...servers.map((s) => s.child));
    const streamId = `turn-${Date.now()}`;
    const producer = spawn(
      python,
      [example, "produce", "--redis", redisUrl, "--stream", streamId, "--fixture", fixture, "--pace-ms", "120"],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    children.push(producer);

    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(`${servers[0].line}#${streamId}`);
    await page.waitForFunction("window.received.length >= 2", { timeout: 20_000 });
    const serving = servers.filter((s) => s.lines.some((l) => l.startsWith(`stream ${streamId} `)));
    assert.equal(serving.length, 1, "one process serves the stream");
    serving[0].child.kill("SIGKILL");
    await exited(serving[0].child);
    const beforeKill = await page.evaluate(() => window.received.length);
    await page.waitForFunction("window.done === true", { timeout: 30_000 });
    const { received, opens, rendered } = await page.evaluate(() => ({
      received: window.received,
      opens: window.opens,
      rendered: document.querySelectorAll("#log li").length,
    }));
    assert.equal(await exited(producer), 0, "the producer finished");

    const dumped = execFileSync(python, [example, "dump", "--redis", redisUrl, "--stream", streamId], {
      encoding: "utf8",
    });
    const written = dumped.trim().split("\n").map((line) => JSON.parse(line));
    assert.ok(opens >= 2, `the browser reconnected (${opens} opens)`);
    const resumed = servers.find((s) => s !== serving[0]).lines;
    assert.ok(resumed.some((l) => l.startsWith(`stream ${streamId} after `) && !l.endsWith(" after 0")),
      `the other process resumed the stream after an id: ${resumed}`);
    assert.ok(beforeKill < written.length, "server A was killed mid-stream");
    assert.deepEqual(received, written, "every event the producer wrote, once, in order");
    assert.equal(rendered, written.length, "every event rendered");
    const ids = received.map((e) => Number(e.id));
    assert.deepEqual(ids, ids.map((_, i) => i + 1), "ids 1..N, no gap, no duplicate");
    assert.equal(received.at(-1).event, "finish");
  } finally {
    await browser?.close();
    for (const child of children.reverse()) {
      child.kill("SIGKILL");
      await exited(child);
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
