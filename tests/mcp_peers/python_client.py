"""Drives Hecate's MCP server with the official Python MCP SDK.

Usage:
    python_client.py HECATE_BIN [ENV=VALUE ...]    # spawns `hecate mcp` (stdio)
    python_client.py --http URL [TOKEN]            # Streamable HTTP at URL

The hub must aggregate the fixture upstreams `fx` (policy auto) and `guarded`
(policy require_approval). Prints one JSON object with what it observed; exits
non-zero on failure.
"""

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


@contextlib.asynccontextmanager
async def transport(argv: list[str]) -> AsyncIterator[tuple[Any, Any]]:
    """The read and write streams of the transport the arguments name."""
    if argv[0] == "--http":
        url = argv[1]
        headers = {"Authorization": f"Bearer {argv[2]}"} if len(argv) > 2 else {}
        timeout = httpx2.Timeout(30.0, read=300.0)
        async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                yield read, write
    else:
        env = dict(kv.split("=", 1) for kv in argv[1:])
        params = StdioServerParameters(command=argv[0], args=["mcp"], env=env)
        async with stdio_client(params) as (read, write):
            yield read, write


async def main() -> None:
    progress: list[float] = []
    elicited: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def on_elicit(context, request):  # type: ignore[no-untyped-def]
        elicited.append(request.message)
        return types.ElicitResult(action="accept", content={"decision": "approve_once"})

    async with transport(sys.argv[1:]) as (read, write):
        async with ClientSession(read, write, elicitation_callback=on_elicit) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            names = sorted(t.name for t in tools.tools)
            listed = await session.call_tool("list_sessions", {})
            echoed = await session.call_tool("fx__echo", {"message": "from python"})
            await session.call_tool(
                "fx__test_tool_with_progress", {}, progress_callback=on_progress
            )
            guarded = await session.call_tool("guarded__echo", {"message": "approved by python"})
            bad = await session.call_tool("list_sessions", {"limit": "many"})
    print(
        json.dumps(
            {
                "server": init.server_info.name if init.server_info else None,
                "protocol": str(init.protocol_version),
                "tools": names,
                "sessions": listed.structured_content,
                "echo": echoed.content[0].text,
                "progress": progress,
                "elicited": elicited,
                "guarded": guarded.content[0].text,
                "guarded_error": guarded.is_error,
                "bad_is_error": bad.is_error,
            }
        )
    )


anyio.run(main)
