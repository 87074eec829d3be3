//! The gateway trace of an `agent_loop` model turn: the record a `/v1` request
//! leaves, so the request id on the model step (its input's `request_id`)
//! finds the turn in `GET /hecate/v1/traces`, with the providers it tried.

use crate::domain::error::HecateError;
use crate::domain::gateway_conversation::{GatewayTrace, RouteCandidate};
use crate::domain::ids::RequestId;
use crate::domain::task::Task;
use crate::domain::time::now_rfc3339;
use crate::runtimes::agent::llm::ModelTurn;
use crate::runtimes::model::ModelTarget;
use crate::telemetry::ids::span_ids;
use std::time::Instant;

/// The `client_format` of a trace an `agent_loop` model turn wrote.
pub const AGENT_LOOP_FORMAT: &str = "agent_loop";

/// A model turn's trace in the making.
#[derive(Debug)]
pub(super) struct TurnTrace {
    /// The turn's request id.
    pub(super) request_id: String,
    started_at: String,
    started: Instant,
    route: Vec<RouteCandidate>,
}

impl TurnTrace {
    /// A turn starting now, under a fresh request id.
    pub(super) fn start() -> Self {
        Self {
            request_id: RequestId::generate().0,
            started_at: now_rfc3339(),
            started: Instant::now(),
            route: Vec::new(),
        }
    }

    /// Notes that `from` failed the turn (`reason` the skip reason it earned)
    /// and the next candidate was tried.
    pub(super) fn failed_over(&mut self, from: &ModelTarget, reason: Option<&str>, error: &str) {
        self.route.push(RouteCandidate {
            provider: from.provider.clone(),
            model: from.model.clone(),
            outcome: "failed".into(),
            skip_reason: reason.map(str::to_string),
            detail: Some(error.to_string()),
        });
    }

    /// The trace of a turn of `task` that `target` answered last with
    /// `answer` (`None`: cancelled).
    pub(super) fn finish(
        mut self,
        task: &Task,
        target: &ModelTarget,
        answer: Option<&Result<ModelTurn, HecateError>>,
    ) -> GatewayTrace {
        let (status, outcome, error) = match answer {
            Some(Ok(_)) => ("completed", "selected", None),
            Some(Err(e)) => ("failed", "failed", Some(e)),
            None => ("cancelled", "cancelled", None),
        };
        let turn = answer.and_then(|a| a.as_ref().ok());
        self.route.push(RouteCandidate {
            provider: target.provider.clone(),
            model: target.model.clone(),
            outcome: outcome.into(),
            skip_reason: None,
            detail: error.map(|e| e.message.clone()),
        });
        let pinned = !task.spec.requested_provider.trim().is_empty()
            || task.spec.requested_model.contains('/');
        GatewayTrace {
            request_id: self.request_id,
            trace_id: span_ids(&tracing::Span::current())
                .map(|ids| ids.trace_id)
                .unwrap_or_default(),
            namespace: task.namespace.clone(),
            session_id: None,
            client_format: AGENT_LOOP_FORMAT.to_string(),
            requested_model: match task.spec.requested_model.trim() {
                "" => target.model.clone(),
                m => m.to_string(),
            },
            provider: target.provider.clone(),
            model: target.model.clone(),
            status: status.to_string(),
            usage: turn.and_then(|t| t.usage).unwrap_or_default(),
            cost_micros_usd: turn.and_then(|t| t.cost_micros_usd),
            duration_ms: self.started.elapsed().as_millis() as i64,
            error_type: error.map(|e| e.error_type.code().to_string()),
            error_message: error.map(|e| e.message.clone()),
            started_at: self.started_at,
            route_reason: if pinned {
                "pinned_provider"
            } else {
                "requested_model"
            }
            .to_string(),
            route_candidates: self.route,
        }
    }
}
