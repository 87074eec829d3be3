"""Records an Anthropic conversation with thinking and a failed tool call
through Hecate's gateway, then replays it.

Usage: thinking_client.py BASE_URL TOKEN OPENAI_MODEL ANTHROPIC_MODEL

With the official Anthropic SDK, in the chat session `sdk-thinking`: a
streamed call with extended thinking that asks for the `weather` tool, then the
tool's result sent back as an error (`is_error`) with the thinking block (and
its signature) the SDK returned, then the final answer. It reads the recorded
session back over HTTP and, with the official OpenAI SDK, sends the recorded
messages plus a new question to ANTHROPIC_MODEL and to OPENAI_MODEL through
`/v1/chat/completions`. Prints one JSON report on stdout.
"""

import json
import sys
import urllib.request

import anthropic
import openai

from weather_tool import ANTHROPIC as WEATHER_ANTHROPIC
from weather_tool import CHAT as WEATHER_OPENAI

SESSION = "sdk-thinking"
THINKING = {"type": "enabled", "budget_tokens": 1024}
# What the session endpoint adds around each recorded message.
RECORD_FIELDS = ("id", "sequence", "created_at", "produced_by_call_id")


def record(base, token, ant_model):
    client = anthropic.Anthropic(
        base_url=base,
        api_key=token,
        max_retries=0,
        default_headers={"X-Hecate-Session-Id": SESSION},
    )
    messages = [{"role": "user", "content": "weather in Oslo?"}]
    with client.messages.stream(
        model=ant_model,
        max_tokens=2048,
        thinking=THINKING,
        messages=messages,
        tools=[WEATHER_ANTHROPIC],
    ) as stream:
        first = stream.get_final_message()
    thought = next(b for b in first.content if b.type == "thinking")
    call = next(b for b in first.content if b.type == "tool_use")
    messages.append({"role": "assistant", "content": first.content})
    messages.append(
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": call.id,
                    "content": "no such city",
                    "is_error": True,
                }
            ],
        }
    )
    final = client.messages.create(
        model=ant_model,
        max_tokens=2048,
        thinking=THINKING,
        messages=messages,
        tools=[WEATHER_ANTHROPIC],
    )
    return {
        "thinking": thought.thinking,
        "signature": thought.signature,
        "final": "".join(b.text for b in final.content if b.type == "text"),
    }


def recorded_messages(base, token):
    request = urllib.request.Request(
        f"{base}/hecate/v1/chat/sessions/{SESSION}",
        headers={"Authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(request) as answer:
        session = json.load(answer)
    return session["data"]["messages"]


def replay(base, token, models, recorded):
    """The recorded messages and a new question, sent to each of `models`."""
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=token, max_retries=0)
    history = [
        {k: v for k, v in m.items() if k not in RECORD_FIELDS} for m in recorded
    ]
    history.append({"role": "user", "content": "and tomorrow?"})
    answers = {}
    for model in models:
        answer = client.chat.completions.create(
            model=model, max_tokens=2048, messages=history, tools=[WEATHER_OPENAI]
        )
        answers[model] = answer.choices[0].message.content
    return answers


def main():
    base, token, oai_model, ant_model = sys.argv[1:5]
    report = record(base, token, ant_model)
    report["recorded"] = recorded_messages(base, token)
    report["replayed"] = replay(
        base, token, [ant_model, oai_model], report["recorded"]
    )
    print(json.dumps(report))


if __name__ == "__main__":
    main()
