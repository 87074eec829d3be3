"""Connects to Hecate's /mcp with a scoped API key through the official Python
MCP SDK and reports what the key sees and may call.

Usage:
    scoped_key_client.py URL TOKEN ALLOWED_TOOL HIDDEN_TOOL

Prints one JSON object: the tools listed, the allowed tool's text, and the
error the hidden tool's call got (or null if it was answered).
"""

import json
import sys

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


async def main() -> None:
    url, token, allowed, hidden = sys.argv[1:5]
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0)) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                answered = await session.call_tool(allowed, {"message": "scoped"})
                refused = None
                try:
                    await session.call_tool(hidden, {"message": "nope"})
                except MCPError as e:
                    refused = {"code": e.error.code, "message": e.error.message}
    print(
        json.dumps(
            {
                "tools": sorted(t.name for t in tools.tools),
                "answered": answered.content[0].text if answered.content else None,
                "answered_error": answered.is_error,
                "refused": refused,
            }
        )
    )


anyio.run(main)
