//! Provider calls: the observability stream beside messages (routing, tokens, cost).

use crate::domain::ids::{CallId, RunId, SessionId};
use serde::{Deserialize, Serialize};

/// Token counts reported by a provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub completion_tokens: u64,
    /// Sum of both (or the provider's own total).
    pub total_tokens: u64,
}

/// One upstream model request and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderCall {
    /// Call id; messages point at it with `produced_by_call_id`.
    pub id: CallId,
    /// Owning session.
    pub session_id: SessionId,
    /// Owning turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunId>,
    /// The request id of the turn that made the call.
    pub request_id: String,
    /// Provider name as configured.
    pub provider: String,
    /// Model as sent to the provider.
    pub model: String,
    /// Token usage.
    #[serde(flatten)]
    pub usage: Usage,
    /// Cost in micro-USD, or `None` when the price is unknown (never a fake 0).
    pub cost_micros_usd: Option<i64>,
    /// Wall time of the call in milliseconds.
    pub duration_ms: i64,
    /// Creation time.
    pub created_at: String,
}

/// Formats micro-USD as a decimal dollar string, e.g. `0.001234`.
pub fn format_usd(micros: i64) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let m = micros.unsigned_abs();
    format!("{sign}{}.{:06}", m / 1_000_000, m % 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_micro_usd() {
        assert_eq!(format_usd(1234), "0.001234");
        assert_eq!(format_usd(2_500_000), "2.500000");
    }
}
