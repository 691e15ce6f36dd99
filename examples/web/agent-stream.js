// A browser-side reader of ssefold's `catalog` relay format, written the way
// the CMS agent design's frontend is (its `useAgent` hook: fetch the stream,
// parse the SSE events, update the chat, log and approval stores), without
// React, so that the same file runs in a page, in headless Chromium and in
// Node (tests/js/catalog_frontend.test.mjs). Plain JavaScript, no build step.
//
// The store updates are the seed's, event for event:
//   text-delta        the last assistant message's content += data.delta
//                     (a `snapshot`, the full text so far, is taken whole)
//   tool-call         log "Calling NAME..." with { args }
//   tool-result       log "NAME completed" with { result }
//   approval-required the pending approval
//   log               the log entry itself
//   finish            log "Completed" with the finish
//   error             log level "error" with data.error
// and, beside them, what a page shows that the seed's stores do not keep:
// the tool calls by id (arguments, result, duration), the reasoning text
// (`reasoning-delta`, never part of the answer), a call's argument text as
// it streams (`tool-input-delta`), the steps, the finish and the errors. `turn-reset` (the answer started over) drops the text,
// reasoning and tool calls of the step in progress.

/** Every event name the catalog format sends (ssefold's
 * `relay::CATALOG_EVENT_NAMES`): an EventSource needs a listener for each. */
export const CATALOG_EVENT_NAMES = [
  "text-delta",
  "tool-call",
  "tool-result",
  "approval-required",
  "step-completed",
  "log",
  "finish",
  "error",
  "reasoning-delta",
  "choice-delta",
  "turn-reset",
  "tool-input-delta",
];

/**
 * Splits SSE text into complete events: `{ parsed: [{ type, data, id }],
 * remaining }`, where `remaining` is the start of an event not yet ended by
 * its blank line (feed it back with the next chunk). Lines end in LF, CRLF
 * or CR; `data:` lines of one event are joined with "\n" and parsed as JSON
 * (kept as text when they are not JSON); comments (`: keep-alive`) and
 * events without data are skipped, as a browser's EventSource does.
 */
export function parseSSEBuffer(buffer) {
  const parsed = [];
  let start = 0;
  for (;;) {
    const end = eventEnd(buffer, start);
    if (end < 0) break;
    const event = parseEvent(buffer.slice(start, end.at));
    if (event) parsed.push(event);
    start = end.next;
  }
  return { parsed, remaining: buffer.slice(start) };
}

/** The end of the event that starts at `from`: where its blank line begins
 * (`at`) and where the next event starts (`next`), or -1 when the buffer
 * does not hold the blank line yet. A CR at the very end may be the first
 * half of a CRLF: the event is not taken until the next chunk says. */
function eventEnd(buffer, from) {
  const re = /(\r\n|\r|\n)(\r\n|\r|\n)/g;
  re.lastIndex = from;
  for (;;) {
    const m = re.exec(buffer);
    if (!m) return -1;
    const next = m.index + m[0].length;
    if (buffer[next - 1] === "\r" && next === buffer.length) return -1;
    // "\r\n" + "\n" matched as "\r" + "\n": not a blank line.
    if (m[1] === "\r" && m[2] === "\n") {
      re.lastIndex = m.index + 1;
      continue;
    }
    return { at: m.index, next };
  }
}

function parseEvent(block) {
  let type = "message";
  let id;
  const data = [];
  for (const line of block.split(/\r\n|\r|\n/)) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") type = value;
    else if (field === "data") data.push(value);
    else if (field === "id") id = value;
  }
  if (data.length === 0) return null;
  const text = data.join("\n");
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    value = text;
  }
  return { type, data: value, id };
}

/** The stores of one chat: what the seed's chat, log and approval stores
 * hold, and what a page shows beside them. */
export function createAgentState() {
  return {
    messages: [],
    logs: [],
    pendingApproval: null,
    approvals: [],
    reasoning: "",
    tools: [],
    steps: [],
    finish: null,
    errors: [],
    lastEventId: null,
    streaming: false,
    // The tool calls shown since the step began (dropped by `turn-reset`).
    stepToolStart: 0,
  };
}

function lastAssistant(state) {
  const last = state.messages[state.messages.length - 1];
  if (last?.role === "assistant") return last;
  const message = { role: "assistant", content: "" };
  state.messages.push(message);
  return message;
}

function addLog(state, entry) {
  state.logs.push({ ...entry, seq: state.logs.length + 1 });
}

function toolById(state, id) {
  let tool = state.tools.find((t) => t.id === id);
  if (!tool) {
    tool = { id, name: undefined, args: undefined, status: "pending" };
    state.tools.push(tool);
  }
  return tool;
}

/** Applies one catalog event (`{ type, data, id }`) to the stores: the
 * seed's `handleEvent`, and the extras in the file's comment. Unknown
 * events are ignored, as the seed's switch does. */
export function handleEvent(state, event) {
  const data = event.data ?? {};
  if (event.id !== undefined) state.lastEventId = event.id;
  switch (event.type) {
    case "text-delta": {
      const message = lastAssistant(state);
      // `snapshot` is the full text so far (this delta included).
      if (typeof data.snapshot === "string") message.content = data.snapshot;
      else message.content += data.delta;
      break;
    }
    case "reasoning-delta":
      state.reasoning += data.delta;
      break;
    case "turn-reset":
      lastAssistant(state).content = "";
      state.reasoning = "";
      state.tools.splice(state.stepToolStart);
      break;
    case "tool-input-delta": {
      // Not in the seed: a call's argument text as it streams.
      const tool = toolById(state, data.id);
      if (data.name !== undefined) tool.name = data.name;
      tool.argsText = (tool.argsText ?? "") + data.delta;
      if (tool.status === "pending") tool.status = "input-streaming";
      break;
    }
    case "tool-call": {
      addLog(state, { level: "info", message: `Calling ${data.name}...`, metadata: { args: data.args } });
      const tool = toolById(state, data.id);
      Object.assign(tool, { name: data.name, args: data.args, status: "called" });
      if (data.providerExecuted) tool.providerExecuted = true;
      break;
    }
    case "tool-result": {
      addLog(state, { level: "info", message: `${data.name} completed`, metadata: { result: data.result } });
      const tool = toolById(state, data.id);
      Object.assign(tool, { name: tool.name ?? data.name, result: data.result, status: data.isError ? "error" : "done" });
      if (data.duration !== undefined) tool.duration = data.duration;
      if (state.pendingApproval?.toolCallId === data.id) state.pendingApproval = null;
      break;
    }
    case "approval-required":
      state.pendingApproval = data;
      state.approvals.push(data);
      if (data.toolCallId) toolById(state, data.toolCallId).status = "awaiting-approval";
      break;
    case "step-completed":
      state.steps.push(data);
      state.stepToolStart = state.tools.length;
      break;
    case "log":
      addLog(state, data);
      break;
    case "finish":
      state.finish = data;
      addLog(state, { level: "info", message: "Completed", metadata: data });
      break;
    case "error":
      state.errors.push(data);
      addLog(state, { level: "error", message: data.error });
      break;
    default:
      break;
  }
  return state;
}

/**
 * Reads a catalog stream (a fetch Response's `body`, or any async iterable
 * of Uint8Array chunks) into `state`, as the seed's `useAgent` does:
 * an empty assistant message first, then every event through
 * `handleEvent`; `onEvent(event, state)` after each (a page re-renders
 * there). Resolves with the state when the stream ends.
 */
export async function readAgentStream(body, state = createAgentState(), onEvent = () => {}) {
  state.messages.push({ role: "assistant", content: "" });
  state.streaming = true;
  const decoder = new TextDecoder();
  let buffer = "";
  const take = () => {
    const events = parseSSEBuffer(buffer);
    buffer = events.remaining;
    for (const event of events.parsed) {
      handleEvent(state, event);
      onEvent(event, state);
    }
  };
  try {
    if (typeof body.getReader === "function") {
      const reader = body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        take();
      }
    } else {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        take();
      }
    }
    buffer += decoder.decode();
    // An event cut by the end of the stream is not dispatched (WHATWG):
    // only a complete one (its blank line was the last bytes) counts.
    take();
  } finally {
    state.streaming = false;
  }
  return state;
}
