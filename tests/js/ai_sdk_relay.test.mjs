// The `ai` npm package judges the relay's UI message stream: for every case
// written by `cargo run --example relay_cases -- DIR` (RELAY_CASES=DIR), a
// loopback HTTP server answers with the relayed bytes and the package's own
// chat transport (DefaultChatTransport: what useChat uses, its SSE parser and
// chunk schema) and readUIMessageStream rebuild the UI message. Its text,
// reasoning and tool parts must equal what the stream folded, and its
// sources, files and metadata what the stream cited, carried and reported.
// Every case is judged by `ai` 7 (the current major) and by `ai` 6 (the
// `ai6` alias: the previous major, which reads the same chunks).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as ai7 from "ai";
import * as ai6 from "ai6";

const PACKAGES = [
  ["ai@7", ai7],
  ["ai@6", ai6],
];

const dir = process.env.RELAY_CASES;
if (!dir) throw new Error("RELAY_CASES is not set (make js-test sets it)");
const cases = readdirSync(dir).filter((f) => f.endsWith(".ai-sdk.sse")).sort();

const HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "x-vercel-ai-ui-message-stream": "v1",
};

async function withServer(body, fn) {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, HEADERS);
      // Sent in small pieces, so the client's parser sees split events.
      let i = 0;
      const step = 97;
      const pump = () => {
        if (i >= body.length) return res.end();
        res.write(body.subarray(i, i + step));
        i += step;
        setImmediate(pump);
      };
      pump();
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  try {
    return await fn(`http://127.0.0.1:${server.address().port}/api/chat`);
  } finally {
    server.close();
  }
}

async function rebuild(url, { DefaultChatTransport, readUIMessageStream }) {
  const transport = new DefaultChatTransport({ api: url });
  const stream = await transport.sendMessages({
    chatId: "chat-1",
    messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }],
    abortSignal: undefined,
    trigger: "submit-message",
    messageId: undefined,
  });
  let last;
  const errors = [];
  for await (const message of readUIMessageStream({ stream, onError: (e) => errors.push(e) })) {
    last = message;
  }
  return { message: last, errors };
}

test("cases were generated", () => {
  assert.ok(cases.length >= 60, `only ${cases.length} cases in ${dir}`);
});

test("cases with provider-executed tools rebuild them finished", () => {
  // Recordings and peer fixtures with web search, MCP and code execution.
  let finished = 0;
  for (const file of cases) {
    const expected = JSON.parse(readFileSync(join(dir, file.replace(/\.ai-sdk\.sse$/, ".expected.json")), "utf8"));
    finished += expected.tools.filter((t) => t.providerExecuted && t.state === "output-available").length;
  }
  assert.ok(finished >= 40, `only ${finished} provider-executed tools with their output`);
});

// Every member of `expected` is in `actual`, equal (objects compared member
// by member: the message metadata merges what each chunk carried).
function assertContains(actual, expected, path = "metadata") {
  if (expected !== null && typeof expected === "object" && !Array.isArray(expected)) {
    assert.ok(actual !== null && typeof actual === "object", `${path}: ${JSON.stringify(actual)}`);
    for (const key of Object.keys(expected)) assertContains(actual[key], expected[key], `${path}.${key}`);
  } else {
    assert.deepEqual(actual, expected, path);
  }
}

test("cases with sources and files were generated", () => {
  let sources = 0;
  let files = 0;
  for (const file of cases) {
    const expected = JSON.parse(readFileSync(join(dir, file.replace(/\.ai-sdk\.sse$/, ".expected.json")), "utf8"));
    sources += expected.sources.length;
    files += expected.files.length;
  }
  assert.ok(sources >= 50, `only ${sources} sources`);
  assert.ok(files >= 3, `only ${files} files`);
});

for (const [pkgName, pkg] of PACKAGES) for (const file of cases) {
  const name = file.replace(/\.ai-sdk\.sse$/, "");
  const expected = JSON.parse(readFileSync(join(dir, `${name}.expected.json`), "utf8"));
  // `reset-step` is a chunk of ai 7: ai 6's schema refuses it.
  const skip = expected.ai7Only && pkg === ai6 ? "reset-step is new in ai 7" : false;
  test(`${pkgName} rebuilds the folded parts: ${name}`, { skip }, async () => {
    const body = readFileSync(join(dir, file));
    const { message, errors } = await withServer(body, (url) => rebuild(url, pkg));
    assert.ok(message, "a UI message was rebuilt");
    assert.equal(message.role, "assistant");
    // The finish after the host's finish_step opens no step: no step-start
    // part is left without content after it (only a stream that shows
    // nothing at all, e.g. a provider error, has a step with no parts).
    const kinds = message.parts.map((p) => p.type);
    kinds.forEach((kind, i) => {
      if (kind !== "step-start") return;
      if (i + 1 === kinds.length) assert.equal(i, 0, `empty last step: ${kinds}`);
      else assert.notEqual(kinds[i + 1], "step-start", `empty step: ${kinds}`);
    });
    const texts = message.parts
      .filter((p) => p.type === "text" || p.type === "reasoning")
      .map((p) => ({ type: p.type, text: p.text }));
    assert.deepEqual(texts, expected.texts);
    const tools = message.parts
      .filter((p) => p.type.startsWith("tool-") || p.type === "dynamic-tool")
      .map((p) => {
        const tool = {
          toolCallId: p.toolCallId,
          toolName: p.type === "dynamic-tool" ? p.toolName : p.type.slice("tool-".length),
          state: p.state,
        };
        if (p.state === "output-available") Object.assign(tool, { input: p.input, output: p.output });
        if (p.state === "input-available") tool.input = p.input;
        // Tools the provider ran (web search, MCP, code execution) say so,
        // and carry the provider's output: nothing waits on the host.
        if (p.providerExecuted) tool.providerExecuted = true;
        return tool;
      });
    // A tool part appears when its call's id and name are known (a chat
    // call that streams neither opens at its end): compared by call id.
    const byId = (a, b) => (a.toolCallId < b.toolCallId ? -1 : a.toolCallId > b.toolCallId ? 1 : 0);
    assert.deepEqual(tools.sort(byId), [...expected.tools].sort(byId));
    // The sources the answer cites, each once; the media as files; the
    // provider's usage as the message's metadata.
    const sources = message.parts
      .filter((p) => p.type === "source-url" || p.type === "source-document")
      .map((p) => (p.type === "source-url" ? { type: p.type, url: p.url } : { type: p.type, title: p.title }));
    assert.deepEqual(sources, expected.sources);
    const ids = message.parts.filter((p) => p.type.startsWith("source-")).map((p) => p.sourceId);
    assert.equal(new Set(ids).size, ids.length, "one sourceId per source");
    const files = message.parts.filter((p) => p.type === "file").map((p) => ({ mediaType: p.mediaType, url: p.url }));
    assert.deepEqual(files, expected.files);
    assertContains(message.metadata?.usage ?? null, expected.usage);
    // An aborted turn ends with `abort`, never `finish`.
    const chunkTypes = body
      .toString("utf8")
      .split("\n")
      .filter((l) => l.startsWith("data: {"))
      .map((l) => JSON.parse(l.slice(6)).type);
    assert.equal(chunkTypes.includes("abort"), !!expected.aborted);
    assert.equal(chunkTypes.includes("finish"), !expected.aborted);
    // A provider error in the stream is reported as one, nothing else is.
    const streamErrors = body.toString("utf8").includes('"type":"error"');
    assert.equal(errors.length > 0 || streamErrors, streamErrors, `unexpected errors: ${errors}`);
  });
}
