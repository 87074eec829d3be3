//! The W3C trace and span ids of a `tracing` span, as OpenTelemetry exports them.

use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use std::collections::HashMap;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// A span's ids in lowercase hex (32 and 16 digits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanIds {
    /// The trace the span belongs to.
    pub trace_id: String,
    /// The span itself.
    pub span_id: String,
}

/// The ids `span` is exported with, or `None` when no exporter is installed
/// (the span then has no OpenTelemetry counterpart).
pub fn span_ids(span: &tracing::Span) -> Option<SpanIds> {
    let cx = span.context();
    let sc = cx.span().span_context().clone();
    sc.is_valid().then(|| SpanIds {
        trace_id: sc.trace_id().to_string(),
        span_id: sc.span_id().to_string(),
    })
}

/// The OpenTelemetry context of the current span (empty without an exporter),
/// for a span started elsewhere to join with [`adopt`].
pub fn current_context() -> opentelemetry::Context {
    tracing::Span::current().context()
}

/// The W3C trace context (`traceparent`, and `tracestate` when set) of the
/// current span, for a request that carries it to another process; empty
/// without an exporter.
pub fn current_trace_headers() -> HashMap<String, String> {
    let mut carrier = HashMap::new();
    let cx = current_context();
    if cx.span().span_context().is_valid() {
        TraceContextPropagator::new().inject_context(&cx, &mut carrier);
    }
    carrier
}

/// Makes `span`, not yet entered, a child of `parent`'s span (nothing happens
/// without an exporter).
pub fn adopt(span: &tracing::Span, parent: opentelemetry::Context) {
    if parent.span().span_context().is_valid() {
        let _ = span.set_parent(parent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_without_an_exporter_has_no_ids() {
        let span = tracing::info_span!("x");
        assert_eq!(span_ids(&span), None);
        let _in = span.enter();
        assert!(current_trace_headers().is_empty());
    }
}
