//! OpenTelemetry vocabulary and instruments: the spans Hecate opens for model
//! calls, agent runs, tool calls and MCP calls (named and attributed after the
//! `gen_ai.*` and `mcp.*` semantic conventions plus Hecate's own `hecate.*`),
//! the metrics it records, and the ids of a span for storing beside what it
//! produced. Everything here is a no-op unless `hecate` was started with an
//! OTLP endpoint (`cli/telemetry.rs` installs the exporters). A leaf: it imports
//! nothing else from the crate.

pub mod ids;
pub mod metrics;
pub mod spans;

pub use ids::{SpanIds, adopt, current_context, current_trace_headers, span_ids};
