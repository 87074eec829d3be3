//! A turn's OpenTelemetry span (`agent_chat.run`): opened before the run is
//! stored, so the run keeps the span's trace and span ids (and the assistant
//! message shows them), described with what the turn runs, and closed with how
//! it ended, counted in the run metrics.

use crate::domain::error::HecateError;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::run::RunStatus;
use crate::domain::session::RuntimeKind;
use crate::engine::Engine;
use crate::runtimes::{TurnReport, TurnTarget};
use crate::telemetry::metrics;
use crate::telemetry::spans::{self, RunReport, RunTarget};
use crate::telemetry::{SpanIds, span_ids};
use std::time::Instant;
use tracing::Span;

/// A turn's span and when it started.
pub(super) struct TurnSpan {
    pub(super) span: Span,
    pub(super) ids: Option<SpanIds>,
    started: Instant,
    kind: RuntimeKind,
    adapter: Option<String>,
}

impl Engine {
    /// Opens the span of run `run_id` of `session_id` answering `target`, as a
    /// child of the caller's span (an HTTP request's, when there is one).
    pub(super) fn open_turn_span(
        &self,
        session_id: &SessionId,
        run_id: &RunId,
        request_id: &str,
        kind: RuntimeKind,
        target: &TurnTarget,
    ) -> TurnSpan {
        let span = spans::agent_chat_run(
            session_id.as_str(),
            run_id.as_str(),
            request_id,
            kind.as_str(),
        );
        let mut adapter = None;
        match target {
            TurnTarget::Model {
                provider, model, ..
            } => {
                spans::run_target(&span, RunTarget::Model { provider, model });
            }
            TurnTarget::Agent {
                provider,
                model,
                workspace,
                ..
            } => spans::run_target(
                &span,
                RunTarget::Agent {
                    provider,
                    model,
                    workspace,
                },
            ),
            TurnTarget::External {
                adapter_id,
                workspace,
                ..
            } => {
                let command = self.agents().adapter_command(adapter_id);
                spans::run_target(
                    &span,
                    RunTarget::External {
                        adapter_id,
                        command: command.as_deref(),
                        workspace,
                    },
                );
                adapter = Some(adapter_id.clone());
            }
        }
        let ids = span_ids(&span);
        TurnSpan {
            span,
            ids,
            started: Instant::now(),
            kind,
            adapter,
        }
    }
}

impl TurnSpan {
    /// Records how the turn ended (`status`, with the error of a failed one and
    /// the reason of a cancelled one) on its span and in the run metrics.
    pub(super) fn close(
        &self,
        status: RunStatus,
        error: Option<&HecateError>,
        cancel_reason: Option<&str>,
    ) {
        let status = status.as_str();
        let error = error.map(|e| (e.error_type.code(), e.message.as_str()));
        spans::run_end(&self.span, status, error);
        if let Some(reason) = cancel_reason {
            self.span.record("hecate.run.cancel_reason", reason);
        }
        metrics::run(
            self.kind.as_str(),
            status,
            self.adapter.as_deref(),
            cancel_reason,
            self.started.elapsed(),
        );
    }
}

/// Records what a turn's runtime reported on the current span (the turn's:
/// the driver runs inside it): usage, an external agent's native session, the
/// size of its answer and whether a diff was captured, a backing task.
pub(super) fn record_report(
    report: &TurnReport,
    external: bool,
    answer_bytes: usize,
    diff_captured: bool,
) {
    let task = report
        .backing_task
        .as_ref()
        .map(|(t, r)| (t.to_string(), r.to_string()));
    spans::run_report(
        &Span::current(),
        &RunReport {
            tokens: report.usage.map(|u| (u.prompt_tokens, u.completion_tokens)),
            native_session_id: report.native_session_id.as_deref(),
            output_bytes: external.then_some(answer_bytes as u64),
            diff_captured: external.then_some(diff_captured),
            task: task.as_ref().map(|(t, r)| (t.as_str(), r.as_str())),
        },
    );
}
