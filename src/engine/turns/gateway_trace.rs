//! The gateway trace of a model turn: the record a `/v1` request leaves, written
//! for an Agent Chat turn answered by a model too, so `GET /hecate/v1/traces`
//! finds the turn by the request id its assistant message carries; and the
//! failed trace of a turn refused before it started, under the request id of
//! its error envelope.

use crate::domain::error::HecateError;
use crate::domain::gateway_conversation::{GatewayTrace, RouteCandidate};
use crate::domain::run::Run;
use crate::domain::session::Session;
use crate::domain::time::{now_millis, parse_millis};
use crate::runtimes::{TurnEnd, TurnReport, TurnTarget};

/// The `client_format` of a trace an Agent Chat turn wrote (a `/v1` request's is
/// `openai` or `anthropic`).
pub const AGENT_CHAT_FORMAT: &str = "agent_chat";

/// The trace of `run`, a turn of `session` that `report` ended; none for a turn
/// not answered by a model (Hecate's agent and external agents trace their own
/// model calls).
pub(super) fn model_turn_trace(
    session: &Session,
    run: &Run,
    target: &TurnTarget,
    report: &TurnReport,
) -> Option<GatewayTrace> {
    let TurnTarget::Model {
        provider,
        model,
        pinned,
    } = target
    else {
        return None;
    };
    // A turn that failed over is traced at the provider that answered it.
    let (provider, model) = match &report.answered_by {
        Some(by) => (&by.provider, &by.model),
        None => (provider, model),
    };
    let (status, error): (&str, Option<&HecateError>) = match &report.end {
        TurnEnd::Completed => ("completed", None),
        TurnEnd::Failed(e) => ("failed", Some(e)),
        TurnEnd::Cancelled => ("cancelled", None),
    };
    let outcome = if status == "completed" {
        "selected"
    } else {
        "failed"
    };
    Some(GatewayTrace {
        request_id: run.request_id.clone(),
        trace_id: run.trace_id.clone().unwrap_or_default(),
        namespace: session.namespace.clone(),
        session_id: Some(session.id.to_string()),
        client_format: AGENT_CHAT_FORMAT.to_string(),
        requested_model: session.model.clone().unwrap_or_else(|| model.clone()),
        provider: provider.clone(),
        model: model.clone(),
        status: status.to_string(),
        usage: report.usage.unwrap_or_default(),
        cost_micros_usd: report.cost_micros_usd,
        duration_ms: parse_millis(&run.started_at)
            .map_or(report.duration_ms, |at| (now_millis() - at).max(0)),
        error_type: error.map(|e| e.error_type.code().to_string()),
        error_message: error.map(|e| e.message.clone()),
        started_at: run.started_at.clone(),
        route_reason: if *pinned {
            "pinned_provider"
        } else {
            "requested_model"
        }
        .to_string(),
        route_candidates: if report.route.is_empty() {
            vec![RouteCandidate {
                provider: provider.clone(),
                model: model.clone(),
                outcome: outcome.to_string(),
                skip_reason: None,
                detail: error.map(|e| e.message.clone()),
            }]
        } else {
            report.route.clone()
        },
    })
}

/// A turn request that may be refused before it starts.
#[derive(Debug, Clone)]
pub(super) struct Refused {
    /// The request id its error envelope carries.
    pub(super) request_id: String,
    /// Namespace of the session.
    pub(super) namespace: String,
    /// The session it was sent to.
    pub(super) session_id: String,
    /// The provider the request named.
    pub(super) provider: Option<String>,
    /// The model the request named.
    pub(super) model: Option<String>,
    /// When it arrived.
    pub(super) started_at: String,
}

impl Refused {
    /// The failed trace of the request refused with `e` after `duration_ms`;
    /// provider and model come from the error's details when it names them.
    pub(super) fn trace(self, e: &HecateError, duration_ms: i64) -> GatewayTrace {
        let detail = |key: &str| {
            e.details
                .get(key)
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        };
        let requested_model = self.model.unwrap_or_default();
        GatewayTrace {
            request_id: self.request_id,
            trace_id: String::new(),
            namespace: self.namespace,
            session_id: Some(self.session_id),
            client_format: AGENT_CHAT_FORMAT.to_string(),
            provider: detail("provider").or(self.provider).unwrap_or_default(),
            model: detail("model").unwrap_or_else(|| requested_model.clone()),
            requested_model,
            status: "failed".to_string(),
            usage: Default::default(),
            cost_micros_usd: None,
            duration_ms,
            error_type: Some(e.error_type.code().to_string()),
            error_message: Some(e.message.clone()),
            started_at: self.started_at,
            route_reason: String::new(),
            route_candidates: Vec::new(),
        }
    }
}
