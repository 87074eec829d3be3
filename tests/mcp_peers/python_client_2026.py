"""Drives Hecate's MCP server with the official Python MCP SDK pinned to
protocol revision 2026-07-28 (`Client(mode="2026-07-28")`: no initialize, every
request carries its revision, capabilities and client in `_meta`).

Usage:
    python_client_2026.py HECATE_BIN [ENV=VALUE ...]    # spawns `hecate mcp` (stdio)
    python_client_2026.py --http URL [TOKEN]            # Streamable HTTP at URL

The hub must aggregate the fixture upstreams `fx` (policy auto) and `guarded`
(policy require_approval) and have the fixture model provider `fix`. Lists and
calls tools, listens to a session's updates while a turn runs, answers the
approval `guarded__echo` asks for (through the SDK's multi round-trip driver),
and probes `server/discover` with `mode="auto"`. Prints one JSON object with
what it observed; exits non-zero on failure.
"""

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated

REVISION = "2026-07-28"


@contextlib.asynccontextmanager
async def http_client(argv: list[str]) -> AsyncIterator[httpx2.AsyncClient | None]:
    """The HTTP client for `--http` (with the bearer token), else `None`."""
    if argv[0] != "--http":
        yield None
        return
    headers = {"Authorization": f"Bearer {argv[2]}"} if len(argv) > 2 else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as http:
        yield http


def server(argv: list[str], http: httpx2.AsyncClient | None) -> Any:
    """What `Client` connects to for the arguments."""
    if http is not None:
        return streamable_http_client(argv[1], http_client=http)
    env = dict(kv.split("=", 1) for kv in argv[1:])
    return StdioServerParameters(command=argv[0], args=["mcp"], env=env)


async def main() -> None:
    argv = sys.argv[1:]
    elicited: list[str] = []

    async def on_elicit(context, params):  # type: ignore[no-untyped-def]
        elicited.append(params.message)
        return types.ElicitResult(action="accept", content={"decision": "approve_once"})

    info = types.Implementation(name="python-2026", version="1.0")
    report: dict[str, Any] = {}
    async with http_client(argv) as http:
        async with Client(
            server(argv, http), mode=REVISION, elicitation_callback=on_elicit, client_info=info
        ) as client:
            report["protocol"] = client.protocol_version
            tools = await client.list_tools()
            report["tools"] = sorted(t.name for t in tools.tools)
            echoed = await client.call_tool("fx__echo", {"message": "from python 2026"})
            report["echo"] = echoed.content[0].text
            guarded = await client.call_tool("guarded__echo", {"message": "approved in rounds"})
            report["guarded"] = guarded.content[0].text
            report["guarded_error"] = guarded.is_error
            report["elicited"] = elicited
            created = await client.call_tool("create_session", {"model": "fix/m1"})
            session = created.structured_content["session"]["id"]
            uri = f"hecate://sessions/{session}"
            async with client.listen(resource_subscriptions=[uri, "hecate://adapters"]) as sub:
                report["honored"] = sub.honored.resource_subscriptions
                sent = await client.call_tool("send_message", {"session_id": session, "content": "watch me"})
                report["sent_error"] = sent.is_error
                with anyio.fail_after(30):
                    async for event in sub:
                        if isinstance(event, ResourceUpdated):
                            report["updated"] = event.uri
                            break
    async with http_client(argv) as http:
        async with Client(server(argv, http), client_info=info) as probing:
            report["auto_protocol"] = probing.protocol_version
    print(json.dumps(report))


anyio.run(main)
