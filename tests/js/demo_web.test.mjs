// The demo page (examples/web/index.html, served by
// python/examples/demo_web.py with SSEFOLD_PYTHON, the venv's interpreter)
// in headless Chromium: a person's message, the approval answered with the
// page's own buttons (Approve: the tool runs; Deny: its result says so), and
// the DOM after the stream: the answer, the reasoning folded away, each tool
// call with its arguments and result, the log and the finish.
// DEMO_SCREENSHOT=PATH saves the approved run's page (the README's picture).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { launchChromium } from "./chromium.mjs";

const root = process.env.SSEFOLD_ROOT;
const python = process.env.SSEFOLD_PYTHON;
const cases = process.env.RELAY_CASES;
if (!root || !python || !cases) throw new Error("SSEFOLD_ROOT, SSEFOLD_PYTHON and RELAY_CASES must be set (make js-test sets them)");

// What the recorded turns fold to (relay_cases wrote it): the seed's page
// shows one assistant message, the text of both turns.
const shown = (name) => JSON.parse(readFileSync(join(cases, `fixtures_anthropic_${name}_sse.catalog.json`), "utf8"));
const turn1 = shown("interleaved_tools");
const turn2 = shown("thinking_text_citations");

function startDemo() {
  return new Promise((resolve, reject) => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    // The model's chunks 2 ms apart: streamed, not instant.
    const child = spawn(python, [join(root, "python/examples/demo_web.py"), String(port), "0.002"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    child.stdout.setEncoding("utf8");
    child.stdout.once("data", (line) => resolve({ child, url: line.trim() }));
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`demo_web.py exited with ${code}`)));
  });
}

let browser;
let demo;
test.before(async () => {
  demo = await startDemo();
  browser = await launchChromium();
});
test.after(async () => {
  await browser?.close();
  demo?.child.kill();
});

/** Waits for `expression` on the page; on a timeout the error says what the
 * page shows (its log, the tools' statuses, the finish line), so that a run
 * that fails on a loaded machine tells a slow turn from a stuck one. */
async function waitOrExplain(page, expression, timeout) {
  try {
    await page.waitForFunction(expression, { timeout });
  } catch (e) {
    const state = await page
      .evaluate(() => ({
        log: [...document.querySelectorAll("#log li")].map((li) => li.textContent),
        tools: [...document.querySelectorAll(".tool")].map((t) => `${t.dataset.name}: ${t.querySelector(".status")?.textContent}`),
        finish: document.querySelector("#finish").textContent,
        answer: document.querySelector("#answer").textContent.length,
      }))
      .catch((err) => String(err));
    throw new Error(`${e.message} waiting for ${expression}; the page: ${JSON.stringify(state)}`);
  }
}

/** Sends the page's message, answers the approval with the button
 * `choice`, and returns the page once the stream finished. */
async function run(choice) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 1000 });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(demo.url);
  await page.click("#send");
  // The approval appears while the turn waits on it; the answer has begun.
  await page.waitForSelector(`.approval button.${choice}:not([disabled])`, { timeout: 60_000 });
  const before = await page.evaluate(() => ({
    tools: [...document.querySelectorAll(".tool")].map((t) => [t.dataset.name, t.classList.contains("done")]),
    message: document.querySelector(".approval .message").textContent,
    finished: !document.querySelector("#finish").hidden,
  }));
  assert.equal(before.finished, false, "the turn waits for the user");
  assert.equal(before.message, 'Allow get_weather(city="Paris", days=[1, 2])?');
  assert.ok(before.tools.some(([name, done]) => name === "get_weather" && !done), "the call waits, not run");
  await page.click(`.approval button.${choice}`);
  // Generous: `make test` runs this beside release builds on two cores.
  await waitOrExplain(page, "window.demo.done === true", 60_000);
  await waitOrExplain(page, "!document.querySelector('#finish').hidden", 10_000);
  assert.deepEqual(errors, [], "no script error");
  return page;
}

function pageView(page) {
  return page.evaluate(() => ({
    answer: document.querySelector("#answer").textContent,
    reasoningShown: !document.querySelector("#reasoning").hidden,
    reasoningOpen: document.querySelector("#reasoning").open,
    reasoning: document.querySelector("#reasoning pre").textContent,
    tools: [...document.querySelectorAll(".tool")].map((t) => ({
      name: t.dataset.name,
      status: t.querySelector(".status").textContent,
      args: t.querySelector(".args").textContent,
      result: t.querySelector(".result")?.textContent,
      duration: t.querySelector(".duration")?.textContent,
      provider: !!t.querySelector(".badge"),
    })),
    approvals: document.querySelectorAll(".approval").length,
    log: [...document.querySelectorAll("#log li .text")].map((li) => li.textContent),
    finish: document.querySelector("#finish").textContent,
    body: document.body.innerText,
  }));
}

test("approve: the tool runs and the page shows the whole turn", { timeout: 120_000 }, async () => {
  const page = await run("approve");
  const view = await pageView(page);
  assert.equal(view.answer, turn1.answer + turn2.answer, "the answer, both turns");
  assert.ok(view.reasoningShown && !view.reasoningOpen, "reasoning folded away");
  assert.equal(view.reasoning, turn2.reasoning);
  const byName = Object.fromEntries(view.tools.map((t) => [t.name, t]));
  // Turn 1 also shows the provider's own tools: a web search, an MCP echo.
  assert.deepEqual(Object.keys(byName).sort(), ["echo", "get_time", "get_weather", "web_search"]);
  assert.ok(byName.echo.provider, "the provider's MCP tool says so");
  assert.deepEqual(JSON.parse(byName.get_weather.args), { city: "Paris", days: [1, 2] });
  assert.deepEqual(JSON.parse(byName.get_weather.result), {
    city: "Paris",
    forecast: [
      { day: 1, temp_c: 19 },
      { day: 2, temp_c: 20 },
    ],
  });
  assert.equal(byName.get_weather.status, "done");
  assert.match(byName.get_weather.duration, /^\d+ ms$/);
  assert.deepEqual(JSON.parse(byName.get_time.result), { tz: "Europe/Paris", time: "12:00" });
  assert.ok(byName.web_search.provider, "the provider's own tool says so");
  assert.equal(view.approvals, 0, "the approval is gone once answered");
  for (const line of ["Turn started", "Calling get_weather...", "get_weather completed", "Calling get_time...", "Completed"]) {
    assert.ok(view.log.includes(line), `log: ${line} (${view.log})`);
  }
  assert.match(view.finish, /^Finished: stop · 2 steps · \d+ tokens/);
  assert.ok(!view.body.includes("undefined"), "nothing reads undefined");
  if (process.env.DEMO_SCREENSHOT) await page.screenshot({ path: process.env.DEMO_SCREENSHOT, fullPage: true });
  await page.close();
});

test("deny: the tool never runs and its result says so", { timeout: 120_000 }, async () => {
  const page = await run("deny");
  const view = await pageView(page);
  const weather = view.tools.find((t) => t.name === "get_weather");
  assert.equal(weather.status, "failed");
  assert.match(weather.result, /Denied by the user/);
  assert.equal(view.answer, turn1.answer + turn2.answer, "the recorded model answers anyway");
  assert.match(view.finish, /^Finished: stop/);
  await page.close();
});
