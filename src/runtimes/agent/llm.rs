//! One tool-enabled model turn of an `agent_loop` run: the conversation and the
//! tool catalog sent to the resolved provider, streamed, answered with the
//! text, the tool calls, the usage and the cost priced from the pricebook.

use super::conversation::Conversation;
use crate::adapters::providers::{ChatRequest, ProviderError, StreamDelta, ToolDefinition};
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::message::{ToolCall, plain_text};
use crate::domain::provider_call::Usage;
use crate::runtimes::model::{DEFAULT_MAX_TOKENS, ModelRuntime, ModelTarget};
use tokio_util::sync::CancellationToken;

/// What one model turn answered.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelTurn {
    /// The answer text.
    pub text: String,
    /// The tool calls it asked for.
    pub tool_calls: Vec<ToolCall>,
    /// Token usage, when reported.
    pub usage: Option<Usage>,
    /// Cost in micro-USD, when the price is known.
    pub cost_micros_usd: Option<i64>,
    /// Why generation stopped, as the provider said it.
    pub stop_reason: Option<String>,
}

/// A model turn that failed: its classified error, and whether the provider
/// failed rather than the request (another provider may answer it instead).
#[derive(Debug, Clone)]
pub struct TurnFailure {
    /// The classified error.
    pub error: HecateError,
    /// Whether another provider may take the turn (429, 5xx, unreachable, ...).
    pub provider_side: bool,
    /// The provider's HTTP status, when it answered with one.
    pub status: Option<u16>,
    /// The provider's `retry-after`, when it sent one.
    pub retry_after: Option<String>,
}

/// What one model turn asks the model.
#[derive(Debug, Clone)]
pub struct Ask<'a> {
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation so far.
    pub conversation: &'a Conversation,
    /// The tools offered (none: the request names no tools).
    pub tools: Vec<ToolDefinition>,
    /// The reasoning effort asked for (`low`, `medium`, `high`); the model's
    /// own default when unset.
    pub reasoning_effort: Option<String>,
}

/// Calls `target` with what `ask` holds, handing each streamed piece to
/// `on_delta` as it comes; a provider failure is its classified error, a
/// cancel is `None`.
pub async fn call(
    models: &ModelRuntime,
    target: &ModelTarget,
    ask: Ask<'_>,
    cancel: &CancellationToken,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
) -> Option<Result<ModelTurn, TurnFailure>> {
    let Some(client) = models.client(&target.provider) else {
        return Some(Err(TurnFailure {
            error: HecateError::new(
                ErrorType::RouteImpossible,
                format!("no configured provider is named {:?}", target.provider),
            ),
            provider_side: false,
            status: None,
            retry_after: None,
        }));
    };
    let req = ChatRequest {
        model: target.model.clone(),
        system: ask.system,
        messages: ask.conversation.to_messages(),
        max_tokens: DEFAULT_MAX_TOKENS,
        tools: ask.tools,
        reasoning_effort: ask.reasoning_effort,
    };
    let result = tokio::select! {
        r = client.stream_chat(&req, on_delta) => r,
        _ = cancel.cancelled() => return None,
    };
    let outcome = match result {
        Ok(o) => o,
        Err(f) => {
            let (status, retry_after) = match &f.error {
                ProviderError::Status {
                    status,
                    retry_after,
                    ..
                } => (Some(*status), retry_after.clone()),
                _ => (None, None),
            };
            return Some(Err(TurnFailure {
                provider_side: f.error.provider_side(),
                status,
                retry_after,
                error: f.error.into_hecate(&target.provider, &target.model),
            }));
        }
    };
    let cost = outcome.usage.and_then(|u| {
        models.pricebook().cost(
            &target.provider,
            &target.model,
            u.prompt_tokens,
            u.completion_tokens,
        )
    });
    Some(Ok(ModelTurn {
        text: plain_text(&outcome.blocks),
        tool_calls: outcome.tool_calls,
        usage: outcome.usage,
        cost_micros_usd: cost,
        stop_reason: outcome.stop_reason,
    }))
}
