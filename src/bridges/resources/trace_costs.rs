//! Wire types of `GET /hecate/v1/traces/costs`: what the traces a filter selects
//! cost, summed per day, provider or model by the store, so a chart never reads
//! the traces themselves.

use crate::domain::gateway_conversation::{TraceCostBy, TraceCostGroup};
use crate::domain::provider_call::format_usd;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::chat::TraceStatus;

/// How the cost summary groups traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TraceCostGrouping {
    /// The UTC day a request started (`YYYY-MM-DD`), oldest first.
    #[default]
    Day,
    /// The provider the route sent a request to, dearest first.
    Provider,
    /// The model sent to the provider (or the one the client named), dearest first.
    Model,
}

impl From<TraceCostGrouping> for TraceCostBy {
    fn from(g: TraceCostGrouping) -> Self {
        match g {
            TraceCostGrouping::Day => Self::Day,
            TraceCostGrouping::Provider => Self::Provider,
            TraceCostGrouping::Model => Self::Model,
        }
    }
}

/// Query of `GET /hecate/v1/traces/costs`: the filters of the trace list, and
/// the grouping.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TraceCostsQuery {
    /// Group by `day` (the default), `provider` or `model`.
    #[param(inline)]
    pub by: Option<TraceCostGrouping>,
    /// Only requests recorded in this chat session.
    pub session_id: Option<String>,
    /// Only requests that started at or after this RFC 3339 time.
    pub since: Option<String>,
    /// Only requests that started before this RFC 3339 time.
    pub until: Option<String>,
    /// Only requests whose model (sent, or named by the client) is this.
    pub model: Option<String>,
    /// Only requests the route sent to this provider.
    pub provider: Option<String>,
    /// Only requests that ended with this status.
    #[param(inline)]
    pub status: Option<TraceStatus>,
}

/// What one group of traces cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TraceCostGroupDto {
    /// The day (`YYYY-MM-DD`), provider or model; `(no provider)` or
    /// `(no model)` when the trace names none.
    pub key: String,
    /// How many traces.
    pub requests: u64,
    /// How many of them have no known cost (counted as nothing).
    pub unpriced: u64,
    /// Their total tokens.
    pub tokens: u64,
    /// What they cost, in micro-USD.
    pub cost_micros_usd: i64,
    /// The same as a dollar string.
    pub cost_usd: String,
}

impl From<&TraceCostGroup> for TraceCostGroupDto {
    fn from(g: &TraceCostGroup) -> Self {
        Self {
            key: g.key.clone(),
            requests: g.requests,
            unpriced: g.unpriced,
            tokens: g.tokens,
            cost_micros_usd: g.cost_micros_usd,
            cost_usd: format_usd(g.cost_micros_usd),
        }
    }
}

/// The answer of `GET /hecate/v1/traces/costs`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TraceCostsResponse {
    /// Always `trace_costs`.
    pub object: String,
    /// How the groups were formed.
    pub by: TraceCostGrouping,
    /// The upper time bound the sums were taken under (RFC 3339): the query's
    /// `until`, or the moment of the answer, so a later call with it as `until`
    /// gives the same sums.
    pub until: String,
    /// The groups: days oldest first, providers and models dearest first.
    pub groups: Vec<TraceCostGroupDto>,
    /// Every group together (key `total`).
    pub total: TraceCostGroupDto,
}

impl TraceCostsResponse {
    /// The answer for `groups`, with their total.
    pub fn new(by: TraceCostGrouping, until: String, groups: &[TraceCostGroup]) -> Self {
        let total = groups.iter().fold(
            TraceCostGroup {
                key: "total".to_string(),
                ..TraceCostGroup::default()
            },
            |mut t, g| {
                t.requests += g.requests;
                t.unpriced += g.unpriced;
                t.tokens += g.tokens;
                t.cost_micros_usd += g.cost_micros_usd;
                t
            },
        );
        Self {
            object: "trace_costs".to_string(),
            by,
            until,
            groups: groups.iter().map(TraceCostGroupDto::from).collect(),
            total: TraceCostGroupDto::from(&total),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(key: &str, requests: u64, unpriced: u64, micros: i64) -> TraceCostGroup {
        TraceCostGroup {
            key: key.to_string(),
            requests,
            unpriced,
            tokens: requests * 10,
            cost_micros_usd: micros,
        }
    }

    #[test]
    fn the_total_adds_every_group() {
        let r = TraceCostsResponse::new(
            TraceCostGrouping::Provider,
            "2026-11-29T00:00:00Z".into(),
            &[group("a", 3, 1, 1_500_000), group("b", 2, 0, 250)],
        );
        assert_eq!(r.total.requests, 5);
        assert_eq!(r.total.unpriced, 1);
        assert_eq!(r.total.tokens, 50);
        assert_eq!(r.total.cost_micros_usd, 1_500_250);
        assert_eq!(r.total.cost_usd, format_usd(1_500_250));
        assert_eq!(r.groups[1].key, "b");
    }

    #[test]
    fn no_traces_cost_nothing() {
        let r = TraceCostsResponse::new(TraceCostGrouping::Day, "x".into(), &[]);
        assert!(r.groups.is_empty());
        assert_eq!((r.total.requests, r.total.cost_micros_usd), (0, 0));
        assert_eq!(r.total.key, "total");
    }
}
