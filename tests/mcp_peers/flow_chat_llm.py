"""Drives Hecate's client-hosted chat tools with the official Python MCP SDK,
playing the caller's LLM: it reads the compiled system message and the `respond`
tool schema Hecate hands out, and answers every turn with a `respond` tool call
built from them (a scripted model, no real one).

Usage:
    flow_chat_llm.py HECATE_BIN [ENV=VALUE ...]    # spawns `hecate mcp` (stdio)

The config dir must hold `flows/support.toml` (docs/examples/flows/support.toml).
Prints one JSON object with what it observed; exits non-zero on failure.
"""

import json
import re
import sys
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

USER_TURNS = ["Hello, I'm Bo", "I am 41 years old", "The pro plan, please"]


def scripted_llm(system: str, tools: list[dict[str, Any]], history: list[dict[str, str]]) -> dict[str, Any]:
    """The model's `respond` call for this turn, from what Hecate compiled."""
    (tool,) = tools
    assert tool["function"]["name"] == "respond", tool
    schema = tool["function"]["parameters"]
    fields = schema["properties"]["data"]["properties"]
    choices = schema["properties"]["next_stage"]["enum"]
    stage = re.search(r"Current stage: (\S+)", system).group(1)
    last_user = next((m["content"] for m in reversed(history) if m["role"] == "user"), None)
    call: dict[str, Any] = {"message": f"({stage}) noted"}
    if last_user is None:
        call["message"] = "Hi! I'm Ada. What's your name?"
        return call
    data: dict[str, Any] = {}
    if "name" in fields:
        data["name"] = last_user.split()[-1]
    if "age" in fields and fields["age"]["type"] == "integer":
        data["age"] = int(re.search(r"\d+", last_user).group(0))
    if "plan" in fields:
        data["plan"] = next(v for v in fields["plan"]["enum"] if v in last_user)
        if "done" in choices:
            call["next_stage"] = "done"
    call["data"] = data
    return call


async def main() -> None:
    env = dict(kv.split("=", 1) for kv in sys.argv[2:])
    params = StdioServerParameters(command=sys.argv[1], args=["mcp"], env=env)
    report: dict[str, Any] = {"turns": []}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            names = sorted(t.name for t in (await session.list_tools()).tools)
            report["tools"] = [n for n in names if n.startswith("h-chat-")]

            started = await session.call_tool("h-chat-start", {"agentId": "support"})
            assert not started.is_error, started.content
            chat = started.structured_content
            chat_id = chat["chatId"]
            report["start"] = {"stage": chat["stageName"], "conversation": chat["conversationName"]}

            history: list[dict[str, str]] = []
            call = scripted_llm(chat["systemMessage"], chat["tools"], history)
            done = await session.call_tool("h-chat-process", {"chatId": chat_id, **call})
            assert not done.is_error, done.content
            history.append({"role": "assistant", "content": done.structured_content["displayMessage"]})

            for user in USER_TURNS:
                sent = await session.call_tool("h-chat-send", {"chatId": chat_id, "userMessage": user})
                assert not sent.is_error, sent.content
                turn = sent.structured_content
                assert turn["messageHistory"] == history, (turn["messageHistory"], history)
                convo = turn["messageHistory"] + [{"role": "user", "content": user}]
                call = scripted_llm(turn["systemMessage"], turn["tools"], convo)
                processed = await session.call_tool("h-chat-process", {"chatId": chat_id, **call})
                assert not processed.is_error, processed.content
                p = processed.structured_content
                report["turns"].append(
                    {
                        "call": call,
                        "stageTransitioned": p["stageTransitioned"],
                        "newStageName": p["newStageName"],
                        "conversationHandoff": p["conversationHandoff"],
                        "chatEnded": p["chatEnded"],
                        "data": p["data"],
                    }
                )
                history = convo + [{"role": "assistant", "content": p["displayMessage"]}]

            ended = await session.call_tool("h-chat-send", {"chatId": chat_id, "userMessage": "bye"})
            report["after_end"] = json.loads(ended.content[0].text)["error"]["type"]
            summary = await session.call_tool("h-chat-summary", {"chatId": chat_id, "summary": "Bo, 41, pro."})
            report["summary"] = summary.structured_content

            other = await session.call_tool("h-chat-start", {"agentId": "support"})
            other_id = other.structured_content["chatId"]
            bad = await session.call_tool(
                "h-chat-process", {"chatId": other_id, "message": "hi", "data": {"name": 7}}
            )
            report["bad_type"] = {"is_error": bad.is_error, "error": json.loads(bad.content[0].text)["error"]}
            unknown = await session.call_tool("h-chat-send", {"chatId": "chat_nope", "userMessage": "hi"})
            report["unknown_chat"] = json.loads(unknown.content[0].text)["error"]["type"]
            agent = await session.call_tool("h-chat-start", {"agentId": "ghost"})
            report["unknown_agent"] = json.loads(agent.content[0].text)["error"]["type"]
    print(json.dumps(report))


anyio.run(main)
