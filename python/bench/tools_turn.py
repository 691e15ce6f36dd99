"""Tool execution while streaming vs after the answer: time from the first
byte of the response to the last tool result.

Recorded parallel-tool-call streams (Anthropic, OpenAI chat) are replayed
one SSE event per chunk with a fixed delay (the recordings carry no
timestamps), with tools that sleep a simulated duration:

* ``streaming``: ``ssefold.run_turn`` starts each tool when its call is
  complete;
* ``after, parallel``: fold the whole answer, then run the tools together
  (asyncio.gather);
* ``after, sequential``: fold the whole answer, then run them one by one
  (what a naive agent loop does).

Run: ``.venv/bin/python python/bench/tools_turn.py [--delay 0.03] [--reps 5]``.
Prints a Markdown table (medians of the repetitions).
"""

from __future__ import annotations

import argparse
import asyncio
import pathlib
import statistics
import time
from typing import Any, AsyncIterator, Dict, List, Tuple

import ssefold

ROOT = pathlib.Path(__file__).resolve().parents[2]
RECORDINGS = {
    "anthropic": ROOT
    / "tests/recordings/anthropic/magentic"
    / "chat_model__test_anthropic_chat_model__test_anthropic_chat_model_complete_parallel_function_call.sse",
    "openai_chat": ROOT
    / "tests/recordings/openai_chat/openllmetry"
    / "opentelemetry-instrumentation-openai__tests__traces__test_functions__"
    "test_open_ai_function_calls_tools_streaming_parallel__i0.sse",
}


def sse_events(path: pathlib.Path) -> List[bytes]:
    data = path.read_bytes().replace(b"\r\n", b"\n")
    return [part + b"\n\n" for part in data.split(b"\n\n") if part.strip()]


class Replay:
    """Yields one event per chunk, ``delay`` apart; remembers the first byte's time."""

    def __init__(self, chunks: List[bytes], delay: float) -> None:
        self.chunks, self.delay = chunks, delay
        self.first_byte = 0.0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for i, chunk in enumerate(self.chunks):
            await asyncio.sleep(self.delay)
            if i == 0:
                self.first_byte = time.perf_counter()
            yield chunk


def tools_for(names: List[str], seconds: float, start: str = "auto") -> Dict[str, Any]:
    async def tool(call: ssefold.ToolCall) -> str:
        await asyncio.sleep(seconds)
        return "ok"

    return {name: ssefold.Tool(tool, start=start) for name in names}


async def streaming(chunks: List[bytes], provider: str, tools: Dict[str, Any], delay: float) -> float:
    replay = Replay(chunks, delay)
    result = await ssefold.run_turn(replay.__aiter__(), tools, provider=provider)
    assert result.results and all(r.kind == "ran" for r in result.results)
    return time.perf_counter() - replay.first_byte


def calls_of(message: Dict[str, Any], provider: str) -> List[Tuple[str, str]]:
    if provider == "anthropic":
        return [(b["id"], b["name"]) for b in message["content"] if b["type"] == "tool_use"]
    return [(c["id"], c["function"]["name"]) for c in message["choices"][0]["message"]["tool_calls"]]


async def after_the_end(
    chunks: List[bytes], provider: str, tools: Dict[str, Any], delay: float, parallel: bool
) -> float:
    replay = Replay(chunks, delay)
    stream = ssefold.Stream(provider)
    async for chunk in replay:
        stream.feed(chunk)
    stream.finish()
    assert stream.message is not None
    calls = [ssefold.ToolCall(i, name, {}) for i, name in calls_of(stream.message, provider)]
    if parallel:
        await asyncio.gather(*(tools[c.name].fn(c) for c in calls))
    else:
        for c in calls:
            await tools[c.name].fn(c)
    return time.perf_counter() - replay.first_byte


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay", type=float, default=0.03, help="seconds between SSE events (default 0.03)")
    parser.add_argument("--tool-seconds", type=float, nargs="+", default=[0.1, 0.5, 2.0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument(
        "--start",
        choices=["auto", "ready", "turn_end"],
        default="auto",
        help="when ssefold starts each tool (auto: as soon as ready for these tools, which are not exclusive; "
        "turn_end: the side-effect rule, only after a normal or tool-use stop)",
    )
    args = parser.parse_args()
    print(
        f"replay: one SSE event per chunk, {args.delay * 1000:.0f} ms apart; tools start={args.start}; "
        f"medians of {args.reps} runs (ms)\n"
    )
    print("| stream | events | tool calls | tool time | streaming | after, parallel | after, sequential | saving vs parallel | saving vs sequential |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for provider, path in RECORDINGS.items():
        chunks = sse_events(path)
        calls = calls_of(_message(provider, chunks), provider)
        names = sorted({name for _, name in calls})
        for seconds in args.tool_seconds:
            tools = tools_for(names, seconds, args.start)
            runs: Dict[str, List[float]] = {"streaming": [], "parallel": [], "sequential": []}
            for _ in range(args.reps):  # interleaved, so load drifts hit all three alike
                runs["streaming"].append(asyncio.run(streaming(chunks, provider, tools, args.delay)))
                runs["parallel"].append(asyncio.run(after_the_end(chunks, provider, tools, args.delay, True)))
                runs["sequential"].append(asyncio.run(after_the_end(chunks, provider, tools, args.delay, False)))
            s, p, q = (statistics.median(runs[k]) * 1000 for k in ("streaming", "parallel", "sequential"))
            print(
                f"| {provider} | {len(chunks)} | {len(calls)} | {seconds * 1000:.0f} | {s:.0f} | {p:.0f} | {q:.0f} "
                f"| {p - s:.0f} ({(p - s) / p:.0%}) | {q - s:.0f} ({(q - s) / q:.0%}) |"
            )


def _message(provider: str, chunks: List[bytes]) -> Dict[str, Any]:
    stream = ssefold.Stream(provider)
    for chunk in chunks:
        stream.feed(chunk)
    stream.finish()
    assert stream.message is not None
    return stream.message


if __name__ == "__main__":
    main()
