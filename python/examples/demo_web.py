"""A page a person can look at: a chat whose agent turns stream to the browser
in ssefold's ``catalog`` format (the CMS agent design's event catalog),
rendered as they stream by ``examples/web/index.html`` (plain HTML and
JavaScript, no build step): the answer, the reasoning folded away, each tool
call with its arguments filling in and its result, an approval with Approve /
Deny buttons that reach this server, the log and the finish.

No API key: the model is a stand-in that answers with recorded Anthropic
streams (``relay_server.provider_app``: turn 1 asks for ``get_weather`` and
``get_time`` beside a server-side web search, turn 2 thinks and answers with
citations). ``get_weather`` needs the user's approval.

Run ``make demo-web`` (or ``python python/examples/demo_web.py [PORT]``) and
open http://127.0.0.1:8000/.

Routes:

- ``GET /``: the page; ``GET /web/<file>``: its scripts (``examples/web``).
- ``POST /api/agent`` with ``{"sessionId", "message"}`` (as the seed's
  ``useAgent`` sends): the agent loop relayed as catalog events, with the
  catalog's headers and keep-alive comments.
- ``POST /api/approve`` with ``{"sessionId", "approvalId", "approved",
  "reason"?}``: the user's answer; 404 when no such request waits.
"""

from __future__ import annotations

import asyncio
import pathlib
import sys
import time
import uuid
from typing import AsyncIterator, Dict, Optional

import httpx
import ssefold
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from relay_server import (  # noqa: E402  (the example beside this one)
    RECORDED_TURNS,
    ROOT,
    TOOLS,
    Approvals,
    provider_app,
    relay_turns,
    with_keep_alive,
)

WEB = ROOT / "examples" / "web"
PAGE_FILES = {"agent-stream.js", "demo.js", "demo.css"}
APPROVAL_TOOLS = ("get_weather",)


def demo_app(provider_url: str) -> Starlette:
    """The page, its scripts, and the two endpoints (see the module docs)."""
    sessions: Dict[str, Approvals] = {}

    async def page(request: Request) -> Response:
        return FileResponse(WEB / "index.html", media_type="text/html")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in PAGE_FILES:
            return Response(status_code=404)
        media = "text/javascript" if name.endswith(".js") else "text/css"
        return FileResponse(WEB / name, media_type=media)

    async def agent(request: Request) -> Response:
        try:
            body = await request.json()
            message = str(body.get("message") or "What's the weather and the time in Paris?")
            session = str(body.get("sessionId") or uuid.uuid4())
        except (ValueError, AttributeError):
            return JSONResponse({"error": "expected a JSON object with sessionId and message"}, status_code=400)
        relay = ssefold.Relay("catalog", provider=None)
        approvals = sessions[session] = Approvals(APPROVAL_TOOLS)
        trace = f"trace-{uuid.uuid4().hex[:12]}"
        messages = [{"role": "user", "content": message}]

        async def turns(client: httpx.AsyncClient) -> AsyncIterator[bytes]:
            now = int(time.time() * 1000)
            yield relay.log("info", "Turn started", metadata={"sessionId": session}, timestamp=now, trace_id=trace)
            async for data in relay_turns(client, provider_url, messages, relay, TOOLS, approvals):
                yield data

        async def body_bytes() -> AsyncIterator[bytes]:
            try:
                async with httpx.AsyncClient(timeout=30) as client:
                    async for data in with_keep_alive(relay, turns(client)):
                        yield data
            finally:
                sessions.pop(session, None)

        return StreamingResponse(body_bytes(), headers=dict(relay.headers()))

    async def approve(request: Request) -> Response:
        try:
            body = await request.json()
            approvals = sessions.get(str(body["sessionId"]))
            waiting = approvals is not None and approvals.answer(
                str(body["approvalId"]), bool(body["approved"]), body.get("reason")
            )
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "expected sessionId, approvalId and approved"}, status_code=400)
        if not waiting:
            return JSONResponse({"error": "no such approval is waiting"}, status_code=404)
        return JSONResponse({"ok": True})

    return Starlette(
        routes=[
            Route("/", page),
            Route("/web/{name}", static),
            Route("/api/agent", agent, methods=["POST"]),
            Route("/api/approve", approve, methods=["POST"]),
        ]
    )


async def main(port: int = 8000, delay_s: float = 0.03) -> None:
    """Serves the page on ``port`` and the recorded model on ``port + 1``;
    the model's chunks come ``delay_s`` apart, so the page visibly streams."""
    import uvicorn

    bodies = [p.read_bytes() for p in RECORDED_TURNS]
    provider = uvicorn.Server(
        uvicorn.Config(provider_app(bodies, chunk=61, delay_s=delay_s, by_turn=True), host="127.0.0.1", port=port + 1, log_level="warning")
    )
    page = uvicorn.Server(
        uvicorn.Config(demo_app(f"http://127.0.0.1:{port + 1}/v1/messages"), host="127.0.0.1", port=port, log_level="warning")
    )
    print(f"http://127.0.0.1:{port}/", flush=True)
    await asyncio.gather(provider.serve(), page.serve())


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    delay: Optional[float] = float(sys.argv[2]) if len(sys.argv) > 2 else None
    asyncio.run(main(port) if delay is None else main(port, delay))
