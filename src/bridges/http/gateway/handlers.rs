//! The `/v1` handlers: the model list, and generation in any client wire format
//! (Chat Completions, Messages, Responses) —
//! the body read and checked, the exchange run by the engine, its answer sent
//! back as JSON or as a stream that flows chunk by chunk.

use super::super::HttpState;
use super::super::request_id::RequestIds;
use super::errors::GatewayError;
use super::generation::{ChatSessionHeader, GenerationRequest};
use super::models::{anthropic_list, openai_list};
use super::schema::{
    ChatCompletion, ChatCompletionRequest, GatewayErrorDto, MessagesRequest, MessagesResponse,
    ModelListDto, ResponseObject, ResponsesRequest,
};
use crate::bridges::resources::events::SseEventDto;
use crate::domain::gateway_conversation::valid_chat_session_id;
use crate::engine::gateway::GatewayCall;
use crate::model_wire::{Exchange, ExchangeBody, RequestFacts, WireFormat};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// Headers an Anthropic client sends that an Anthropic provider should see.
const ANTHROPIC_HEADERS: [&str; 2] = ["anthropic-version", "anthropic-beta"];

/// The header naming the chat session a request is recorded in.
pub const SESSION_HEADER: &str = "x-hecate-session-id";

/// The header a supervised agent sends: the Hecate session (Agent Chat) whose
/// turn makes the call. The call is traced and costed under that session; its
/// messages are not matched against a chat session (an agent's side calls
/// would not continue one transcript).
pub const AGENT_SESSION_HEADER: &str = "x-hecate-agent-session";

/// The body field naming it (removed before the body goes upstream).
const SESSION_FIELD: &str = "session_id";

/// The chat session a request names: the header, else the `session_id` body
/// field (which is taken out of the body either way); both present and
/// different, or an unusable id, is refused with the reason.
fn session_id_of(headers: &HeaderMap, body: &mut Value) -> Result<Option<String>, &'static str> {
    let field = match body.as_object_mut().and_then(|o| o.remove(SESSION_FIELD)) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => return Err("`session_id` must be a string"),
    };
    let header = match headers.get(SESSION_HEADER) {
        None => None,
        Some(v) => Some(
            v.to_str()
                .map_err(|_| "X-Hecate-Session-Id is not text")?
                .to_string(),
        ),
    };
    let id = match (header, field) {
        (Some(h), Some(f)) if h != f => {
            return Err("X-Hecate-Session-Id and the `session_id` field name different sessions");
        }
        (h, f) => h.or(f),
    };
    match id {
        Some(id) if !valid_chat_session_id(&id) => {
            Err("a chat session id is 1 to 128 letters, digits, `_`, `-`, `.` or `:`")
        }
        other => Ok(other),
    }
}

/// Whether the request comes from an Anthropic client (it sends `anthropic-version`).
pub fn speaks_anthropic(headers: &HeaderMap) -> bool {
    headers.contains_key("anthropic-version")
}

/// `GET /v1/models`: every routable model, in the Anthropic SDK's page shape
/// when the request carries `anthropic-version`, else OpenAI's list.
#[utoipa::path(
    get,
    path = "/v1/models",
    operation_id = "gateway_list_models",
    tag = "model-gateway",
    responses(
        (status = 200, description = "Every routable model with its routing facts and capabilities", body = ModelListDto),
        (status = 401, description = "A token is configured and the request lacks it", body = GatewayErrorDto),
        (status = "default", description = "A failure in the client's shape", body = GatewayErrorDto)
    )
)]
pub async fn models(State(state): State<HttpState>, headers: HeaderMap) -> Response {
    let models = state.engine.gateway().models().await;
    let body = if speaks_anthropic(&headers) {
        anthropic_list(&models)
    } else {
        openai_list(&models)
    };
    axum::Json(body).into_response()
}

/// The failures every `/v1` generation operation may answer besides its own
/// 400 and 409, each in the client's error shape.
/// Only its OpenAPI description is used; no handler builds one.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
enum GenerationFailures {
    /// A token is configured and the request lacks it.
    #[response(
        status = 401,
        description = "A token is configured and the request lacks it"
    )]
    Unauthorized(GatewayErrorDto),
    /// No configured provider serves the model.
    #[response(status = 404, description = "No configured provider serves the model")]
    NotFound(GatewayErrorDto),
    /// No route candidate may be tried.
    #[response(
        status = 422,
        description = "No route candidate may be tried (policy, budget, tool capability)"
    )]
    NoCandidate(GatewayErrorDto),
    /// The local rate limit, or every provider is rate limited.
    #[response(
        status = 429,
        description = "The local rate limit, or every provider is rate limited (Retry-After)"
    )]
    RateLimited(GatewayErrorDto),
    /// The provider failed, refused Hecate's key or could not be reached.
    #[response(
        status = 502,
        description = "The provider failed, refused Hecate's key or could not be reached"
    )]
    ProviderFailed(GatewayErrorDto),
    /// Every provider for the model is cooling down.
    #[response(
        status = 503,
        description = "Every provider for the model is cooling down (Retry-After)"
    )]
    CoolingDown(GatewayErrorDto),
    /// Any other failure.
    #[response(status = "default", description = "A failure in the client's shape")]
    Other(GatewayErrorDto),
}

/// `POST /v1/chat/completions` (OpenAI Chat Completions), to any provider.
#[utoipa::path(
    post,
    path = "/v1/chat/completions",
    operation_id = "gateway_chat_completions",
    tag = "model-gateway",
    params(ChatSessionHeader),
    request_body = ChatCompletionRequest,
    responses(
        (status = 200, description = "The answer: JSON, or with `stream` an event stream of `chat.completion.chunk`s ending with `data: [DONE]`",
         content((ChatCompletion = "application/json"), (SseEventDto = "text/event-stream"))),
        (status = 400, description = "Unreadable body, a missing field, or something the provider's format cannot express", body = GatewayErrorDto),
        (status = 409, description = "The messages do not continue the named chat session", body = GatewayErrorDto),
        GenerationFailures
    )
)]
pub async fn chat_completions(
    State(state): State<HttpState>,
    request: GenerationRequest,
) -> Response {
    generate(state, WireFormat::OpenAi, request).await
}

/// `POST /v1/messages` (Anthropic Messages), to any provider.
#[utoipa::path(
    post,
    path = "/v1/messages",
    operation_id = "gateway_messages",
    tag = "model-gateway",
    params(ChatSessionHeader),
    request_body = MessagesRequest,
    responses(
        (status = 200, description = "The answer: JSON, or with `stream` an event stream from `message_start` to `message_stop`",
         content((MessagesResponse = "application/json"), (SseEventDto = "text/event-stream"))),
        (status = 400, description = "Unreadable body, a missing field, or something the provider's format cannot express", body = GatewayErrorDto),
        (status = 409, description = "The messages do not continue the named chat session", body = GatewayErrorDto),
        GenerationFailures
    )
)]
pub async fn messages(State(state): State<HttpState>, request: GenerationRequest) -> Response {
    generate(state, WireFormat::Anthropic, request).await
}

/// `POST /v1/responses` (OpenAI Responses API), to any provider: translated
/// through Chat Completions, answered as a `response` object or its event stream.
#[utoipa::path(
    post,
    path = "/v1/responses",
    operation_id = "gateway_responses",
    tag = "model-gateway",
    params(ChatSessionHeader),
    request_body = ResponsesRequest,
    responses(
        (status = 200, description = "The answer: a `response` object, or with `stream` an event stream from `response.created` to `response.completed` (each event named after its `type`, with a `sequence_number`)",
         content((ResponseObject = "application/json"), (SseEventDto = "text/event-stream"))),
        (status = 400, description = "Unreadable body, a missing or unsupported field or item (`previous_response_id`, built-in tool calls), or something the provider's format cannot express", body = GatewayErrorDto),
        (status = 409, description = "The input does not continue the named chat session", body = GatewayErrorDto),
        GenerationFailures
    )
)]
pub async fn responses(State(state): State<HttpState>, request: GenerationRequest) -> Response {
    generate(state, WireFormat::Responses, request).await
}

async fn generate(state: HttpState, format: WireFormat, request: GenerationRequest) -> Response {
    let GenerationRequest { ids, headers, body } = request;
    match run(&state, ids.as_ref(), format, &headers, body).await {
        Ok(exchange) => answer(exchange),
        Err(e) => e.render(format, ids.as_ref()),
    }
}

async fn run(
    state: &HttpState,
    ids: Option<&RequestIds>,
    format: WireFormat,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Exchange, GatewayError> {
    let bytes = body.map_err(|rej| {
        let mut e =
            GatewayError::invalid(format!("the body could not be read: {}", rej.body_text()));
        e.status = rej.status();
        e
    })?;
    let mut body: Value = serde_json::from_slice(&bytes)
        .map_err(|e| GatewayError::invalid(format!("the body is not valid JSON: {e}")))?;
    let facts = RequestFacts::read(format, &body).map_err(|e| GatewayError::untranslatable(&e))?;
    let session_id = session_id_of(headers, &mut body).map_err(GatewayError::invalid)?;
    let agent_session = match headers.get(AGENT_SESSION_HEADER) {
        None => None,
        Some(v) => match v.to_str() {
            Ok(id) if valid_chat_session_id(id) => Some(id.to_string()),
            _ => {
                return Err(GatewayError::invalid(
                    "X-Hecate-Agent-Session is not a session id (1 to 128 letters, digits, `_`, `-`, `.` or `:`)",
                ));
            }
        },
    };
    let anthropic_headers = ANTHROPIC_HEADERS
        .iter()
        .filter_map(|name| {
            let v = headers.get(*name)?.to_str().ok()?;
            Some((name.to_string(), v.to_string()))
        })
        .collect();
    let call = GatewayCall {
        ingress: format,
        body,
        facts,
        anthropic_headers,
        request_id: ids.map(|i| i.request_id.clone()).unwrap_or_default(),
        trace_id: ids.map(|i| i.trace_id.clone()).unwrap_or_default(),
        namespace: state.namespace.to_string(),
        session_id,
        agent_session,
    };
    Ok(state.engine.gateway().exchange(call).await?)
}

/// The exchange's answer: JSON, or an event stream relayed as it arrives.
fn answer(exchange: Exchange) -> Response {
    let (content_type, body) = match exchange.body {
        ExchangeBody::Complete(bytes) => ("application/json", Body::from(bytes)),
        ExchangeBody::Stream(stream) => ("text/event-stream", Body::from_stream(stream)),
    };
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if content_type == "text/event-stream" {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    for (name, value) in [
        ("x-hecate-provider", exchange.provider),
        ("x-hecate-model", exchange.model),
    ] {
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(name, v);
        }
    }
    response
}
