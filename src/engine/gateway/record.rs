//! Recording gateway requests. A request with a chat session id is first matched
//! against the session's stored history (the client resends the whole
//! conversation each call; the stored messages must be its prefix, else
//! `conflict`), and its new messages and the answer with its provider call are
//! appended at the end of the exchange in one transaction together with the
//! request's trace. Every other ending — no session, a failure — leaves the
//! trace alone, so a failed upstream never half-writes a session.

use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::gateway_conversation::{
    GatewayCall, GatewayTrace, RecordedExchange, RouteCandidate,
};
use crate::domain::ids::CallId;
use crate::domain::provider_call::Usage;
use crate::domain::time::now_rfc3339;
use crate::engine::Gateway;
use crate::model_wire::requests::transcript::{Fingerprint, is_system_prompt, request_messages};
use crate::model_wire::{ExchangeEnd, ExchangeOutcome, TokenUsage, WireFormat};
use crate::telemetry::metrics;
use crate::telemetry::spans::{Inference, InferenceEnd};
use serde_json::Value;
use std::time::Instant;

/// Detail `reason` of a resent history that does not extend the stored one.
pub const HISTORY_MISMATCH: &str = "chat_session_history_mismatch";

/// The provider and model that answered an exchange, with the span of that attempt.
#[derive(Debug)]
pub struct Answerer {
    /// The provider's name.
    pub provider: String,
    /// The model as the provider names it.
    pub model: String,
    /// The attempt's `chat {model}` span, ended when the exchange is recorded.
    pub traced: Inference,
}

/// The route a request took: why, and what became of each candidate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RouteLog {
    /// `requested_model`, `pinned_provider` or `global_default_model`.
    pub reason: String,
    /// Each candidate in the order considered.
    pub candidates: Vec<RouteCandidate>,
}

/// Where a request's exchange goes in its chat session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionBinding {
    /// The session id.
    pub session_id: String,
    /// Messages the session held when matched (the write checks it again).
    pub expected_count: u64,
    /// The request's messages the session does not hold yet.
    pub new_messages: Vec<Value>,
    /// The session's system prompt (empty: none), put in front of the request
    /// when it has no system message of its own.
    pub system_prompt: String,
}

/// What a request's trace starts from.
#[derive(Debug, Clone)]
pub struct TraceStart {
    /// Namespace of the serving process.
    pub namespace: String,
    /// `X-Request-Id`.
    pub request_id: String,
    /// `X-Trace-Id`.
    pub trace_id: String,
    /// The client's format.
    pub ingress: WireFormat,
    /// The model the client named.
    pub requested_model: String,
    /// The session, when the request named one.
    pub session_id: Option<String>,
    /// When it arrived.
    pub started_at: String,
    /// Its monotonic start.
    pub started: Instant,
}

impl TraceStart {
    /// The trace of this request, ended with `status` at `provider`/`model`
    /// after the route `route`.
    pub fn trace(
        &self,
        status: &str,
        provider: &str,
        model: &str,
        route: &RouteLog,
    ) -> GatewayTrace {
        GatewayTrace {
            request_id: self.request_id.clone(),
            trace_id: self.trace_id.clone(),
            namespace: self.namespace.clone(),
            session_id: self.session_id.clone(),
            client_format: self.ingress.as_str().to_string(),
            requested_model: self.requested_model.clone(),
            provider: provider.to_string(),
            model: model.to_string(),
            status: status.to_string(),
            usage: Usage::default(),
            cost_micros_usd: None,
            duration_ms: self.started.elapsed().as_millis() as i64,
            error_type: None,
            error_message: None,
            started_at: self.started_at.clone(),
            route_reason: route.reason.clone(),
            route_candidates: route.candidates.clone(),
        }
    }
}

fn usage_of(u: TokenUsage) -> Usage {
    Usage {
        prompt_tokens: u.input_tokens,
        completion_tokens: u.output_tokens,
        total_tokens: u.input_tokens + u.output_tokens,
    }
}

impl<'e> Gateway<'e> {
    /// Matches a request's conversation against the stored history of chat
    /// session `session_id` (absent: empty) and says what is new. Answered
    /// partial messages (cut off when a client went away) are not expected back,
    /// and a leading system message saying exactly the session's system prompt
    /// is the prompt, not a message of the session.
    pub async fn bind_session(
        self,
        namespace: &str,
        session_id: &str,
        ingress: WireFormat,
        body: &Value,
    ) -> Result<SessionBinding> {
        let store = self.engine.store();
        let (system_prompt, stored) = match store.get_conversation(namespace, session_id).await {
            Ok(s) => (
                s.system_prompt,
                store.list_conversation_messages(session_id).await?,
            ),
            Err(e) if e.error_type == ErrorType::NotFound => (String::new(), Vec::new()),
            Err(e) => return Err(e),
        };
        let request = request_messages(ingress, body).map_err(|e| {
            HecateError::invalid(e.to_string()).with_detail("reason", super::INVALID_BODY)
        })?;
        let skip = usize::from(
            !system_prompt.is_empty()
                && request
                    .first()
                    .is_some_and(|m| is_system_prompt(m, &system_prompt)),
        );
        let request = &request[skip..];
        let history: Vec<&Value> = stored
            .iter()
            .filter(|m| !m.is_partial())
            .map(|m| &m.message)
            .collect();
        let mismatch = (0..history.len()).find(|&i| {
            request
                .get(i)
                .is_none_or(|m| Fingerprint::of(m) != Fingerprint::of(history[i]))
        });
        if let Some(index) = mismatch {
            return Err(HecateError::new(
                ErrorType::Conflict,
                format!(
                    "the request's messages do not continue chat session {session_id}: \
                     message {index} differs from the stored one ({} stored)",
                    history.len()
                ),
            )
            .with_user_message("The conversation does not match the recorded session.")
            .with_operator_action(
                "Resend the whole recorded history, or use a new session id for a new conversation.",
            )
            .with_detail("reason", HISTORY_MISMATCH)
            .with_detail("session_id", session_id)
            .with_detail("index", index as u64));
        }
        Ok(SessionBinding {
            session_id: session_id.to_string(),
            expected_count: stored.len() as u64,
            new_messages: request[history.len()..].to_vec(),
            system_prompt,
        })
    }

    /// Records a request that failed before an answer started, with the route
    /// it tried.
    pub(super) async fn gateway_record_failure(
        self,
        start: &TraceStart,
        route: &RouteLog,
        e: &HecateError,
    ) {
        let mut trace = start.trace("failed", "", "", route);
        trace.error_type = Some(e.error_type.code().to_string());
        trace.error_message = Some(e.message.clone());
        if let Some(p) = e.details.get("provider").and_then(Value::as_str) {
            trace.provider = p.to_string();
        }
        if let Some(m) = e.details.get("model").and_then(Value::as_str) {
            trace.model = m.to_string();
        }
        metrics::gateway_request(
            start.ingress.as_str(),
            "failed",
            &trace.provider,
            &start.requested_model,
        );
        self.engine
            .inner
            .gateway
            .counters
            .record("failed", None, None);
        self.engine.inner.deferred.traces.record(trace);
    }

    /// Records the end of an exchange answered by `provider`/`model`: the
    /// session's new messages, the answer (marked `partial` when the client went
    /// away) and its provider call with the trace, or the trace alone.
    pub(super) async fn gateway_record_end(
        self,
        start: TraceStart,
        binding: Option<SessionBinding>,
        route: RouteLog,
        answerer: Answerer,
        end: ExchangeEnd,
    ) {
        let Answerer {
            provider,
            model,
            traced,
        } = answerer;
        let status = match &end.outcome {
            ExchangeOutcome::Completed => "completed",
            ExchangeOutcome::Failed(_) => "failed",
            ExchangeOutcome::Cancelled => "cancelled",
        };
        let mut trace = start.trace(status, &provider, &model, &route);
        if let Some(u) = end.usage {
            trace.usage = usage_of(u);
            trace.cost_micros_usd = self.engine.inner.model.pricebook().cost(
                &provider,
                &model,
                u.input_tokens,
                u.output_tokens,
            );
        }
        if let Some(cost) = trace.cost_micros_usd {
            self.engine.inner.gateway.spend.add(&start.namespace, cost);
        }
        if let ExchangeOutcome::Failed(m) = &end.outcome {
            trace.error_type = Some(ErrorType::GatewayError.code().to_string());
            trace.error_message = Some(m.clone());
        }
        traced.gateway_end(status, trace.cost_micros_usd);
        self.engine.inner.gateway.counters.record(
            status,
            end.usage.map(|u| (u.input_tokens, u.output_tokens)),
            trace.cost_micros_usd,
        );
        let requested = match start.requested_model.as_str() {
            "" => model.as_str(),
            named => named,
        };
        metrics::gateway_request(start.ingress.as_str(), status, &provider, requested);
        let error = trace
            .error_message
            .as_deref()
            .map(|m| ("upstream_failed", m));
        traced.finish(InferenceEnd {
            response_model: Some(&model),
            tokens: end.usage.map(|u| (u.input_tokens, u.output_tokens)),
            finish_reason: None,
            error,
        });
        tracing::info!(
            request_id = %start.request_id,
            provider = %provider,
            model = %model,
            ingress = start.ingress.as_str(),
            outcome = ?end.outcome,
            input_tokens = trace.usage.prompt_tokens,
            output_tokens = trace.usage.completion_tokens,
            "gateway exchange ended"
        );
        let store = self.engine.store();
        let binding = binding.filter(|_| status != "failed");
        let Some(binding) = binding else {
            // Stored just after the answer, journalled first (`deferred`).
            self.engine.inner.deferred.traces.record(trace);
            return;
        };
        let mut answer = end.answer;
        if status == "cancelled"
            && let Some(obj) = answer.as_object_mut()
        {
            obj.insert("partial".into(), Value::Bool(true));
        }
        let exchange = RecordedExchange {
            namespace: start.namespace.clone(),
            session_id: binding.session_id,
            expected_count: binding.expected_count,
            new_messages: binding.new_messages,
            answer,
            call: GatewayCall {
                id: CallId::generate().0,
                request_id: start.request_id.clone(),
                provider,
                model,
                usage: trace.usage,
                cost_micros_usd: trace.cost_micros_usd,
                outcome: status.to_string(),
                duration_ms: trace.duration_ms,
                created_at: now_rfc3339(),
            },
            trace: trace.clone(),
        };
        if let Err(e) = store.append_recorded_exchange(exchange).await {
            tracing::warn!(request_id = %start.request_id, "chat exchange not recorded: {e}");
            trace.error_type = Some(e.error_type.code().to_string());
            trace.error_message = Some(format!("the exchange was not recorded: {}", e.message));
            self.engine.inner.deferred.traces.record(trace);
        }
    }
}
