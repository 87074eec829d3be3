//! What this process's gateway answered since it started: requests by outcome,
//! tokens and cost, for `GET /hecate/v1/system/stats`. The traces in the store
//! are the durable record; these are cheap per-process totals.

use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use utoipa::ToSchema;

/// Running totals, updated as each `/v1` exchange is recorded.
#[derive(Debug, Default)]
pub struct GatewayCounters {
    completed: AtomicU64,
    failed: AtomicU64,
    cancelled: AtomicU64,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
    cost_micros_usd: AtomicU64,
}

/// The model gateway's totals since the process started (the traces in the
/// store are the durable record).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = GatewayStatsDto)]
pub struct GatewayTotals {
    /// Requests recorded, whatever their outcome.
    pub requests: u64,
    /// Requests answered in full.
    pub completed: u64,
    /// Requests that failed, before or during the answer.
    pub failed: u64,
    /// Streams the client left before the end.
    pub cancelled: u64,
    /// Input tokens providers reported.
    pub prompt_tokens: u64,
    /// Output tokens providers reported.
    pub completion_tokens: u64,
    /// Cost of the priced requests, in micro-USD.
    pub cost_micros_usd: u64,
}

impl GatewayCounters {
    /// Counts one ended request with status `completed`, `failed` or
    /// `cancelled`, its tokens and its cost when known.
    pub fn record(&self, status: &str, tokens: Option<(u64, u64)>, cost_micros_usd: Option<i64>) {
        let outcome = match status {
            "completed" => &self.completed,
            "cancelled" => &self.cancelled,
            _ => &self.failed,
        };
        outcome.fetch_add(1, Ordering::Relaxed);
        if let Some((input, output)) = tokens {
            self.prompt_tokens.fetch_add(input, Ordering::Relaxed);
            self.completion_tokens.fetch_add(output, Ordering::Relaxed);
        }
        if let Some(cost) = cost_micros_usd.filter(|c| *c > 0) {
            self.cost_micros_usd
                .fetch_add(cost as u64, Ordering::Relaxed);
        }
    }

    /// The totals now.
    pub fn totals(&self) -> GatewayTotals {
        let completed = self.completed.load(Ordering::Relaxed);
        let failed = self.failed.load(Ordering::Relaxed);
        let cancelled = self.cancelled.load(Ordering::Relaxed);
        GatewayTotals {
            requests: completed + failed + cancelled,
            completed,
            failed,
            cancelled,
            prompt_tokens: self.prompt_tokens.load(Ordering::Relaxed),
            completion_tokens: self.completion_tokens.load(Ordering::Relaxed),
            cost_micros_usd: self.cost_micros_usd.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_tokens_and_costs_add_up() {
        let c = GatewayCounters::default();
        c.record("completed", Some((10, 5)), Some(300));
        c.record("completed", Some((1, 1)), None);
        c.record("failed", None, None);
        c.record("cancelled", Some((2, 0)), Some(-1));
        let t = c.totals();
        assert_eq!((t.completed, t.failed, t.cancelled), (2, 1, 1));
        assert_eq!(t.requests, 4);
        assert_eq!((t.prompt_tokens, t.completion_tokens), (13, 6));
        assert_eq!(t.cost_micros_usd, 300);
    }
}
