"""A remote A2A agent built with the official Python SDK's server side
(a2a-sdk 1.3.0, Starlette routes served by uvicorn), for the tests that make
Hecate its client.

It answers `remote agent heard: <the whole user input>` with the number of
the turn in its context (`[turn N of context]`), as one text artifact that is
streamed in two chunks when the client streams. A prompt with the word
CONFIRM asks input-required once and then answers `confirmed: <the answer>`;
SLOW works for a minute (so a cancel can reach it) and FAIL raises, which the
SDK reports as a failed task.

Usage: remote_agent.py [--binding jsonrpc|rest] [--no-streaming]
[--token TOKEN]. It listens on a free loopback port and prints `PORT <n>` on
stdout once it serves.
"""

import argparse
import asyncio
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binding", choices=["jsonrpc", "rest"], default="jsonrpc")
    parser.add_argument("--no-streaming", action="store_true")
    parser.add_argument("--token")
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
