//! The W3C trace and span ids of a `tracing` span, as OpenTelemetry exports them.

use opentelemetry::trace::TraceContextExt as _;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_without_an_exporter_has_no_ids() {
        let span = tracing::info_span!("x");
        assert_eq!(span_ids(&span), None);
    }
}
