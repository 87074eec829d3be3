"""Drives Hecate's model gateway with the official OpenAI and Anthropic SDKs.

Usage: gateway_client.py BASE_URL TOKEN MODEL [MODEL ...]

For each SDK it lists the models, then for each MODEL makes a plain call, a
streamed call and a tool call round trip (the call, the tool's result sent
back, the final answer); the round trip is recorded in the chat session
`sdk-<sdk>-<model with / as ->`, named by the X-Hecate-Session-Id header (the
OpenAI SDK's per-request `extra_headers`, the Anthropic SDK's client
`default_headers`). Prints one JSON report on stdout.
"""

import json
import sys

import anthropic
import openai

from weather_tool import ANTHROPIC as WEATHER_ANTHROPIC
from weather_tool import CHAT as WEATHER_OPENAI


def session_of(sdk, model):
    return f"sdk-{sdk}-{model.replace('/', '-')}"


def with_openai(base, token, models):
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=token, max_retries=0)
    report = {"models": [m.id for m in client.models.list()]}
    for model in models:
        out = {}
        plain = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "say something"}]
        )
        out["text"] = plain.choices[0].message.content
        out["finish_reason"] = plain.choices[0].finish_reason
        out["usage_total"] = plain.usage.total_tokens
        text, usage = "", None
        for chunk in client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": "stream something"}],
            stream=True,
            stream_options={"include_usage": True},
        ):
            if chunk.choices and chunk.choices[0].delta.content:
                text += chunk.choices[0].delta.content
            if chunk.usage:
                usage = chunk.usage.completion_tokens
        out["stream_text"] = text
        out["stream_usage"] = usage
        session = {"X-Hecate-Session-Id": session_of("openai", model)}
        messages = [{"role": "user", "content": "weather in Paris?"}]
        first = client.chat.completions.create(
            model=model, messages=messages, tools=[WEATHER_OPENAI], extra_headers=session
        )
        call = first.choices[0].message.tool_calls[0]
        out["tool_name"] = call.function.name
        out["tool_args"] = json.loads(call.function.arguments)
        out["tool_finish"] = first.choices[0].finish_reason
        messages.append(first.choices[0].message.model_dump(exclude_none=True))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny"})
        final = client.chat.completions.create(
            model=model, messages=messages, tools=[WEATHER_OPENAI], extra_headers=session
        )
        out["final"] = final.choices[0].message.content
        report[model] = out
    return report


def with_anthropic(base, token, models):
    client = anthropic.Anthropic(base_url=base, api_key=token, max_retries=0)
    report = {"models": [m.id for m in client.models.list()]}
    for model in models:
        out = {}
        plain = client.messages.create(
            model=model,
            max_tokens=64,
            messages=[{"role": "user", "content": "say something"}],
        )
        out["text"] = "".join(b.text for b in plain.content if b.type == "text")
        out["stop_reason"] = plain.stop_reason
        out["usage_output"] = plain.usage.output_tokens
        with client.messages.stream(
            model=model,
            max_tokens=64,
            messages=[{"role": "user", "content": "stream something"}],
        ) as stream:
            out["stream_text"] = "".join(stream.text_stream)
            out["stream_usage"] = stream.get_final_message().usage.output_tokens
        recorded = client.with_options(
            default_headers={"X-Hecate-Session-Id": session_of("anthropic", model)}
        )
        messages = [{"role": "user", "content": "weather in Paris?"}]
        first = recorded.messages.create(
            model=model, max_tokens=64, messages=messages, tools=[WEATHER_ANTHROPIC]
        )
        call = next(b for b in first.content if b.type == "tool_use")
        out["tool_name"] = call.name
        out["tool_args"] = call.input
        out["tool_stop"] = first.stop_reason
        messages.append({"role": "assistant", "content": first.content})
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call.id, "content": "sunny"}
                ],
            }
        )
        final = recorded.messages.create(
            model=model, max_tokens=64, messages=messages, tools=[WEATHER_ANTHROPIC]
        )
        out["final"] = "".join(b.text for b in final.content if b.type == "text")
        report[model] = out
    return report


def main():
    base, token, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    report = {
        "openai": with_openai(base, token, models),
        "anthropic": with_anthropic(base, token, models),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
