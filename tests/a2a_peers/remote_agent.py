"""A remote A2A agent built with the official Python SDK's server side
(a2a-sdk 1.3.0, Starlette routes served by uvicorn), for the tests that make
Hecate its client.

It answers `remote agent heard: <the whole user input>` with the number of
the turn in its context (`[turn N of context]`), as one text artifact that is
streamed in two chunks when the client streams. A prompt with the word
CONFIRM asks input-required once and then answers `confirmed: <the answer>`;
SLOW works for a minute (so a cancel can reach it), LONG works for two
seconds (saying so in a working status halfway) before it answers, and FAIL
raises, which the SDK reports as a failed task.

Every A2A call is counted by method (`SendMessage`, `SendStreamingMessage`,
`SubscribeToTask`, `GetTask`, `CancelTask`, over either binding), and the
counts are served as JSON at `GET /calls`. Three switches make the transport
misbehave around a LONG task, to test how a client follows it:
`--drop-streams` breaks the connection of a LONG prompt's
SendStreamingMessage after its first event, and of each task's first
SubscribeToTask after its first event; `--no-subscribe` refuses
SubscribeToTask with UnsupportedOperation; `--return-immediately` makes a
LONG prompt's SendMessage answer the task at once, still working.

Usage: remote_agent.py [--binding jsonrpc|rest] [--no-streaming]
[--token TOKEN] [--drop-streams] [--no-subscribe] [--return-immediately].
It listens on a free loopback port and prints `PORT <n>` on stdout once it
serves.
"""

import argparse
import asyncio
import json
import re
import socket
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import JSONResponse

from a2a.helpers.proto_helpers import new_task, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    TaskState,
)

TURNS: dict[str, int] = {}
ASKED: set[str] = set()


class RemoteExecutor(AgentExecutor):
    """Answers text, asks input-required once on CONFIRM, honours cancel."""

    async def execute(self, context: RequestContext, event_queue) -> None:
        text = context.get_user_input()
        task_id = context.task_id
        context_id = context.context_id
        if context.current_task is None:
            await event_queue.enqueue_event(
                new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED,
                         history=[context.message])
            )
        updater = TaskUpdater(event_queue, task_id, context_id)
        await updater.start_work()
        if "FAIL" in text:
            raise RuntimeError("the remote agent failed on purpose")
        if "CONFIRM" in text and task_id not in ASKED:
            ASKED.add(task_id)
            await updater.requires_input(
                new_text_message("Shall I go ahead with the change?",
                                 context_id=context_id, task_id=task_id)
            )
            return
        if task_id in ASKED:
            answer = f"confirmed: {text}"
        elif "SLOW" in text:
            await asyncio.sleep(60)
            answer = "slow work done"
        elif "LONG" in text:
            await asyncio.sleep(1)
            await updater.update_status(
                TaskState.TASK_STATE_WORKING,
                new_text_message("halfway there", context_id=context_id, task_id=task_id),
            )
            await asyncio.sleep(1)
            answer = "long work done"
        else:
            TURNS[context_id] = TURNS.get(context_id, 0) + 1
            answer = f"remote agent heard: {text} [turn {TURNS[context_id]} of context]"
        half = len(answer) // 2
        await updater.add_artifact([new_text_part(answer[:half])], artifact_id="answer",
                                   name="answer", append=False, last_chunk=False)
        await updater.add_artifact([new_text_part(answer[half:])], artifact_id="answer",
                                   name="answer", append=True, last_chunk=True)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


class Bearer(BaseHTTPMiddleware):
    """Refuses every request but the card's without the expected token."""

    def __init__(self, app, token: str):
        super().__init__(app)
        self.token = token

    async def dispatch(self, request, call_next):
        if request.url.path.endswith("agent-card.json"):
            return await call_next(request)
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return await call_next(request)


class Cut(Exception):
    """Raised to break a response's connection on purpose."""


def _is_cut(e: BaseException) -> bool:
    if isinstance(e, Cut):
        return True
    return any(_is_cut(x) for x in getattr(e, "exceptions", ()))


REST_METHODS = [
    (re.compile(r"/message:send$"), "SendMessage"),
    (re.compile(r"/message:stream$"), "SendStreamingMessage"),
    (re.compile(r"/tasks/([^/]+):subscribe$"), "SubscribeToTask"),
    (re.compile(r"/tasks/([^/]+):cancel$"), "CancelTask"),
    (re.compile(r"/tasks/([^/:]+)$"), "GetTask"),
]


class Calls:
    """Counts the A2A calls by method (served at GET /calls) and, when asked,
    breaks streams, refuses SubscribeToTask or makes a send return at once."""

    def __init__(self, app, binding: str, drop_streams: bool, no_subscribe: bool,
                 return_immediately: bool):
        self.app = app
        self.binding = binding
        self.drop_streams = drop_streams
        self.no_subscribe = no_subscribe
        self.return_immediately = return_immediately
        self.counts: dict[str, int] = {}
        self.subscribed: set[str] = set()

    def method_of(self, scope, body: bytes):
        """The call's A2A method, task id, JSON-RPC id and request (when JSON)."""
        try:
            req = json.loads(body) if body else None
        except ValueError:
            req = None
        if self.binding == "jsonrpc":
            if not isinstance(req, dict):
                return None, None, None, req
            params = req.get("params") or {}
            return req.get("method"), params.get("id"), req.get("id"), req
        for pattern, method in REST_METHODS:
            m = pattern.search(scope["path"])
            if m:
                return method, (m.group(1) if m.groups() else None), None, req
        return None, None, None, req

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if scope["path"] == "/calls":
            return await JSONResponse(self.counts)(scope, receive, send)
        body = b""
        more = True
        while more:
            msg = await receive()
            body += msg.get("body", b"")
            more = msg.get("more_body", False)
        method, task_id, rpc_id, req = self.method_of(scope, body)
        if method:
            self.counts[method] = self.counts.get(method, 0) + 1
        if method == "SubscribeToTask" and self.no_subscribe:
            message = "this agent does not offer SubscribeToTask"
            if self.binding == "jsonrpc":
                answer = JSONResponse({"jsonrpc": "2.0", "id": rpc_id,
                                       "error": {"code": -32004, "message": message}})
            else:
                answer = JSONResponse({"error": {"code": 400, "status": "UNIMPLEMENTED",
                                                 "message": message}}, status_code=400)
            return await answer(scope, receive, send)
        if (method == "SendMessage" and self.return_immediately and b"LONG" in body
                and isinstance(req, dict)):
            target = req.setdefault("params", {}) if self.binding == "jsonrpc" else req
            target.setdefault("configuration", {})["returnImmediately"] = True
            body = json.dumps(req).encode()
        cut = False
        if self.drop_streams:
            if method == "SendStreamingMessage" and b"LONG" in body:
                cut = True
            if method == "SubscribeToTask" and task_id not in self.subscribed:
                self.subscribed.add(task_id)
                cut = True
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        events = 0

        async def cutting_send(msg):
            nonlocal events
            if cut and msg["type"] == "http.response.body" and b"data:" in msg.get("body", b""):
                events += 1
                if events > 1:
                    raise Cut()
            await send(msg)

        try:
            await self.app(scope, replay, cutting_send)
        except BaseException as e:  # noqa: BLE001 - only our own cut is swallowed
            if not _is_cut(e):
                raise
            # Returning without ending the response makes uvicorn drop the connection.


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binding", choices=["jsonrpc", "rest"], default="jsonrpc")
    parser.add_argument("--no-streaming", action="store_true")
    parser.add_argument("--token")
    parser.add_argument("--drop-streams", action="store_true")
    parser.add_argument("--no-subscribe", action="store_true")
    parser.add_argument("--return-immediately", action="store_true")
    args = parser.parse_args()

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    binding = "JSONRPC" if args.binding == "jsonrpc" else "HTTP+JSON"
    url = f"{base}/rpc" if args.binding == "jsonrpc" else base
    card = AgentCard(
        name="Remote test agent",
        description="An a2a-sdk agent that echoes, asks once and can be cancelled.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=binding, protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=not args.no_streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes the prompt.",
                           tags=["echo"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=RemoteExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = list(create_agent_card_routes(card))
    if args.binding == "jsonrpc":
        routes += create_jsonrpc_routes(handler, "/rpc")
    else:
        routes += create_rest_routes(handler)
    app = Starlette(routes=routes)
    if args.token:
        app.add_middleware(Bearer, token=args.token)
    app = Calls(app, args.binding, args.drop_streams, args.no_subscribe,
                args.return_immediately)
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    print(f"PORT {port}", flush=True)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
