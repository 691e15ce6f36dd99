// A frontend written against the seed's event catalog judges the `catalog`
// relay format: examples/web/agent-stream.js (the seed's useAgent parsing
// and store updates, without React) reads every relayed case that
// `cargo run --example relay_cases -- DIR` wrote (RELAY_CASES=DIR:
// NAME.catalog.sse, and NAME.catalog.json with what the stream folded), in
// Node (in several chunkings) and in headless Chromium (fetch + its
// ReadableStream, as the seed's hook reads), and must show the folded
// answer, the reasoning apart from it, every tool call with its arguments
// and result, the approvals, the log, the errors and the finish — and never
// an `undefined`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { launchChromium } from "./chromium.mjs";

const dir = process.env.RELAY_CASES;
const root = process.env.SSEFOLD_ROOT;
if (!dir || !root) throw new Error("RELAY_CASES and SSEFOLD_ROOT must be set (make js-test sets them)");
const web = join(root, "examples", "web");
const { readAgentStream, createAgentState, CATALOG_EVENT_NAMES } = await import(join(web, "agent-stream.js"));
const cases = readdirSync(dir)
  .filter((f) => f.endsWith(".catalog.sse"))
  .map((f) => f.replace(/\.catalog\.sse$/, ""))
  .sort();
const FINISH_REASONS = ["stop", "max-steps", "error", "cancelled"];

function expectedOf(name) {
  return JSON.parse(readFileSync(join(dir, `${name}.catalog.json`), "utf8"));
}

/** Everything the page would show, checked against what the stream folded. */
function check(name, state, expected) {
  const where = `${name}: `;
  assert.equal(state.messages.length, 1, where + "one assistant message");
  assert.equal(state.messages[0].content, expected.answer, where + "the answer is the folded text of choice 0");
  assert.equal(state.reasoning, expected.reasoning, where + "reasoning apart from the answer");

  // Every ready call, with its arguments and result.
  const ready = expected.tools.filter((t) => t.state === "output-available");
  for (const want of ready) {
    const got = state.tools.find((t) => t.id === want.toolCallId);
    assert.ok(got, where + `tool call ${want.toolCallId} shown`);
    assert.equal(got.name, want.toolName, where + "tool name");
    if (!want.providerExecuted) {
      assert.deepEqual(got.args, want.input, where + `arguments of ${want.toolCallId}`);
      assert.deepEqual(got.result, want.output, where + `result of ${want.toolCallId}`);
      assert.equal(got.duration, 5, where + "duration");
      // The arguments as they streamed add up to the ready call's.
      if (got.argsText !== undefined && got.argsText.trim() !== "") {
        let streamed;
        try {
          streamed = JSON.parse(got.argsText);
        } catch {
          streamed = got.argsText;
        }
        assert.deepEqual(streamed, want.input, where + `streamed arguments of ${want.toolCallId}`);
      }
      assert.equal(got.status, "done");
    } else {
      assert.ok(got.result !== undefined || got.status === "called", where + "provider tool result");
    }
  }
  const failedCalls = expected.tools.filter((t) => t.state === "output-error" && !t.providerExecuted);
  for (const want of failedCalls) {
    const got = state.tools.find((t) => t.id === want.toolCallId);
    assert.ok(!got || got.status !== "done", where + `a call that never became ready is not shown done: ${want.toolCallId}`);
  }

  // One approval per host tool: the tool, its input and a sentence.
  const hostTools = ready.filter((t) => !t.providerExecuted);
  assert.equal(state.approvals.length, hostTools.length, where + "approvals");
  hostTools.forEach((want, i) => {
    const approval = state.approvals[i];
    assert.equal(approval.approvalId, `approval_${want.toolCallId}`);
    assert.equal(approval.toolName, want.toolName);
    assert.deepEqual(approval.input, want.input);
    assert.equal(typeof approval.message, "string");
    assert.ok(approval.message.includes(want.toolName), where + approval.message);
  });

  // The log: the host's line first (ISO time, trace), the seed's tool lines.
  const first = state.logs[0];
  assert.equal(first.message, "Turn started");
  assert.equal(first.timestamp, "2025-01-15T10:30:00.000Z");
  assert.equal(first.traceId, "trace-cases");
  assert.deepEqual(first.metadata, { source: expected.source });
  for (const entry of state.logs) {
    assert.ok(["info", "warn", "error"].includes(entry.level), where + `log level ${entry.level}`);
    assert.equal(typeof entry.message, "string", where + "log message");
    assert.ok(!entry.message.includes("undefined"), where + `log line reads ${entry.message}`);
    if (entry.message.startsWith("Calling ")) assert.ok(entry.metadata.args !== undefined, where + entry.message);
  }
  const calls = state.logs.filter((l) => l.message.startsWith("Calling ")).length;
  assert.equal(calls, state.tools.filter((t) => t.args !== undefined).length, where + "a log line per call");

  // Errors: the provider's messages, a broken stream, invalid arguments.
  for (const message of expected.providerErrors) {
    assert.ok(state.errors.some((e) => e.error === message), where + `provider error shown: ${message}`);
  }
  if (expected.streamFailed) assert.ok(state.errors.some((e) => e.code === "stream_error"), where + "stream_error");
  for (const error of state.errors) {
    assert.equal(typeof error.error, "string", where + "error text");
    assert.equal(typeof error.recoverable, "boolean", where + "recoverable");
  }
  const fatal = expected.providerErrors.length > 0 || expected.streamFailed;
  if (!fatal && failedCalls.length === 0) assert.deepEqual(state.errors, [], where + "no error");

  // The finish: one of the four reasons, token counts, the step count.
  const finish = state.finish;
  assert.ok(finish, where + "finish");
  assert.ok(FINISH_REASONS.includes(finish.finishReason), where + finish.finishReason);
  if (fatal) assert.equal(finish.finishReason, "error", where + "a failed run finishes with error");
  for (const key of ["promptTokens", "completionTokens", "totalTokens"]) {
    assert.ok(Number.isInteger(finish.usage[key]) && finish.usage[key] >= 0, where + `usage.${key}`);
  }
  if (expected.usage) assert.ok(finish.usage.totalTokens > 0, where + "usage counted");
  // One step, unless the provider failed before its turn began.
  assert.equal(finish.stepCount, state.steps.length, where + "stepCount");
  if (!fatal) assert.equal(finish.stepCount, 1, where + "stepCount");
  state.steps.forEach((step, i) => assert.equal(step.stepNumber, i + 1, where + "stepNumber"));
}

/** `bytes` as an async iterable of chunks of the sizes `sizes` cycles through. */
async function* chunked(bytes, sizes) {
  for (let i = 0, k = 0; i < bytes.length; k++) {
    const size = sizes[k % sizes.length];
    yield bytes.subarray(i, i + size);
    i += size;
  }
}

test("cases were generated", () => {
  assert.ok(cases.length >= 60, `only ${cases.length} catalog cases in ${dir}`);
  const withTools = cases.filter((n) => expectedOf(n).tools.some((t) => t.state === "output-available"));
  assert.ok(withTools.length >= 30, `only ${withTools.length} cases with ready tool calls`);
  const withReasoning = cases.filter((n) => expectedOf(n).reasoning.length > 0);
  assert.ok(withReasoning.length >= 5, `only ${withReasoning.length} cases with reasoning`);
  const streamed = cases.filter((n) => readFileSync(join(dir, `${n}.catalog.sse`), "utf8").includes("event: tool-input-delta"));
  assert.ok(streamed.length >= 30, `only ${streamed.length} cases stream tool arguments`);
});

test("the frontend's event names are the relay's (relay::CATALOG_EVENT_NAMES)", () => {
  const relay = JSON.parse(readFileSync(join(dir, "catalog_event_names.json"), "utf8"));
  assert.deepEqual([...CATALOG_EVENT_NAMES].sort(), [...relay].sort());
});

test("every catalog event name is one the frontend knows", () => {
  const names = new Set();
  for (const name of cases) {
    for (const m of readFileSync(join(dir, `${name}.catalog.sse`), "utf8").matchAll(/^event: (.*)$/gm)) names.add(m[1]);
  }
  for (const name of names) assert.ok(CATALOG_EVENT_NAMES.includes(name), `unknown event ${name}`);
  for (const name of ["text-delta", "tool-call", "tool-result", "approval-required", "step-completed", "log", "finish", "error"]) {
    assert.ok(names.has(name), `no case sends ${name}`);
  }
});

for (const name of cases) {
  test(`Node: the seed's frontend shows the folded turn: ${name}`, async () => {
    const bytes = readFileSync(join(dir, `${name}.catalog.sse`));
    const expected = expectedOf(name);
    for (const sizes of [[bytes.length], [1], [7, 3, 97, 1, 250]]) {
      const state = await readAgentStream(chunked(bytes, sizes), createAgentState());
      check(`${name} (chunks ${sizes})`, state, expected);
    }
  });
}

test("Chromium: the seed's frontend reads every case over fetch", { timeout: 300_000 }, async () => {
    const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/") {
      res.writeHead(200, { "content-type": "text/html" });
      return res.end("<!doctype html><title>catalog</title>");
    }
    if (url.pathname === "/agent-stream.js") {
      res.writeHead(200, { "content-type": "text/javascript" });
      return res.end(readFileSync(join(web, "agent-stream.js")));
    }
    const name = url.pathname.slice(1);
    if (!cases.includes(name)) {
      res.writeHead(404);
      return res.end();
    }
    const body = readFileSync(join(dir, `${name}.catalog.sse`));
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    // Small pieces, so the page's parser sees split events.
    let i = 0;
    const pump = () => {
      if (i >= body.length) return res.end();
      res.write(body.subarray(i, i + 97));
      i += 97;
      setImmediate(pump);
    };
    pump();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(base + "/");
    const states = await page.evaluate(async (names) => {
      const { readAgentStream, createAgentState } = await import("/agent-stream.js");
      const out = {};
      for (const name of names) {
        const response = await fetch("/" + name, { method: "GET" });
        out[name] = await readAgentStream(response.body, createAgentState());
      }
      return out;
    }, cases);
    for (const name of cases) check(`${name} (Chromium)`, states[name], expectedOf(name));
  } finally {
    await browser.close();
    server.close();
  }
});
