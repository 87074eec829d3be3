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

/// A cost an agent reported itself (ACP `usage_update`): the session's running
/// total, in `currency` (an ISO 4217 code such as `USD`, or a unit like `credits`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportedCost {
    /// Cumulative amount for the agent's session.
    pub amount: f64,
    /// Unit of `amount`.
    pub currency: String,
}

impl ReportedCost {
    /// What this turn cost in micro-USD, given the running total before it
    /// (`None`: the agent's session started with this turn). Unknown (`None`) when
    /// the unit is not USD, the units differ, or the total went down.
    pub fn turn_micros_usd(&self, before: Option<&ReportedCost>) -> Option<i64> {
        if !self.currency.eq_ignore_ascii_case("USD") || !self.amount.is_finite() {
            return None;
        }
        let spent = match before {
            Some(b) if b.currency.eq_ignore_ascii_case("USD") && b.amount <= self.amount => {
                self.amount - b.amount
            }
            Some(_) => return None,
            None => self.amount,
        };
        (spent >= 0.0).then(|| (spent * 1e6).round() as i64)
    }
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

    #[test]
    fn a_turns_cost_is_the_growth_of_the_running_usd_total() {
        let usd = |amount: f64| ReportedCost {
            amount,
            currency: "USD".into(),
        };
        assert_eq!(usd(0.0125).turn_micros_usd(None), Some(12_500));
        assert_eq!(usd(0.04).turn_micros_usd(Some(&usd(0.0125))), Some(27_500));
        assert_eq!(
            usd(0.01).turn_micros_usd(Some(&usd(0.04))),
            None,
            "went down"
        );
        let credits = ReportedCost {
            amount: 3.0,
            currency: "credits".into(),
        };
        assert_eq!(credits.turn_micros_usd(None), None);
        assert_eq!(usd(1.0).turn_micros_usd(Some(&credits)), None);
    }
}
