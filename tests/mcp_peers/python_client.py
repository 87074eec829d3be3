"""Drives `hecate mcp` over stdio with the official Python MCP SDK.

Usage: python_client.py HECATE_BIN [ENV=VALUE ...]
Prints one JSON object with what it observed; exits non-zero on failure.
"""

import json
import sys

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main() -> None:
    hecate = sys.argv[1]
    env = dict(kv.split("=", 1) for kv in sys.argv[2:])
    params = StdioServerParameters(command=hecate, args=["mcp"], env=env)
    progress: list[float] = []
    elicited: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def on_elicit(context, request):  # type: ignore[no-untyped-def]
        elicited.append(request.message)
        return types.ElicitResult(action="accept", content={"decision": "approve_once"})

    async with stdio_client(params) as (read, write):
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
