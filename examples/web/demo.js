// The demo page (index.html): sends a message to the Python example server
// (python/examples/demo_web.py), reads the relayed turn with
// agent-stream.js (the seed's useAgent, without React) and renders the
// stores as they change. `window.demo` exposes the state for the headless
// Chromium test (tests/js/demo_web.test.mjs).
import { createAgentState, readAgentStream } from "./agent-stream.js";

const $ = (id) => document.getElementById(id);
const sessionId = globalThis.crypto?.randomUUID?.() ?? `s-${Date.now()}-${Math.random().toString(16).slice(2)}`;
// Approvals the user answered here (the tool's result comes later).
const answered = new Set();
const demo = { state: createAgentState(), done: false, runs: 0, sessionId };
globalThis.demo = demo;

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key in node) node[key] = value;
    else node.setAttribute(key, value);
  }
  node.append(...children.filter((c) => c !== undefined && c !== null));
  return node;
}

function json(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function renderTool(tool, finished) {
  const args =
    tool.args !== undefined ? json(tool.args) : tool.argsText !== undefined ? tool.argsText : "";
  // A call still running when the turn finished never got a result.
  const left = finished && (tool.status === "called" || tool.status === "input-streaming");
  const status = left ? "no result" : { "input-streaming": "arguments streaming", called: "running", "awaiting-approval": "awaiting approval", done: "done", error: "failed", pending: "pending" }[tool.status] ?? tool.status;
  return el(
    "article",
    { className: `tool ${tool.status}`, dataset: { id: tool.id, name: tool.name ?? "" } },
    el(
      "header",
      {},
      el("strong", { className: "tool-name", textContent: tool.name ?? "…" }),
      tool.providerExecuted ? el("span", { className: "badge", textContent: "run by the provider" }) : null,
      el("span", { className: "status", textContent: status }),
      tool.duration !== undefined ? el("span", { className: "duration", textContent: `${tool.duration} ms` }) : null,
    ),
    el("div", { className: "label", textContent: "arguments" }),
    el("pre", { className: "args", textContent: args }),
    tool.result !== undefined ? el("div", { className: "label", textContent: "result" }) : null,
    tool.result !== undefined ? el("pre", { className: "result", textContent: json(tool.result) }) : null,
  );
}

async function answer(approval, approved) {
  answered.add(approval.approvalId);
  render();
  const response = await fetch("/api/approve", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ sessionId, approvalId: approval.approvalId, approved }),
  });
  if (!response.ok) demo.state.logs.push({ level: "error", message: `approval ${approval.approvalId}: HTTP ${response.status}` });
  render();
}

function renderApproval(approval) {
  const waiting = !answered.has(approval.approvalId);
  return el(
    "div",
    { className: "approval", dataset: { approvalId: approval.approvalId } },
    el("p", { className: "message", textContent: approval.message }),
    el("pre", { className: "input", textContent: json(approval.input) }),
    el("button", { className: "approve", textContent: "Approve", disabled: !waiting, onclick: () => answer(approval, true) }),
    el("button", { className: "deny", textContent: "Deny", disabled: !waiting, onclick: () => answer(approval, false) }),
  );
}

function renderFinish(finish) {
  const { promptTokens, completionTokens, totalTokens } = finish.usage;
  const steps = `${finish.stepCount} step${finish.stepCount === 1 ? "" : "s"}`;
  return `Finished: ${finish.finishReason} · ${steps} · ${totalTokens} tokens (${promptTokens} in, ${completionTokens} out)`;
}

let scheduled = false;
function render() {
  scheduled = false;
  const state = demo.state;
  const text = state.messages[state.messages.length - 1]?.content ?? "";
  $("answer").hidden = text === "" && !state.streaming;
  $("answer").textContent = text;
  $("answer").classList.toggle("streaming", state.streaming);
  $("reasoning").hidden = state.reasoning === "";
  $("reasoning").querySelector("pre").textContent = state.reasoning;
  const waiting = state.approvals.filter((a) => {
    const tool = state.tools.find((t) => t.id === a.toolCallId);
    return tool?.result === undefined;
  });
  // Kept node for node while they wait, so a click never lands on a node
  // that a re-render replaced.
  const shownApprovals = new Map([...$("approvals").children].map((n) => [n.dataset.approvalId, n]));
  $("approvals").replaceChildren(
    ...waiting.map((a) => {
      const node = shownApprovals.get(a.approvalId) ?? renderApproval(a);
      for (const button of node.querySelectorAll("button")) button.disabled = answered.has(a.approvalId);
      return node;
    }),
  );
  $("tools").replaceChildren(...state.tools.map((tool) => renderTool(tool, state.finish !== null)));
  $("log").replaceChildren(
    ...state.logs.map((entry) =>
      el(
        "li",
        { className: entry.level },
        el("span", { className: "level", textContent: entry.level }),
        el("span", { className: "text", textContent: entry.message }),
        entry.metadata !== undefined ? el("code", { textContent: JSON.stringify(entry.metadata) }) : null,
      ),
    ),
  );
  $("finish").hidden = !state.finish;
  if (state.finish) {
    $("finish").textContent = renderFinish(state.finish);
    $("finish").className = state.finish.finishReason;
  }
}

function schedule() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(render);
}

async function send(message) {
  demo.state = createAgentState();
  demo.done = false;
  answered.clear();
  $("user").hidden = false;
  $("user").textContent = message;
  $("send").disabled = true;
  try {
    const response = await fetch("/api/agent", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ sessionId, message }),
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    await readAgentStream(response.body, demo.state, schedule);
  } catch (error) {
    demo.state.logs.push({ level: "error", message: String(error.message ?? error) });
  } finally {
    $("send").disabled = false;
    demo.runs += 1;
    demo.done = true;
    render();
  }
}

$("ask").addEventListener("submit", (event) => {
  event.preventDefault();
  send($("message").value);
});
render();
