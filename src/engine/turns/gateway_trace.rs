//! The gateway trace of a model turn: the record a `/v1` request leaves, written
//! for an Agent Chat turn answered by a model too, so `GET /hecate/v1/traces`
//! finds the turn by the request id its assistant message carries.

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
