//! The `/v1` wire shapes as the OpenAPI document describes them: the OpenAI
//! Chat Completions, OpenAI Responses and Anthropic Messages requests and answers, both model
//! lists and both error shapes. The handlers read bodies as JSON values (so
//! fields Hecate does not know still reach a provider of the same format);
//! these types document the fields Hecate reads and writes, and a unit test
//! holds them to real bodies. Only the OpenAPI document's generation (the tests;
//! the binary serves the committed document) uses them.
#![cfg_attr(not(test), allow(dead_code))]

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// A message's content: text, or a list of parts.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum OpenAiContent {
    /// Plain text.
    Text(String),
    /// Text and image parts.
    Parts(Vec<OpenAiPart>),
}

/// One content part: `{"type": "text", "text"}` or `{"type": "image_url", "image_url": {"url"}}`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OpenAiPart {
    /// `text` or `image_url`.
    #[schema(pattern = "^(text|image_url)$")]
    pub r#type: String,
    /// The text of a `text` part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `{"url": "data:…" | "https://…"}` of an `image_url` part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub image_url: Option<Value>,
}

/// One Chat Completions message.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OpenAiMessage {
    /// `system`, `developer`, `user`, `assistant` or `tool`.
    #[schema(pattern = "^(system|developer|user|assistant|tool)$")]
    pub role: String,
    /// The content (absent or null beside an assistant's tool calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<OpenAiContent>,
    /// An assistant's tool calls: `{"id", "type": "function", "function": {"name", "arguments"}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub tool_calls: Option<Vec<Value>>,
    /// A `tool` message: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// `POST /v1/chat/completions`: an OpenAI Chat Completions request. Fields not
/// listed pass through to an OpenAI-compatible provider.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ChatCompletionRequest {
    /// `provider/model`, a bare model (see `GET /v1/models`), or absent for
    /// `[gateway] default_model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The conversation.
    pub messages: Vec<OpenAiMessage>,
    /// Stream the answer as `chat.completion.chunk` events ending with `[DONE]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// `{"include_usage": true}` ends a stream with a usage chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub stream_options: Option<Value>,
    /// Output token cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub max_tokens: Option<u32>,
    /// Output token cap (newer name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub max_completion_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0.0, maximum = 2.0)]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub top_p: Option<f64>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
    /// Function tools: `{"type": "function", "function": {"name", "description", "parameters"}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub tools: Option<Vec<Value>>,
    /// The chat session to record the exchange in (also `X-Hecate-Session-Id`);
    /// taken out before the body goes upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^[A-Za-z0-9_.:-]{1,128}$")]
    pub session_id: Option<String>,
}

/// One choice of a complete answer.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ChatCompletionChoice {
    /// Its position.
    pub index: u32,
    /// The assistant message (`role`, `content`, `tool_calls`).
    #[schema(value_type = Object)]
    pub message: Value,
    /// `stop`, `length`, `tool_calls` or `content_filter`.
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// A complete Chat Completions answer (`stream` false).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ChatCompletion {
    /// Answer id.
    pub id: String,
    /// `chat.completion`.
    pub object: String,
    /// The model that answered.
    pub model: String,
    /// The choices (one).
    pub choices: Vec<ChatCompletionChoice>,
    /// `prompt_tokens`, `completion_tokens`, `total_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub usage: Option<Value>,
}

/// An Anthropic message's content: text, or a list of blocks.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum AnthropicContent {
    /// Plain text.
    Text(String),
    /// Content blocks.
    Blocks(Vec<AnthropicBlock>),
}

/// One content block: `text`, `image`, `tool_use`, `tool_result` or `thinking`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AnthropicBlock {
    /// The block's type.
    #[schema(pattern = "^(text|image|tool_use|tool_result|thinking)$")]
    pub r#type: String,
    /// A `text` block's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A `tool_use` block's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A `tool_use` block's tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A `tool_use` block's arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub input: Option<Value>,
    /// A `tool_result` block's call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// A `tool_result` block's content, an `image` block's `source`, ….
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub content: Option<Value>,
}

/// One Messages turn.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AnthropicMessage {
    /// `user` or `assistant`.
    #[schema(pattern = "^(user|assistant)$")]
    pub role: String,
    /// The content.
    pub content: AnthropicContent,
}

/// `POST /v1/messages`: an Anthropic Messages request. Fields not listed pass
/// through to an Anthropic provider.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MessagesRequest {
    /// `provider/model`, a bare model (see `GET /v1/models`), or absent for
    /// `[gateway] default_model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Output token cap.
    #[schema(minimum = 1)]
    pub max_tokens: u32,
    /// The conversation (at least one turn).
    #[schema(min_items = 1)]
    pub messages: Vec<AnthropicMessage>,
    /// The system prompt (text or text blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub system: Option<Value>,
    /// Stream the answer as `message_start` … `message_stop` events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub temperature: Option<f64>,
    /// Tools: `{"name", "description", "input_schema"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub tools: Option<Vec<Value>>,
    /// The chat session to record the exchange in (also `X-Hecate-Session-Id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^[A-Za-z0-9_.:-]{1,128}$")]
    pub session_id: Option<String>,
}

/// A complete Messages answer (`stream` false).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MessagesResponse {
    /// Answer id.
    pub id: String,
    /// `message`.
    pub r#type: String,
    /// `assistant`.
    pub role: String,
    /// The model that answered.
    pub model: String,
    /// Content blocks (`text`, `thinking`, `tool_use`).
    #[schema(value_type = Vec<Object>)]
    pub content: Vec<Value>,
    /// `end_turn`, `max_tokens`, `stop_sequence`, `tool_use` or `refusal`.
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// `input_tokens`, `output_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub usage: Option<Value>,
}

/// A Responses request's `input`: text (one user message), or a list of items.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum ResponsesInput {
    /// One user message.
    Text(String),
    /// Items in order.
    Items(Vec<ResponsesItem>),
}

/// One input item: a `message` (`role`, `content` as text or parts
/// `input_text` / `output_text` / `input_image`), a `function_call`
/// (`call_id`, `name`, `arguments`), a `function_call_output` (`call_id`,
/// `output`) or a `reasoning` item (left out).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ResponsesItem {
    /// The item's type (`message` when absent and a `role` is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^(message|function_call|function_call_output|reasoning)$")]
    pub r#type: Option<String>,
    /// A message's role: `user`, `assistant`, `system` or `developer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^(user|assistant|system|developer)$")]
    pub role: Option<String>,
    /// A message's content: text or parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub content: Option<Value>,
    /// A function call's id, or the call a function output answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// A function call's function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A function call's arguments (JSON text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
    /// A function call's output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

/// `POST /v1/responses`: an OpenAI Responses request, translated through Chat
/// Completions for either kind of provider. `previous_response_id` is refused
/// (Hecate does not store responses); `store`, `metadata`, `reasoning`, `text`
/// and built-in tools are accepted and not forwarded.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ResponsesRequest {
    /// `provider/model`, a bare model (see `GET /v1/models`), or absent for
    /// `[gateway] default_model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The conversation.
    pub input: ResponsesInput,
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Stream the answer as `response.*` events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Output token cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0.0, maximum = 2.0)]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub top_p: Option<f64>,
    /// Function tools, flat: `{"type": "function", "name", "description",
    /// "parameters"}`; other tool types are left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub tools: Option<Vec<Value>>,
    /// `auto`, `none`, `required` or `{"type": "function", "name"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub tool_choice: Option<Value>,
    /// Whether the model may call several tools in one answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Accepted and ignored: nothing is stored by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    /// Accepted, not forwarded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Value>,
    /// The chat session to record the exchange in (also `X-Hecate-Session-Id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^[A-Za-z0-9_.:-]{1,128}$")]
    pub session_id: Option<String>,
}

/// A complete Responses answer (`stream` false).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ResponseObject {
    /// `resp_…`.
    pub id: String,
    /// `response`.
    pub object: String,
    /// Unix seconds.
    pub created_at: u64,
    /// `completed`, or `incomplete` (`incomplete_details.reason`
    /// `max_output_tokens` or `content_filter`).
    pub status: String,
    /// The model that answered.
    pub model: String,
    /// Output items: a `message` (`content` of `output_text`), then one
    /// `function_call` (`call_id`, `name`, `arguments`) per tool call.
    #[schema(value_type = Vec<Object>)]
    pub output: Vec<Value>,
    /// `input_tokens`, `output_tokens`, `total_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub usage: Option<Value>,
}

/// One routable model: OpenAI's `{"id", "object": "model", "owned_by",
/// "metadata"}` or the Anthropic page's `{"type": "model", "id",
/// "display_name", "created_at"}`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ListedModelDto {
    /// The id to send: `provider/model`, or a bare model one provider serves.
    pub id: String,
    /// `model` (OpenAI list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The provider serving it (OpenAI list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owned_by: Option<String>,
    /// Hecate's routing facts (OpenAI list): `provider`, `provider_kind`,
    /// `model`, `default`, `discovery_source` and the effective `capabilities`
    /// (`tool_calling`, `streaming`, `vision`, `max_context_tokens`, `source`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Value>,
    /// `model` (Anthropic page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    /// `MODEL (PROVIDER)` (Anthropic page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
}

/// `GET /v1/models`: OpenAI's list, or (with `anthropic-version`) the Anthropic
/// SDK's page (`data` of `{"type": "model", "id", "display_name",
/// "created_at"}`, `has_more`, `first_id`, `last_id`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ModelListDto {
    /// `list` (absent in the Anthropic page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The models.
    pub data: Vec<ListedModelDto>,
}

/// A gateway failure: OpenAI's `{"error": {…}}` or Anthropic's `{"type":
/// "error", "error": {…}}`; either error object carries `type`, `message`,
/// `code`, Hecate's `hecate_type`, `user_message`, `operator_action`,
/// `request_id`, `trace_id` and repair details (`reason`, `provider`,
/// `route_candidates`, …).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct GatewayErrorDto {
    /// `error` in the Anthropic shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    /// The error object.
    pub error: GatewayErrorObject,
}

/// The error object of a gateway failure.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct GatewayErrorObject {
    /// OpenAI `invalid_request_error`, `rate_limit_error`, `api_error`, or the
    /// Anthropic type (`not_found_error`, `authentication_error`, …).
    pub r#type: String,
    /// What went wrong.
    pub message: String,
    /// The specific code, e.g. `model_not_found`, `provider_rate_limited`.
    pub code: String,
    /// Hecate's stable type (the error envelope's).
    pub hecate_type: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_documented_shapes_read_real_bodies() {
        let req: ChatCompletionRequest = serde_json::from_value(json!({
            "model": "ollama/qwen", "stream": true, "max_tokens": 5,
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "hi"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
                    "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}))
        .expect("chat request");
        assert_eq!(req.messages.len(), 4);
        let m: MessagesRequest = serde_json::from_value(json!({
            "model": "m", "max_tokens": 9, "system": "s",
            "messages": [{"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": "t", "content": "x"}]}]}))
        .expect("messages request");
        assert_eq!(m.max_tokens, 9);
        let a: ChatCompletion = serde_json::from_value(json!({
            "id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                "finish_reason": "stop"}], "usage": {"prompt_tokens": 1}}))
        .expect("completion");
        assert_eq!(a.choices[0].finish_reason.as_deref(), Some("stop"));
        let r: MessagesResponse = serde_json::from_value(json!({
            "id": "m", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"}))
        .expect("message");
        assert_eq!(r.role, "assistant");
        let rq: ResponsesRequest = serde_json::from_value(json!({
            "model": "m", "instructions": "s", "stream": true, "store": false,
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c", "output": "ok"}],
            "tools": [{"type": "function", "name": "f", "parameters": {}}]}))
        .expect("responses request");
        assert!(matches!(rq.input, ResponsesInput::Items(ref i) if i.len() == 3));
        let ro: ResponseObject = serde_json::from_value(json!({
            "id": "resp_1", "object": "response", "created_at": 1, "status": "completed",
            "model": "m", "output": [{"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "hi", "annotations": []}]}],
            "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}))
        .expect("response");
        assert_eq!(ro.status, "completed");
        let l: ModelListDto = serde_json::from_value(json!({"object": "list", "data": [
            {"id": "p/m", "object": "model", "created": 0, "owned_by": "p",
             "metadata": {"capabilities": {"tool_calling": "unknown"}}}]}))
        .expect("list");
        assert_eq!(l.data[0].owned_by.as_deref(), Some("p"));
        let e: GatewayErrorDto = serde_json::from_value(json!({"type": "error", "error": {
            "type": "not_found_error", "message": "no", "code": "model_not_found",
            "hecate_type": "model_not_configured"}}))
        .expect("error");
        assert_eq!(e.error.code, "model_not_found");
    }
}
