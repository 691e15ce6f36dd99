// The browser's time to take a relayed tool call whose arguments are 320 KB
// of JSON, without coalescing and with the relay's default
// (tool_input_coalesce_bytes = 4 KiB): headless Chromium runs the real `ai`
// package (bundled for the page by esbuild) the way useChat reads a
// response: DefaultChatTransport's fetch and SSE parser, then
// readUIMessageStream, which parses the call's whole input text again on
// every tool-input-delta. The streams come from
// `cargo run --example bench_tool_input -- DIR` (BENCH_DIR=DIR); the server
// sends each whole at once, so the time is the page's own work.
//
//   make js-bench        (or: BENCH_DIR=DIR node bench_tool_input.mjs)
//
// Prints the median of RUNS runs (default 3, alternating) of each stream
// and their ratio. No assertions: a measurement, not a test.
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { launchChromium } from "./chromium.mjs";

const dir = process.env.BENCH_DIR;
if (!dir) throw new Error("BENCH_DIR is not set (make js-bench sets it)");
const runs = Number(process.env.RUNS ?? 3);
const streams = { off: readFileSync(join(dir, "off.sse")), default: readFileSync(join(dir, "default.sse")) };

const bundle = await build({
  stdin: { contents: 'export { DefaultChatTransport, readUIMessageStream } from "ai";', resolveDir: process.cwd() },
  bundle: true,
  format: "esm",
  platform: "browser",
  minify: true,
  write: false,
});
const aiVersion = JSON.parse(readFileSync("node_modules/ai/package.json", "utf8")).version;

const server = createServer((req, res) => {
  req.resume();
  const name = req.url.replace(/^\/(api\/)?/, "").replace(/\.sse$/, "");
  if (req.url === "/") {
    res.writeHead(200, { "content-type": "text/html" });
    res.end('<!doctype html><script type="module">import * as ai from "/ai.js"; window.ai = ai;</script>');
  } else if (req.url === "/ai.js") {
    res.writeHead(200, { "content-type": "text/javascript" });
    res.end(bundle.outputFiles[0].contents);
  } else if (streams[name]) {
    req.on("end", () => {
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "x-vercel-ai-ui-message-stream": "v1",
      });
      res.end(streams[name]);
    });
  } else {
    res.writeHead(404).end();
  }
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}`;

const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.goto(`${base}/`);
  await page.waitForFunction(() => window.ai !== undefined);
  const measure = (name) =>
    page.evaluate(async (api) => {
      const t0 = performance.now();
      const transport = new window.ai.DefaultChatTransport({ api });
      const stream = await transport.sendMessages({
        chatId: "bench",
        messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "write the file" }] }],
        abortSignal: undefined,
        trigger: "submit-message",
        messageId: undefined,
      });
      let last;
      let updates = 0;
      for await (const message of window.ai.readUIMessageStream({ stream })) {
        last = message;
        updates++;
      }
      const ms = performance.now() - t0;
      const tool = last.parts.find((p) => p.type === "tool-write_file");
      return { ms, updates, state: tool.state, content: tool.input.content.length };
    }, `${base}/api/${name}`);
  const results = { off: [], default: [] };
  for (let i = 0; i < runs; i++) {
    for (const name of i % 2 ? ["default", "off"] : ["off", "default"]) results[name].push(await measure(name));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const deltas = (buf) => buf.toString("utf8").split('"type":"tool-input-delta"').length - 1;
  const version = await browser.version();
  console.log(`ai ${aiVersion}, ${version}, ${runs} runs each (median)`);
  console.log("| stream | tool-input-delta chunks | relayed bytes | browser time (ms) |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const name of ["off", "default"]) {
    const r = results[name];
    if (new Set(r.map((x) => `${x.state}/${x.content}`)).size !== 1) throw new Error(`${name}: runs disagree`);
    const ms = median(r.map((x) => x.ms));
    console.log(`| ${name} | ${deltas(streams[name])} | ${streams[name].length} | ${ms.toFixed(0)} |`);
  }
  if (results.off[0].content !== results.default[0].content) throw new Error("the two streams rebuild different inputs");
  const ratio = median(results.off.map((x) => x.ms)) / median(results.default.map((x) => x.ms));
  console.log(`without / with coalescing: ${ratio.toFixed(1)}x (input: ${results.off[0].content} characters, state ${results.off[0].state})`);
} finally {
  await browser.close();
  server.close();
}
