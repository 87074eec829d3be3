//! W3C trace context a request carries in `_meta` (`traceparent`,
//! `tracestate`; SEP-414): the caller's span becomes the parent of the span
//! Hecate opens for the request. A missing or malformed `traceparent` leaves
//! the span a root, as without the key.

use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use rmcp::model::MetaObject;
use std::collections::HashMap;

/// Whether `traceparent` has the W3C shape: version, 32-digit trace id,
/// 16-digit parent id and flags, lowercase hex joined by `-` (the propagator
/// alone takes shorter ids).
fn well_formed(traceparent: &str) -> bool {
    let widths = [2, 32, 16, 2];
    let parts: Vec<&str> = traceparent.split('-').collect();
    parts.len() >= widths.len()
        && parts.iter().zip(widths).all(|(part, width)| {
            part.len() == width && part.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        })
}

/// The remote parent `meta` names, or `None` when it names no valid one.
pub(crate) fn parent(meta: &MetaObject) -> Option<opentelemetry::Context> {
    let traceparent = meta.get_traceparent().filter(|t| well_formed(t))?;
    let mut carrier = HashMap::new();
    carrier.insert("traceparent".to_string(), traceparent.to_string());
    if let Some(state) = meta.get_tracestate() {
        carrier.insert("tracestate".to_string(), state.to_string());
    }
    let cx = TraceContextPropagator::new().extract(&carrier);
    cx.span().span_context().is_valid().then_some(cx)
}

/// Makes the caller `meta` names the parent of `span` (not yet entered).
pub(crate) fn adopt_caller(span: &tracing::Span, meta: &MetaObject) {
    if let Some(cx) = parent(meta) {
        crate::telemetry::adopt(span, cx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(traceparent: &str) -> MetaObject {
        let mut m = MetaObject::new();
        m.set_traceparent(traceparent);
        m
    }

    #[test]
    fn a_valid_traceparent_is_a_remote_parent() {
        let cx = parent(&meta(
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        ))
        .expect("valid");
        let sc = cx.span().span_context().clone();
        assert_eq!(
            sc.trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(sc.span_id().to_string(), "b7ad6b7169203331");
        assert!(sc.is_remote() && sc.is_sampled());
    }

    #[test]
    fn malformed_or_missing_traceparents_name_no_parent() {
        for bad in [
            "",
            "garbage",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319-b7ad6b7169203331-01",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01",
        ] {
            assert!(parent(&meta(bad)).is_none(), "{bad:?}");
        }
        assert!(parent(&MetaObject::new()).is_none());
    }
}
