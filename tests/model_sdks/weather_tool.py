"""The `weather` tool the SDK clients offer, in the shape of each API."""

WEATHER = {
    "name": "weather",
    "description": "The weather in a city",
}
PARAMETERS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}

# Chat Completions: the function nested under `function`.
CHAT = {"type": "function", "function": {**WEATHER, "parameters": PARAMETERS}}
# Responses: the function's fields beside its `type`.
RESPONSES = {"type": "function", **WEATHER, "parameters": PARAMETERS}
# Anthropic Messages: the schema as `input_schema`.
ANTHROPIC = {**WEATHER, "input_schema": PARAMETERS}
