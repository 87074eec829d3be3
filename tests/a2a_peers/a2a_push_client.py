"""Drives the push notifications of `hecate serve` (an A2A 1.0 server) with the
official Python SDK (`a2a-sdk`, pinned by scripts/test-deps/a2a.sh), with a
webhook receiver of its own on 127.0.0.1: a send over JSON-RPC carrying the
client's push notification config (`ClientConfig.push_notification_config`), then
configs created, read, listed and deleted through the SDK's client over both
bindings, and a config for a task the server does not know. Every notification
received must parse as the SDK's `StreamResponse` and carry the config's token.

Usage: a2a_push_client.py BASE_URL WORKSPACE TOKEN

Prints one JSON object (what each step saw) on stdout; exits non-zero with the
reason on the first expectation that does not hold. The fixture model behind
the server answers in the order the steps run (see
tests/interop/a2a_real_clients.rs).
"""

import asyncio
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, Parse

from a2a.client import ClientConfig, ClientFactory
from a2a.types import (
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
)

RECEIVED = []
LOCK = threading.Lock()


def expect(cond, what):
    if not cond:
        raise SystemExit(f"expectation failed: {what}")


class Hook(BaseHTTPRequestHandler):
    """Records every POST: its path, token header and body as a StreamResponse."""

    def do_POST(self):  # noqa: N802 (the http.server name)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        parsed = Parse(raw.decode(), StreamResponse())
        with LOCK:
            RECEIVED.append(
                {
                    "path": self.path,
                    "token": self.headers.get("X-A2A-Notification-Token"),
                    "content_type": self.headers.get("Content-Type"),
                    "event": parsed,
                }
            )
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def received(path):
    with LOCK:
        return [r for r in RECEIVED if r["path"] == path]


def state_of(event):
    kind = event.WhichOneof("payload")
    if kind == "task":
        return event.task.status.state
    if kind == "status_update":
        return event.status_update.status.state
    return None


async def until_completed(path):
    for _ in range(400):
        got = received(path)
        if any(state_of(r["event"]) == TaskState.TASK_STATE_COMPLETED for r in got):
            return got
        await asyncio.sleep(0.05)
    raise SystemExit(f"expectation failed: {path} never got the completion: {got}")


def message(text, workspace):
    meta = struct_pb2.Struct()
    meta.update({"workspace": workspace})
    return SendMessageRequest(
        message=Message(
            message_id=str(uuid.uuid4()),
            role=Role.ROLE_USER,
            parts=[Part(text=text)],
            metadata=meta,
        )
    )


async def last_task(client, request):
    task = None
    async for event in client.send_message(request):
        if event.HasField("task"):
            task = event.task
    expect(task is not None, "a task came back")
    return task


async def main():
    base, ws, token = sys.argv[1], sys.argv[2], sys.argv[3]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hooks = f"http://127.0.0.1:{server.server_address[1]}"
    report = {}
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(timeout=30, headers=headers) as http:
        # The client's own push config rides on its send.
        inline = TaskPushNotificationConfig(url=f"{hooks}/inline", token="tok-inline")
        rpc = await ClientFactory(
            ClientConfig(
                streaming=False,
                httpx_client=http,
                supported_protocol_bindings=["JSONRPC"],
                push_notification_config=inline,
            )
        ).create_from_url(base)
        done = await last_task(rpc, message("tell me", ws))
        expect(done.status.state == TaskState.TASK_STATE_COMPLETED, "completed")
        got = await until_completed("/inline")
        kinds = [r["event"].WhichOneof("payload") for r in got]
        expect(kinds[0] == "task", f"the task first: {kinds}")
        expect(all(r["token"] == "tok-inline" for r in got), "the token on every post")
        expect(
            all(r["content_type"] == "application/a2a+json" for r in got),
            "the A2A media type",
        )
        ids = {
            r["event"].task.id if r["event"].HasField("task")
            else getattr(r["event"], r["event"].WhichOneof("payload")).task_id
            for r in got
        }
        expect(ids == {done.id}, f"every post names the task: {ids}")
        report["inline"] = kinds

        # Create, get, list and delete over JSON-RPC (a finished task keeps
        # configs but is posted nothing more).
        made = await rpc.create_task_push_notification_config(
            TaskPushNotificationConfig(
                task_id=done.id, id="sdk-rpc", url=f"{hooks}/rpc", token="tok-rpc"
            )
        )
        expect(made.id == "sdk-rpc" and made.task_id == done.id, f"created {made}")
        one = await rpc.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=done.id, id="sdk-rpc")
        )
        expect(one.url == f"{hooks}/rpc", f"got {one}")
        listed = await rpc.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=done.id)
        )
        expect(
            sorted(c.id for c in listed.configs) == sorted([done.id, "sdk-rpc"]),
            f"listed {MessageToDict(listed)}",
        )
        await rpc.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=done.id, id="sdk-rpc")
        )
        listed = await rpc.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=done.id)
        )
        expect([c.id for c in listed.configs] == [done.id], "deleted over JSON-RPC")
        try:
            await rpc.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id="run_unknown", url=f"{hooks}/x")
            )
            expect(False, "a config for an unknown task is an error")
        except TaskNotFoundError:
            pass
        await rpc.close()

        # Over HTTP+JSON, on a running task: the webhook gets its end.
        rest = await ClientFactory(
            ClientConfig(
                streaming=False,
                polling=True,
                httpx_client=http,
                supported_protocol_bindings=["HTTP+JSON"],
            )
        ).create_from_url(base)
        started = await last_task(rest, message("take your time", ws))
        expect(started.status.state == TaskState.TASK_STATE_WORKING, "started working")
        made = await rest.create_task_push_notification_config(
            TaskPushNotificationConfig(
                task_id=started.id, id="sdk-rest", url=f"{hooks}/rest", token="tok-rest"
            )
        )
        expect(made.id == "sdk-rest", f"created over REST {made}")
        one = await rest.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=started.id, id="sdk-rest")
        )
        expect(one.token == "tok-rest", f"got over REST {one}")
        got = await until_completed("/rest")
        expect(all(r["token"] == "tok-rest" for r in got), "the REST config's token")
        report["rest"] = [r["event"].WhichOneof("payload") for r in got]
        await rest.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=started.id, id="sdk-rest")
        )
        listed = await rest.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=started.id)
        )
        expect(len(listed.configs) == 0, "deleted over REST")
        await rest.close()
    time.sleep(0.2)
    expect(received("/rpc") == [], "a finished task posts nothing to a new config")
    server.shutdown()
    print(json.dumps(report))


asyncio.run(main())
