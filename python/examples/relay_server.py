"""A chat endpoint for a web page: it streams an LLM provider's answer to the
browser as the Vercel AI SDK UI message stream (what ``useChat`` reads),
running the model's tool calls between turns, with ``ssefold.Relay``.

Two Starlette apps, each served by uvicorn on loopback:

- ``provider_app(bodies)``: a stand-in for the Anthropic Messages API that
  answers each ``POST /v1/messages`` with the next recorded SSE body (the
  repository's fixtures), in small chunks, and keeps the requests it got.
- ``chat_app(provider_url, tools)``: ``POST /api/chat`` with ``{"messages":
  [...]}`` calls the provider and runs the turn with ``ssefold.run_turn``
  (the tool scheduler: each tool starts as soon as its arguments are
  complete, while the answer still streams; results come back in call
  order), pushes every stream event through the relay to the browser, sends
  each tool's result to the browser as it finishes (with its duration) and
  all of them back to the model, and loops until the model stops asking for
  tools. Tools the provider runs itself (web search) are relayed with their
  results, not run here. Idle gaps get keep-alive comments by the relay's
  clock rule.

Run ``python python/examples/relay_server.py`` and read the stream with
``curl -N -X POST http://127.0.0.1:8000/api/chat -d '{"messages": []}'``.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import time
from typing import Any, AsyncIterator, Awaitable, Callable, Collection, Dict, List, Optional, Tuple, Union

import httpx
import ssefold
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

Tool = Callable[..., Awaitable[Any]]

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "anthropic"
# Turn 1 asks for two tools (and shows a server-side web search); turn 2 answers.
RECORDED_TURNS = [FIXTURES / "interleaved_tools.sse", FIXTURES / "thinking_text_citations.sse"]
MAX_TURNS = 8
# The relay's timer: tool input it holds back (coalescing) is due after
# tool_input_coalesce_ms (50 ms), a keep-alive comment after 15 s of silence.
KEEP_ALIVE_TICK_S = 0.05


# ---- the fake provider ------------------------------------------------------


def provider_app(bodies: List[bytes], chunk: int = 97, delay_s: float = 0.0, by_turn: bool = False) -> Starlette:
    """Answers the n-th request with ``bodies[n]`` (the last one again after
    that), ``chunk`` bytes at a time, ``delay_s`` apart; ``by_turn``: a
    request whose messages hold k assistant turns gets ``bodies[k]`` (each
    new chat starts over). ``app.state.requests`` keeps the JSON bodies
    received, ``app.state.ended`` when each body's last byte was sent
    (``time.monotonic()``)."""
    requests: List[Dict[str, Any]] = []
    ended: List[float] = []

    async def messages(request: Request) -> Response:
        requests.append(await request.json())
        if by_turn:
            turn = sum(1 for m in requests[-1].get("messages", []) if m.get("role") == "assistant")
        else:
            turn = len(requests) - 1
        body = bodies[min(turn, len(bodies) - 1)]

        async def chunks() -> AsyncIterator[bytes]:
            for i in range(0, len(body), chunk):
                yield body[i : i + chunk]
                await asyncio.sleep(delay_s)
            ended.append(time.monotonic())

        return StreamingResponse(chunks(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/messages", messages, methods=["POST"])])
    app.state.requests = requests
    app.state.ended = ended
    return app


# ---- the tools ----------------------------------------------------------------


async def get_weather(city: str, days: Optional[List[int]] = None) -> Dict[str, Any]:
    await asyncio.sleep(0.01)
    return {"city": city, "forecast": [{"day": d, "temp_c": 18 + d} for d in days or [0]]}


async def get_time(tz: str) -> Dict[str, Any]:
    await asyncio.sleep(0.01)
    return {"tz": tz, "time": "12:00"}


TOOLS: Dict[str, Tool] = {"get_weather": get_weather, "get_time": get_time}


Outcome = Tuple[Any, bool, int]


def scheduled(fn: Tool, outcomes: Dict[str, Outcome], needs_approval: bool = False) -> ssefold.Tool[Any]:
    """``fn`` (keyword arguments: the call's input) as a tool for
    ``ssefold.run_turn``; its output, failure and duration in milliseconds
    are kept in ``outcomes`` by call id, for the browser. ``needs_approval``:
    each call waits for the user's answer first."""

    async def run(call: ssefold.ToolCall) -> Any:
        started = time.monotonic()
        try:
            output = await fn(**(call.input if isinstance(call.input, dict) else {}))
        except Exception as exc:  # the model sees the failure as the tool's result
            text = f"{type(exc).__name__}: {exc}"
            outcomes[call.id] = (text, True, int((time.monotonic() - started) * 1000))
            raise RuntimeError(text) from exc
        outcomes[call.id] = (output, False, int((time.monotonic() - started) * 1000))
        return output

    return ssefold.Tool(run, needs_approval=needs_approval)


# ---- the chat endpoint --------------------------------------------------------


async def relay_turns(
    client: httpx.AsyncClient,
    provider_url: str,
    messages: List[Dict[str, Any]],
    relay: ssefold.Relay,
    tools: Dict[str, Tool],
    approvals: Optional["Approvals"] = None,
) -> AsyncIterator[bytes]:
    """The browser bytes of the whole agent loop. With ``approvals``, the
    calls of the tools it names wait for the user: the relay asks the
    browser (``approval-required`` / ``tool-approval-request``) and the
    browser's answer (``Approvals.answer``) runs or denies the call."""
    for _ in range(MAX_TURNS):
        outcomes: Dict[str, Outcome] = {}
        never_ran: List[str] = []  # unknown tools, invalid arguments: the scheduler's own results
        request = {"model": "claude-test", "max_tokens": 1024, "stream": True, "messages": messages}
        async with client.stream("POST", provider_url, json=request) as response:
            response.raise_for_status()
            gated = approvals.tools if approvals is not None else ()
            turn = ssefold.run_turn(
                response.aiter_raw(),
                {name: scheduled(fn, outcomes, name in gated) for name, fn in tools.items()},
                provider="anthropic",
                approve=approvals.approve if approvals is not None else None,
                approval_timeout_ms=approvals.timeout_ms if approvals is not None else None,
            )
            try:
                async for event in turn:
                    if isinstance(event, ssefold.ToolExecutionEvent):
                        if event.type == "tool_approval_requested" and approvals is not None:
                            yield approvals.ask(relay, event)
                        if event.type == "tool_execution_finished":
                            if event.call_id in outcomes:
                                output, is_error, ms = outcomes.pop(event.call_id)
                                yield relay.tool_result(event.call_id, output, is_error=is_error, duration_ms=ms)
                            else:
                                never_ran.append(event.call_id)
                        continue
                    out = relay.push(event)
                    if out:
                        yield out
                result = await turn
            except ssefold.Error as exc:
                for event in getattr(exc, "events", []):
                    yield relay.push(event)
                if not isinstance(exc, ssefold.ProviderError):  # a provider error was relayed as its event
                    yield relay.error(str(exc))
                break
        for r in result.results:
            if r.call_id in never_ran:
                yield relay.tool_result(r.call_id, r.output, is_error=r.is_error)
        if result.timings is not None:
            # The turn's timings, for the page (useChat: the message's metadata).
            yield relay.message_metadata({"timings": dict(result.timings)})
        if not result.results or result.aborted or result.next is None:
            break
        # The assistant turn and the tool results, as the provider takes them back.
        messages = messages + result.next.append
    yield relay.finish()


class Approvals:
    """The user's answers to one chat's approval requests: the tools in
    ``tools`` wait for them. ``ask`` relays a request to the browser;
    ``answer`` (the browser's POST) settles it; ``approve`` is the turn's
    callback, waiting for that answer."""

    def __init__(self, tools: Collection[str], timeout_ms: Optional[int] = 300_000) -> None:
        self.tools = frozenset(tools)
        self.timeout_ms = timeout_ms  # unanswered this long: denied
        self._answers: Dict[str, "asyncio.Future[Union[bool, str]]"] = {}  # by call id
        self._calls: Dict[str, str] = {}  # approval id -> call id

    def _answer_of(self, call_id: str) -> "asyncio.Future[Union[bool, str]]":
        if call_id not in self._answers:
            self._answers[call_id] = asyncio.get_running_loop().create_future()
        return self._answers[call_id]

    def ask(self, relay: ssefold.Relay, event: ssefold.ToolExecutionEvent) -> bytes:
        """The browser's request for ``event`` (``tool_approval_requested``)."""
        assert event.approval_id is not None
        self._calls[event.approval_id] = event.call_id
        self._answer_of(event.call_id)
        name = event.name or ""
        args = json.loads(event.arguments or "{}")
        shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in args.items()) if isinstance(args, dict) else json.dumps(args)
        message = f"Allow {name}({shown})?"
        return relay.approval_required(event.approval_id, event.call_id, name, args, message=message)

    def answer(self, approval_id: str, approved: bool, reason: Optional[str] = None) -> bool:
        """Settles a request: whether it was one still waiting."""
        call_id = self._calls.get(approval_id)
        if call_id is None:
            return False
        answer = self._answer_of(call_id)
        if answer.done():
            return False
        answer.set_result(True if approved else (reason or False))
        return True

    async def approve(self, call: ssefold.ToolCall) -> Union[bool, str]:
        return await self._answer_of(call.id)


async def with_keep_alive(relay: ssefold.Relay, source: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``source``'s bytes, plus what the relay's timer gives: the tool input
    it held back once due (``Relay.tick``, checked whenever every earlier
    output was sent, so that nothing is reordered) and a keep-alive comment
    when one is due (checked every ``KEEP_ALIVE_TICK_S`` of silence)."""
    queue: asyncio.Queue[Optional[bytes]] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for data in source:
                await queue.put(data)
        finally:
            await queue.put(None)

    task = asyncio.ensure_future(pump())
    try:
        while True:
            try:
                data = await asyncio.wait_for(queue.get(), KEEP_ALIVE_TICK_S)
            except asyncio.TimeoutError:
                now = int(time.monotonic() * 1000)
                data = relay.tick(now) + relay.keep_alive(now)
            if data is None:
                break
            if data:
                yield data
            if queue.empty():
                # Every output so far is sent: held tool input may follow.
                held = relay.tick(int(time.monotonic() * 1000))
                if held:
                    yield held
        await task  # re-raises what the loop raised
    finally:
        task.cancel()


def chat_app(provider_url: str, tools: Optional[Dict[str, Tool]] = None) -> Starlette:
    """``POST /api/chat``: the agent loop relayed as the UI message stream."""
    tools = TOOLS if tools is None else tools

    async def chat(request: Request) -> Response:
        try:
            body = await request.json()
            messages = body.get("messages") or [{"role": "user", "content": "Weather and time in Paris?"}]
        except (ValueError, AttributeError):
            return JSONResponse({"error": "expected a JSON object with messages"}, status_code=400)
        relay = ssefold.Relay("ai-sdk", provider=None)

        async def body_bytes() -> AsyncIterator[bytes]:
            async with httpx.AsyncClient(timeout=30) as client:
                async for data in with_keep_alive(relay, relay_turns(client, provider_url, messages, relay, tools)):
                    yield data

        return StreamingResponse(body_bytes(), headers=dict(relay.headers()))

    return Starlette(routes=[Route("/api/chat", chat, methods=["POST"])])


async def main(port: int = 8000) -> None:
    import uvicorn

    provider = uvicorn.Server(uvicorn.Config(provider_app([p.read_bytes() for p in RECORDED_TURNS]),
                                             host="127.0.0.1", port=port + 1, log_level="warning"))
    chat = uvicorn.Server(uvicorn.Config(chat_app(f"http://127.0.0.1:{port + 1}/v1/messages"),
                                         host="127.0.0.1", port=port))
    await asyncio.gather(provider.serve(), chat.serve())


if __name__ == "__main__":
    asyncio.run(main())
