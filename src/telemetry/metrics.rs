//! The metrics Hecate records, on the global meter (a no-op meter unless
//! `hecate` was started with an OTLP endpoint): the `gen_ai.*` client metrics
//! for every model call, the tool and MCP call durations, and Hecate's own
//! gateway request, Agent Chat run, approval and adapter probe counts.

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Bucket boundaries of `gen_ai.client.token.usage`, as the convention advises.
const TOKEN_BUCKETS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];

/// Bucket boundaries of the duration histograms (seconds), as the convention advises.
const SECONDS_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// Whether a meter provider exports what is recorded; until then recording
/// is skipped before any attribute is built.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns recording on: called once the global meter provider exports
/// (`cli/telemetry.rs`).
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// The instruments, or `None` when nothing would be exported.
fn recording() -> Option<&'static Instruments> {
    ENABLED.load(Ordering::Relaxed).then(instruments)
}

/// Every instrument, built on first use.
struct Instruments {
    token_usage: Histogram<u64>,
    operation_duration: Histogram<f64>,
    gateway_requests: Counter<u64>,
    runs: Counter<u64>,
    run_duration: Histogram<f64>,
    tool_duration: Histogram<f64>,
    mcp_duration: Histogram<f64>,
    approvals_requested: Counter<u64>,
    approvals_resolved: Counter<u64>,
    probes: Counter<u64>,
}

fn instruments() -> &'static Instruments {
    static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();
    INSTRUMENTS.get_or_init(|| {
        let meter = opentelemetry::global::meter("hecate");
        let seconds = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(SECONDS_BUCKETS.to_vec())
                .build()
        };
        Instruments {
            token_usage: meter
                .u64_histogram("gen_ai.client.token.usage")
                .with_unit("{token}")
                .with_description("Input and output tokens of each model call.")
                .with_boundaries(TOKEN_BUCKETS.to_vec())
                .build(),
            operation_duration: seconds(
                "gen_ai.client.operation.duration",
                "Duration of each model call.",
            ),
            gateway_requests: meter
                .u64_counter("hecate.gateway.requests")
                .with_unit("{request}")
                .with_description("Requests answered by the /v1 model gateway.")
                .build(),
            runs: meter
                .u64_counter("hecate.agent_chat.runs")
                .with_unit("{run}")
                .with_description("Session turns (Agent Chat runs) by runtime and status.")
                .build(),
            run_duration: seconds(
                "hecate.agent_chat.run.duration",
                "Duration of each session turn.",
            ),
            tool_duration: seconds(
                "gen_ai.execute_tool.duration",
                "Duration of each tool call of Hecate's agent.",
            ),
            mcp_duration: seconds(
                "mcp.client.operation.duration",
                "Duration of each MCP tools/call Hecate sends upstream.",
            ),
            approvals_requested: meter
                .u64_counter("hecate.approvals.requested")
                .with_unit("{approval}")
                .with_description("Permission requests put to a person (not answered by a grant or mode).")
                .build(),
            approvals_resolved: meter
                .u64_counter("hecate.approvals.resolved")
                .with_unit("{approval}")
                .with_description("Permission requests by how they ended: status and path (operator, grant, default_mode, timeout, ...).")
                .build(),
            probes: meter
                .u64_counter("hecate.agent_adapter.probes")
                .with_unit("{probe}")
                .with_description("Adapter probes by outcome.")
                .build(),
        }
    })
}

/// The facts every model-call metric carries.
#[derive(Debug, Clone)]
pub struct ModelCall<'a> {
    /// `gen_ai.provider.name`: `openai` or `anthropic`.
    pub system: &'a str,
    /// The configured provider name.
    pub provider: &'a str,
    /// The requested model.
    pub model: &'a str,
    /// The model that answered, when known.
    pub response_model: Option<&'a str>,
    /// `error.type` when the call failed.
    pub error_type: Option<&'a str>,
}

impl ModelCall<'_> {
    fn attributes(&self) -> Vec<KeyValue> {
        let mut a = vec![
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("gen_ai.provider.name", self.system.to_string()),
            KeyValue::new("gen_ai.request.model", self.model.to_string()),
            KeyValue::new("hecate.provider.name", self.provider.to_string()),
        ];
        if let Some(m) = self.response_model {
            a.push(KeyValue::new("gen_ai.response.model", m.to_string()));
        }
        if let Some(e) = self.error_type {
            a.push(KeyValue::new("error.type", e.to_string()));
        }
        a
    }
}

/// Records one model call: its duration and, when reported, its tokens.
pub fn model_call(call: &ModelCall<'_>, took: Duration, tokens: Option<(u64, u64)>) {
    let Some(m) = recording() else {
        return;
    };
    let attributes = call.attributes();
    m.operation_duration.record(took.as_secs_f64(), &attributes);
    if let Some((input, output)) = tokens {
        for (kind, count) in [("input", input), ("output", output)] {
            let mut a = attributes.clone();
            a.retain(|kv| kv.key.as_str() != "error.type");
            a.push(KeyValue::new("gen_ai.token.type", kind));
            m.token_usage.record(count, &a);
        }
    }
}

/// Counts one `/v1` request that reached a provider (or failed before).
pub fn gateway_request(ingress: &str, outcome: &str, provider: &str, model: &str) {
    let Some(m) = recording() else {
        return;
    };
    m.gateway_requests.add(
        1,
        &[
            KeyValue::new("hecate.gateway.ingress", ingress.to_string()),
            KeyValue::new("hecate.gateway.outcome", outcome.to_string()),
            KeyValue::new("hecate.provider.name", provider.to_string()),
            KeyValue::new("gen_ai.request.model", model.to_string()),
        ],
    );
}

/// Counts one ended session turn and records its duration; a cancelled one
/// carries why (`hecate.run.cancel_reason`: `requested`, `session_closed`,
/// `shutdown`, `lease_lost` or `runtime`).
pub fn run(
    runtime: &str,
    status: &str,
    adapter: Option<&str>,
    cancel_reason: Option<&str>,
    took: Duration,
) {
    let Some(m) = recording() else {
        return;
    };
    let mut a = vec![
        KeyValue::new("hecate.runtime.kind", runtime.to_string()),
        KeyValue::new("hecate.run.status", status.to_string()),
    ];
    if let Some(id) = adapter {
        a.push(KeyValue::new("hecate.agent_adapter.id", id.to_string()));
    }
    if let Some(reason) = cancel_reason {
        a.push(KeyValue::new(
            "hecate.run.cancel_reason",
            reason.to_string(),
        ));
    }
    m.runs.add(1, &a);
    m.run_duration.record(took.as_secs_f64(), &a);
}

/// Records one tool call of Hecate's agent.
pub fn tool_call(tool: &str, tool_type: &str, error_type: Option<&str>, took: Duration) {
    let Some(m) = recording() else {
        return;
    };
    let mut a = vec![
        KeyValue::new("gen_ai.operation.name", "execute_tool"),
        KeyValue::new("gen_ai.tool.name", tool.to_string()),
        KeyValue::new("gen_ai.tool.type", tool_type.to_string()),
    ];
    if let Some(e) = error_type {
        a.push(KeyValue::new("error.type", e.to_string()));
    }
    m.tool_duration.record(took.as_secs_f64(), &a);
}

/// Records one MCP `tools/call` sent upstream.
pub fn mcp_call(server: &str, tool: &str, error_type: Option<&str>, took: Duration) {
    let Some(m) = recording() else {
        return;
    };
    let mut a = vec![
        KeyValue::new("mcp.method.name", "tools/call"),
        KeyValue::new("gen_ai.tool.name", tool.to_string()),
        KeyValue::new("hecate.mcp.server", server.to_string()),
    ];
    if let Some(e) = error_type {
        a.push(KeyValue::new("error.type", e.to_string()));
    }
    m.mcp_duration.record(took.as_secs_f64(), &a);
}

/// The attributes every approval metric carries.
fn approval_attributes(tool_kind: &str, adapter: Option<&str>) -> Vec<KeyValue> {
    let mut a = vec![KeyValue::new(
        "hecate.approval.tool_kind",
        tool_kind.to_string(),
    )];
    if let Some(id) = adapter {
        a.push(KeyValue::new("hecate.agent_adapter.id", id.to_string()));
    }
    a
}

/// Counts a permission request put to a person.
pub fn approval_requested(tool_kind: &str, adapter: Option<&str>) {
    let Some(m) = recording() else {
        return;
    };
    m.approvals_requested
        .add(1, &approval_attributes(tool_kind, adapter));
}

/// Counts a permission request's end: its `status` (`approved`, `rejected`,
/// `timed_out`, `cancelled`) and the `path` that ended it.
pub fn approval_resolved(tool_kind: &str, adapter: Option<&str>, status: &str, path: &str) {
    let Some(m) = recording() else {
        return;
    };
    let mut a = approval_attributes(tool_kind, adapter);
    a.push(KeyValue::new("hecate.approval.status", status.to_string()));
    a.push(KeyValue::new("hecate.approval.path", path.to_string()));
    m.approvals_resolved.add(1, &a);
}

/// Counts one adapter probe by its `status` and the `stage` it reached.
pub fn probe(adapter: &str, status: &str, stage: &str) {
    let Some(m) = recording() else {
        return;
    };
    m.probes.add(
        1,
        &[
            KeyValue::new("hecate.agent_adapter.id", adapter.to_string()),
            KeyValue::new("hecate.agent_adapter.probe.status", status.to_string()),
            KeyValue::new("hecate.agent_adapter.probe.stage", stage.to_string()),
        ],
    );
}
