"""Drives `hecate serve` as an A2A 1.0 server with the official Python SDK
(`a2a-sdk`, pinned by scripts/test-deps/a2a.sh), over the JSON-RPC and the
HTTP+JSON bindings: card resolution, send, a context continued over two
messages, get, list, stream, cancel (and the error for a finished task), one
contextId isolated between two agents, the authenticated extended card over
both bindings (and its refusal without the token), an approval answered through
input-required (its task carrying the file it wrote as an artifact with the
diff, the workspace being a Git repository), and a task id another agent
does not know.

Usage: a2a_client.py BASE_URL WORKSPACE [TOKEN]

Prints one JSON object (what each step saw) on stdout; exits non-zero with the
reason on the first expectation that does not hold. The fixture model behind
the server answers in the order the steps run (see tests/interop/a2a_real_clients.rs).
"""

import asyncio
import json
import os
import sys
import uuid

import httpx
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict

from a2a.client import A2AClientError, A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
)

ON_MODEL = "hecate:fix%2Fgpt-fixture"
ACCESS_EXTENSION = "urn:hecate:a2a:access:v1"


def expect(cond, what):
    if not cond:
        raise SystemExit(f"expectation failed: {what}")


def message(text, workspace, context_id=None, task_id=None):
    meta = struct_pb2.Struct()
    meta.update({"workspace": workspace})
    m = Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        metadata=meta,
    )
    if context_id:
        m.context_id = context_id
    if task_id:
        m.task_id = task_id
    return SendMessageRequest(message=m)


async def client_for(http, url, binding, streaming=False, polling=False):
    config = ClientConfig(
        streaming=streaming,
        polling=polling,
        httpx_client=http,
        supported_protocol_bindings=[binding],
    )
    return await ClientFactory(config).create_from_url(url)


async def last_task(client, request):
    """Sends and answers the last task the client yields (non-streaming)."""
    task = None
    async for event in client.send_message(request):
        if event.HasField("task"):
            task = event.task
    expect(task is not None, "a task came back")
    return task


def answer_of(task):
    expect(len(task.artifacts) > 0, f"an answer artifact in {MessageToDict(task)}")
    return task.artifacts[0].parts[0].text


def session_of(task):
    return MessageToDict(task.metadata).get("hecateSessionId")


async def conversation(http, base, ws, binding, first, second):
    """Two messages in one context, then get and list; answers the report."""
    client = await client_for(http, base, binding)
    t1 = await last_task(client, message("remember the word kumquat", ws))
    expect(t1.status.state == TaskState.TASK_STATE_COMPLETED, f"{binding} completed")
    expect(answer_of(t1) == first, f"{binding} first answer {answer_of(t1)!r}")
    t2 = await last_task(
        client, message("what was the word?", ws, context_id=t1.context_id)
    )
    expect(t2.context_id == t1.context_id, f"{binding} same context")
    expect(session_of(t2) == session_of(t1), f"{binding} same session")
    expect(answer_of(t2) == second, f"{binding} second answer")
    got = await client.get_task(GetTaskRequest(id=t1.id))
    expect(got.id == t1.id, f"{binding} get")
    expect(got.status.state == TaskState.TASK_STATE_COMPLETED, f"{binding} got state")
    listed = await client.list_tasks(ListTasksRequest(context_id=t1.context_id))
    expect(len(listed.tasks) == 2, f"{binding} list has {len(listed.tasks)}")
    expect(listed.tasks[0].id == t2.id, f"{binding} newest first")
    try:
        await client.get_task(GetTaskRequest(id="run_unknown"))
        expect(False, f"{binding} unknown task is an error")
    except TaskNotFoundError:
        pass
    await client.close()
    return {"binding": binding, "context": t1.context_id, "tasks": [t1.id, t2.id]}


async def extended_cards(http, base, card, token):
    """The authenticated extended card over both bindings with the token (the
    other agents' skills, the access extension naming the caller), and the
    401 each binding answers without it. Without a token the public card
    offers none and the SDK answers the public card itself."""
    if not token:
        expect(not card.capabilities.extended_agent_card, "no extended card without a token")
        return None
    expect(card.capabilities.extended_agent_card, "the card offers the extended card")
    seen = {}
    for binding in ["JSONRPC", "HTTP+JSON"]:
        client = await client_for(http, base, binding)
        full = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
        ids = [s.id for s in full.skills]
        expect(
            any(i.startswith("hecate:fix/") and "#" in i for i in ids),
            f"{binding}: the other agents' skills in {ids}",
        )
        access = [e for e in full.capabilities.extensions if e.uri == ACCESS_EXTENSION]
        expect(len(access) == 1, f"{binding}: the access extension")
        params = MessageToDict(access[0].params)
        expect(params.get("identity") == "admin", f"{binding}: served to {params}")
        seen[binding] = {"skills": ids, "role": params.get("role")}
        await client.close()
    async with httpx.AsyncClient(timeout=30) as anonymous:
        for binding in ["JSONRPC", "HTTP+JSON"]:
            client = await client_for(anonymous, base, binding)
            try:
                await client.get_extended_agent_card(GetExtendedAgentCardRequest())
                expect(False, f"{binding}: the extended card needs the token")
            except A2AClientError as e:
                expect("401" in str(e), f"{binding}: refused with 401: {e}")
                seen[f"{binding} without token"] = "401"
            await client.close()
    return seen


async def main():
    base, ws = sys.argv[1], sys.argv[2]
    token = sys.argv[3] if len(sys.argv) > 3 else None
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    report = {}
    async with httpx.AsyncClient(timeout=30, headers=headers) as http:
        # Card resolution at the server's well-known path.
        card = await A2ACardResolver(http, base).get_agent_card()
        expect(card.capabilities.streaming, "the card offers streaming")
        bindings = [i.protocol_binding for i in card.supported_interfaces]
        expect(bindings == ["JSONRPC", "HTTP+JSON"], f"bindings {bindings}")
        report["card"] = {"name": card.name, "url": card.supported_interfaces[0].url}
        report["extended"] = await extended_cards(http, base, card, token)

        report["jsonrpc"] = await conversation(
            http, base, ws, "JSONRPC", "JSON-RPC one.", "JSON-RPC two."
        )
        report["rest"] = await conversation(
            http, base, ws, "HTTP+JSON", "REST one.", "REST two."
        )

        # Streaming.
        streaming = await client_for(http, base, "JSONRPC", streaming=True)
        kinds = []
        final = None
        text = None
        async for event in streaming.send_message(message("stream it", ws)):
            kind = event.WhichOneof("payload")
            kinds.append(kind)
            if kind == "status_update":
                final = event.status_update.status.state
            if kind == "artifact_update":
                text = event.artifact_update.artifact.parts[0].text
        expect(kinds[0] == "task", f"the stream starts with the task: {kinds}")
        expect(final == TaskState.TASK_STATE_COMPLETED, f"stream ends completed: {kinds}")
        expect(text == "Streamed.", f"streamed answer {text!r}")
        report["stream"] = kinds
        await streaming.close()

        # Cancel a running task, then the error for a finished one.
        polling = await client_for(http, base, "HTTP+JSON", polling=True)
        started = await last_task(polling, message("take your time", ws))
        expect(started.status.state == TaskState.TASK_STATE_WORKING, "started working")
        # Cancel once the answer is streaming, so the model was asked.
        for _ in range(200):
            now = await polling.get_task(GetTaskRequest(id=started.id))
            if len(now.artifacts) > 0:
                break
            await asyncio.sleep(0.05)
        expect(len(now.artifacts) > 0, "the running task shows its partial answer")
        cancelled = await polling.cancel_task(CancelTaskRequest(id=started.id))
        expect(cancelled.status.state == TaskState.TASK_STATE_CANCELED, "cancelled")
        try:
            await polling.cancel_task(CancelTaskRequest(id=started.id))
            expect(False, "cancelling a finished task is an error")
        except TaskNotCancelableError:
            pass
        report["cancelled"] = started.id
        await polling.close()

        # One contextId, two agents, two sessions.
        one = await client_for(http, base, "JSONRPC")
        two = await client_for(http, f"{base}/a2a/{ON_MODEL}", "JSONRPC")
        a = await last_task(one, message("the secret is papaya", ws, context_id="shared"))
        b = await last_task(two, message("what is the secret?", ws, context_id="shared"))
        expect(a.context_id == b.context_id == "shared", "both keep the context id")
        expect(session_of(a) != session_of(b), "two agents, two sessions")
        try:
            await two.get_task(GetTaskRequest(id=a.id))
            expect(False, "agent two does not know agent one's task")
        except TaskNotFoundError:
            pass
        report["isolation"] = [session_of(a), session_of(b)]
        await one.close()
        await two.close()

        # An approval answered through input-required.
        client = await client_for(http, base, "JSONRPC")
        asked = await last_task(client, message("write out.txt", ws))
        expect(
            asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED,
            f"input required: {MessageToDict(asked)}",
        )
        done = await last_task(
            client,
            message("approve", ws, context_id=asked.context_id, task_id=asked.id),
        )
        expect(done.id == asked.id, "the same task goes on")
        expect(done.status.state == TaskState.TASK_STATE_COMPLETED, "approved and done")
        expect(answer_of(done) == "Wrote out.txt.", "the approved answer")
        expect(os.path.exists(os.path.join(ws, "out.txt")), "the file was written")
        report["approval"] = asked.id
        # The file the turn wrote is an artifact after the answer, as the SDK reads it.
        report["files"] = [
            {
                "id": a.artifact_id,
                "name": a.name,
                "mediaType": a.parts[0].media_type,
                "diff": a.parts[0].text,
                "metadata": MessageToDict(a.metadata),
            }
            for a in done.artifacts[1:]
        ]
        await client.close()
    print(json.dumps(report))


asyncio.run(main())
