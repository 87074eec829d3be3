"""Drives Hecate's `/v1/responses` with the official OpenAI SDK's Responses API.

Usage: responses_client.py BASE_URL TOKEN MODEL [MODEL ...]

For each MODEL: a plain `client.responses.create(...)`, a streamed one (every
event read as the SDK's typed event), and a tool call round trip — the
`function_call` asked for with a function tool, then its
`function_call_output` sent back in a streamed request — recorded in the chat
session `sdk-responses-<model with / as ->` (the `X-Hecate-Session-Id` header
in `extra_headers`). Prints one JSON report on stdout.
"""

import json
import sys

import openai

from weather_tool import RESPONSES as WEATHER


def streamed(client, **kwargs):
    """The text deltas joined, the event types in order, the final response."""
    text, types, final = "", [], None
    for event in client.responses.create(stream=True, **kwargs):
        types.append(event.type)
        if event.type == "response.output_text.delta":
            text += event.delta
        if event.type in ("response.completed", "response.incomplete", "response.failed"):
            final = event.response
    return text, types, final


def run(base, token, model):
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=token, max_retries=0)
    out = {}
    plain = client.responses.create(
        model=model, instructions="be brief", input="say something", store=False
    )
    out["text"] = plain.output_text
    out["status"] = plain.status
    out["id"] = plain.id
    out["usage_total"] = plain.usage.total_tokens
    text, types, final = streamed(client, model=model, input="stream something")
    out["stream_text"] = text
    out["stream_first"] = types[:2]
    out["stream_last"] = types[-1]
    out["stream_usage"] = final.usage.output_tokens
    session = {"X-Hecate-Session-Id": f"sdk-responses-{model.replace('/', '-')}"}
    question = {"role": "user", "content": "weather in Paris?"}
    first = client.responses.create(
        model=model, input=[question], tools=[WEATHER], extra_headers=session
    )
    call = next(item for item in first.output if item.type == "function_call")
    out["tool_name"] = call.name
    out["tool_args"] = json.loads(call.arguments)
    follow = [
        question,
        {
            "type": "function_call",
            "call_id": call.call_id,
            "name": call.name,
            "arguments": call.arguments,
        },
        {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"},
    ]
    text, _types, final = streamed(
        client, model=model, input=follow, tools=[WEATHER], extra_headers=session
    )
    out["final"] = text
    out["final_status"] = final.status
    return out


def main():
    base, token, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    report = {"openai_version": openai.__version__}
    for model in models:
        report[model] = run(base, token, model)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
