//! Recorded gateway conversations: the session and provider-call columns and their decoders.

use super::StoredRow;
use crate::domain::gateway_conversation::{GatewayCall, GatewayConversation, GatewayMessage};
use crate::domain::ids::MessageId;
use serde_json::Value;

/// The columns a row must start with for its decoder, in the order it reads them.
pub(crate) const CONVERSATION_COLUMNS: &str =
    "id, namespace, title, system_prompt, user_name, created_at, updated_at";

/// The columns a row must start with for its decoder, in the order it reads them.
pub(crate) const CONVERSATION_CALL_COLUMNS: &str = "id, request_id, provider, model, cost_micros_usd, prompt_tokens, \
     completion_tokens, total_tokens, outcome, duration_ms, created_at";

/// A gateway conversation from a row that starts with its columns.
pub(crate) fn conversation<R: StoredRow>(r: &R) -> Result<GatewayConversation, R::Error> {
    Ok(GatewayConversation {
        id: r.col(0)?,
        namespace: r.col(1)?,
        title: r.col(2)?,
        system_prompt: r.col(3)?,
        user: r.col(4)?,
        created_at: r.col(5)?,
        updated_at: r.col(6)?,
    })
}

/// A provider call of a recorded conversation from a row that starts with its columns.
pub(crate) fn call<R: StoredRow>(r: &R) -> Result<GatewayCall, R::Error> {
    Ok(GatewayCall {
        id: r.col(0)?,
        request_id: r.col(1)?,
        provider: r.col(2)?,
        model: r.col(3)?,
        cost_micros_usd: r.col(4)?,
        usage: r.usage(5)?,
        outcome: r.col(8)?,
        duration_ms: r.col(9)?,
        created_at: r.col(10)?,
    })
}

/// The messages an exchange appends from sequence `first` on at `now`: the new
/// request messages, then the answer the provider call `call_id` produced,
/// each under a fresh id.
pub(crate) fn exchange_messages(
    new_messages: Vec<Value>,
    answer: Value,
    first: i64,
    call_id: &str,
    now: &str,
) -> Vec<GatewayMessage> {
    let answer_at = new_messages.len();
    new_messages
        .into_iter()
        .chain([answer])
        .enumerate()
        .map(|(i, message)| GatewayMessage {
            id: MessageId::generate().0,
            sequence: first + i as i64,
            produced_by_call_id: (i == answer_at).then(|| call_id.to_string()),
            message,
            created_at: now.to_string(),
        })
        .collect()
}
