//! The spans Hecate opens, with their attribute vocabulary: the HTTP server
//! span of each request to `hecate serve`, `chat {model}` for
//! every model call (the gateway's and Hecate's own), `agent_chat.run` for a
//! session turn, `invoke_agent hecate` for an `agent_loop` run,
//! `execute_tool {tool}` for its tool calls and `tools/call {tool}` for an MCP
//! call sent upstream. Names and attributes follow the OpenTelemetry `gen_ai.*`
//! and `mcp.*` semantic conventions; what they do not cover is `hecate.*`.

use super::metrics;
use opentelemetry::{Array, StringValue, Value};
use std::time::Instant;
use tracing::Span;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// A count as an OpenTelemetry integer (`tracing-opentelemetry` exports
/// unsigned values as strings).
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Marks `span` failed with `error_type` (`error.type` and an error status).
pub fn fail(span: &Span, error_type: &str, message: &str) {
    span.record("error.type", error_type);
    span.record("otel.status_code", "error");
    span.record("otel.status_description", message);
}

/// Marks `span` failed when there is an `error` (its `error.type` and message).
fn fail_on(span: &Span, error: Option<(&str, &str)>) {
    if let Some((kind, message)) = error {
        fail(span, kind, message);
    }
}

/// A call's span and when it started: what every call in flight keeps for its
/// duration metric.
#[derive(Debug)]
struct Timed {
    span: Span,
    started: Instant,
}

impl Timed {
    /// Starts timing the call `span` covers.
    fn new(span: Span) -> Self {
        Self {
            span,
            started: Instant::now(),
        }
    }

    /// Records the call's `outcome` in `field`; any outcome but `ok` marks the
    /// span failed (with `error`, else the outcome, as its message). Answers the
    /// error type for the metric (`None` when ok).
    fn outcome<'a>(&self, field: &str, outcome: &'a str, error: Option<&str>) -> Option<&'a str> {
        self.span.record(field, outcome);
        let error_type = (outcome != "ok").then_some(outcome);
        if let Some(kind) = error_type {
            fail(&self.span, kind, error.unwrap_or(outcome));
        }
        error_type
    }
}

/// A model call in flight: its `chat {model}` client span and what its metrics
/// need when it ends.
#[derive(Debug)]
pub struct Inference {
    call: Timed,
    system: &'static str,
    provider: String,
    model: String,
}

/// How a model call ended.
#[derive(Debug, Default, Clone)]
pub struct InferenceEnd<'a> {
    /// The model that answered, when it differs from or confirms the request.
    pub response_model: Option<&'a str>,
    /// Input and output tokens, when the provider reported them.
    pub tokens: Option<(u64, u64)>,
    /// Why generation stopped, as the provider said it.
    pub finish_reason: Option<&'a str>,
    /// `error.type` and message of a failed call.
    pub error: Option<(&'a str, &'a str)>,
}

impl Inference {
    /// Opens the span of a call of `model` at `provider` (speaking `system`,
    /// `openai` or `anthropic`, at `base_url`).
    pub fn start(system: &'static str, provider: &str, model: &str, base_url: &str) -> Self {
        let span = tracing::info_span!(
            "gen_ai.chat",
            otel.name = %format_args!("chat {model}"),
            otel.kind = "client",
            otel.status_code = Empty,
            otel.status_description = Empty,
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = system,
            gen_ai.request.model = model,
            gen_ai.response.model = Empty,
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
            gen_ai.conversation.id = Empty,
            server.address = Empty,
            server.port = Empty,
            hecate.provider.name = provider,
            hecate.request.id = Empty,
            hecate.agent_chat.session.id = Empty,
            hecate.gateway.ingress = Empty,
            hecate.gateway.stream = Empty,
            hecate.gateway.outcome = Empty,
            hecate.cost.micros_usd = Empty,
            error.type = Empty,
        );
        if !span.is_disabled() {
            // Parsed only when the span is exported.
            let (address, port) = server_of(base_url);
            span.record("server.address", address.as_deref());
            span.record("server.port", port.map(i64::from));
        }
        Self {
            call: Timed::new(span),
            system,
            provider: provider.to_string(),
            model: model.to_string(),
        }
    }

    /// The span, for instrumenting the call's future.
    pub fn span(&self) -> &Span {
        &self.call.span
    }

    /// Adds what a `/v1` request says about itself: its request id, the client's
    /// wire format, whether it streams, and its chat session.
    pub fn gateway(&self, request_id: &str, ingress: &str, stream: bool, session: Option<&str>) {
        self.call.span.record("hecate.request.id", request_id);
        self.call.span.record("hecate.gateway.ingress", ingress);
        self.call.span.record("hecate.gateway.stream", stream);
        if let Some(s) = session {
            self.call.span.record("gen_ai.conversation.id", s);
        }
    }

    /// Names the Agent Chat session whose supervised agent made the call.
    pub fn agent_session(&self, session_id: &str) {
        self.call
            .span
            .record("hecate.agent_chat.session.id", session_id);
    }

    /// Names the model routing chose (the span is renamed after it).
    pub fn routed(&mut self, provider: &str, model: &str) {
        self.call.span.record("otel.name", format!("chat {model}"));
        self.call.span.record("hecate.provider.name", provider);
        self.call.span.record("gen_ai.response.model", model);
        self.provider = provider.to_string();
        self.model = model.to_string();
    }

    /// Records a gateway exchange's outcome (`completed`, `failed`,
    /// `cancelled`) and cost.
    pub fn gateway_end(&self, outcome: &str, cost_micros_usd: Option<i64>) {
        self.call.span.record("hecate.gateway.outcome", outcome);
        if let Some(c) = cost_micros_usd {
            self.call.span.record("hecate.cost.micros_usd", c);
        }
    }

    /// Ends the call: records the answer's facts on the span and the call's
    /// duration and tokens as metrics, then closes the span.
    pub fn finish(self, end: InferenceEnd<'_>) {
        if let Some(m) = end.response_model {
            self.call.span.record("gen_ai.response.model", m);
        }
        if let Some((input, output)) = end.tokens {
            self.call
                .span
                .record("gen_ai.usage.input_tokens", int(input));
            self.call
                .span
                .record("gen_ai.usage.output_tokens", int(output));
        }
        if let Some(reason) = end.finish_reason {
            self.call.span.set_attribute(
                "gen_ai.response.finish_reasons",
                Value::Array(Array::String(vec![StringValue::from(reason.to_string())])),
            );
        }
        fail_on(&self.call.span, end.error);
        metrics::model_call(
            &metrics::ModelCall {
                system: self.system,
                provider: &self.provider,
                model: &self.model,
                response_model: end.response_model,
                error_type: end.error.map(|e| e.0),
            },
            self.call.started.elapsed(),
            end.tokens,
        );
    }
}

/// `server.address` and `server.port` of a provider's base URL.
fn server_of(base_url: &str) -> (Option<String>, Option<u16>) {
    match reqwest::Url::parse(base_url) {
        Ok(u) => (u.host_str().map(str::to_string), u.port_or_known_default()),
        Err(_) => (None, None),
    }
}

/// Opens the `agent_chat.run` span of one session turn.
pub fn agent_chat_run(session_id: &str, run_id: &str, request_id: &str, runtime: &str) -> Span {
    tracing::info_span!(
        "agent_chat.run",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = Empty,
        gen_ai.agent.name = Empty,
        gen_ai.conversation.id = session_id,
        gen_ai.request.model = Empty,
        hecate.agent_chat.session.id = session_id,
        hecate.run.id = run_id,
        hecate.request.id = request_id,
        hecate.runtime.kind = runtime,
        hecate.provider.name = Empty,
        hecate.agent_adapter.id = Empty,
        hecate.agent_adapter.command = Empty,
        hecate.agent_adapter.driver.kind = Empty,
        hecate.agent_adapter.native_session.id = Empty,
        hecate.agent_adapter.output.bytes = Empty,
        hecate.agent_adapter.diff.captured = Empty,
        hecate.workspace.path = Empty,
        hecate.task.id = Empty,
        hecate.task.run.id = Empty,
        hecate.run.status = Empty,
        hecate.run.cancel_reason = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
    )
}

/// What a turn runs, recorded on its `agent_chat.run` span.
#[derive(Debug, Clone, Copy)]
pub enum RunTarget<'a> {
    /// One model call at `provider`.
    Model {
        /// Configured provider name.
        provider: &'a str,
        /// Model.
        model: &'a str,
    },
    /// Hecate's own agent on `provider`/`model` in `workspace`.
    Agent {
        /// Configured provider name.
        provider: &'a str,
        /// Model.
        model: &'a str,
        /// Workspace path.
        workspace: &'a str,
    },
    /// An external ACP agent.
    External {
        /// Adapter id.
        adapter_id: &'a str,
        /// The command that starts it, when the catalog knows it.
        command: Option<&'a str>,
        /// Workspace path.
        workspace: &'a str,
    },
}

/// Records what a turn runs on its span.
pub fn run_target(span: &Span, target: RunTarget<'_>) {
    match target {
        RunTarget::Model { provider, model } => {
            span.record("hecate.provider.name", provider);
            span.record("gen_ai.request.model", model);
        }
        RunTarget::Agent {
            provider,
            model,
            workspace,
        } => {
            span.record("gen_ai.operation.name", "invoke_agent");
            span.record("gen_ai.agent.name", "hecate");
            span.record("hecate.provider.name", provider);
            span.record("gen_ai.request.model", model);
            span.record("hecate.workspace.path", workspace);
        }
        RunTarget::External {
            adapter_id,
            command,
            workspace,
        } => {
            span.record("gen_ai.operation.name", "invoke_agent");
            span.record("gen_ai.agent.name", adapter_id);
            span.record("hecate.agent_adapter.id", adapter_id);
            span.record("hecate.agent_adapter.driver.kind", "acp");
            span.record("hecate.workspace.path", workspace);
            if let Some(c) = command {
                span.record("hecate.agent_adapter.command", c);
            }
        }
    }
}

/// What a turn's runtime reported, recorded on its span.
#[derive(Debug, Clone, Default)]
pub struct RunReport<'a> {
    /// Input and output tokens the turn reported.
    pub tokens: Option<(u64, u64)>,
    /// An external agent's native session id.
    pub native_session_id: Option<&'a str>,
    /// Bytes of an external agent's answer.
    pub output_bytes: Option<u64>,
    /// Whether a workspace diff was captured (external agents in Git workspaces).
    pub diff_captured: Option<bool>,
    /// The task and task run backing a Hecate Agent turn.
    pub task: Option<(&'a str, &'a str)>,
}

/// Records what a turn's runtime reported on its span.
pub fn run_report(span: &Span, report: &RunReport<'_>) {
    if let Some((input, output)) = report.tokens {
        span.record("gen_ai.usage.input_tokens", int(input));
        span.record("gen_ai.usage.output_tokens", int(output));
    }
    if let Some(id) = report.native_session_id {
        span.record("hecate.agent_adapter.native_session.id", id);
    }
    if let Some(b) = report.output_bytes {
        span.record("hecate.agent_adapter.output.bytes", int(b));
    }
    if let Some(d) = report.diff_captured {
        span.record("hecate.agent_adapter.diff.captured", d);
    }
    if let Some((task, task_run)) = report.task {
        span.record("hecate.task.id", task);
        span.record("hecate.task.run.id", task_run);
    }
}

/// Records a turn's end (`completed`, `failed`, `cancelled`, with the error of
/// a failed one) on its span.
pub fn run_end(span: &Span, status: &str, error: Option<(&str, &str)>) {
    span.record("hecate.run.status", status);
    match error {
        Some((kind, message)) => fail(span, kind, message),
        None if status == "completed" => {
            span.record("otel.status_code", "ok");
        }
        None => {}
    }
}

/// Opens the `invoke_agent hecate` span of one claimed `agent_loop` run.
pub fn agent_loop_run(
    task_id: &str,
    task_run_id: &str,
    provider: &str,
    model: &str,
    workspace: &str,
) -> Span {
    tracing::info_span!(
        "gen_ai.invoke_agent",
        otel.name = "invoke_agent hecate",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = "hecate",
        gen_ai.agent.id = task_id,
        gen_ai.request.model = model,
        hecate.provider.name = provider,
        hecate.task.id = task_id,
        hecate.task.run.id = task_run_id,
        hecate.workspace.path = workspace,
        hecate.agent_loop.turns = Empty,
        hecate.run.status = Empty,
        error.type = Empty,
    )
}

/// Records how an `agent_loop` run (or this worker's share of it) ended.
pub fn agent_loop_end(span: &Span, status: &str, turns: u32, error: Option<(&str, &str)>) {
    span.record("hecate.run.status", status);
    span.record("hecate.agent_loop.turns", i64::from(turns));
    fail_on(span, error);
}

/// A tool call of Hecate's agent in flight: its `execute_tool {tool}` span.
#[derive(Debug)]
pub struct ToolCall {
    call: Timed,
    tool: String,
    tool_type: &'static str,
}

impl ToolCall {
    /// Opens the span of call `call_id` to `tool`; `mcp` says an MCP server
    /// serves it (`gen_ai.tool.type` `extension`, else `function`).
    pub fn start(tool: &str, call_id: &str, mcp: bool) -> Self {
        let tool_type = if mcp { "extension" } else { "function" };
        let span = tracing::info_span!(
            "gen_ai.execute_tool",
            otel.name = %format_args!("execute_tool {tool}"),
            otel.status_code = Empty,
            otel.status_description = Empty,
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = tool,
            gen_ai.tool.call.id = call_id,
            gen_ai.tool.type = tool_type,
            hecate.tool.decision = Empty,
            hecate.tool.outcome = Empty,
            error.type = Empty,
        );
        Self {
            call: Timed::new(span),
            tool: tool.to_string(),
            tool_type,
        }
    }

    /// The span, for instrumenting the call's future.
    pub fn span(&self) -> &Span {
        &self.call.span
    }

    /// Ends the call with the gate's `decision` and its `outcome` (`ok`,
    /// `tool_error`, `cancelled`, `not_called`).
    pub fn finish(self, decision: &str, outcome: &str, error: Option<&str>) {
        self.call.span.record("hecate.tool.decision", decision);
        let error_type = self.call.outcome("hecate.tool.outcome", outcome, error);
        let elapsed = self.call.started.elapsed();
        metrics::tool_call(&self.tool, self.tool_type, error_type, elapsed);
    }
}

/// Opens the server span of one HTTP request to `hecate serve`, named after its
/// method (the convention's name when no route template is known).
pub fn http_request(method: &str, path: &str, request_id: &str) -> Span {
    tracing::info_span!(
        "http.request",
        otel.name = method,
        otel.kind = "server",
        otel.status_code = Empty,
        http.request.method = method,
        url.path = path,
        hecate.request.id = request_id,
        http.response.status_code = Empty,
        error.type = Empty,
    )
}

/// Records the status an HTTP request was answered with; a 5xx marks it failed.
pub fn http_response(span: &Span, status: u16) {
    span.record("http.response.status_code", i64::from(status));
    if status >= 500 {
        span.record("error.type", status.to_string());
        span.record("otel.status_code", "error");
    }
}

/// Opens the `tools/call {tool}` server span of a call an MCP client makes to
/// Hecate (`hecate mcp`, `/mcp`); what it causes — a turn, a relayed call —
/// are its children. End it with [`mcp_server_end`].
pub fn mcp_server_call(tool: &str) -> Span {
    tracing::info_span!(
        "mcp.server.tools_call",
        otel.name = %format_args!("tools/call {tool}"),
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        error.type = Empty,
    )
}

/// Ends an MCP server call: a protocol error (`error`) or a tool error
/// (`tool_error`) marks the span failed.
pub fn mcp_server_end(span: &Span, error: Option<(&str, &str)>) {
    fail_on(span, error);
}

/// An MCP `tools/call` sent upstream, in flight: its `tools/call {tool}` span.
#[derive(Debug)]
pub struct McpCall {
    call: Timed,
    server: String,
    tool: String,
}

impl McpCall {
    /// Opens the span of a call to `tool` of upstream `server`, reached over
    /// `transport` (`pipe` for stdio, `tcp` for Streamable HTTP).
    pub fn start(server: &str, tool: &str, transport: &str) -> Self {
        let span = tracing::info_span!(
            "mcp.tools_call",
            otel.name = %format_args!("tools/call {tool}"),
            otel.kind = "client",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = "tools/call",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = tool,
            network.transport = transport,
            hecate.mcp.server = server,
            hecate.mcp.outcome = Empty,
            error.type = Empty,
        );
        Self {
            call: Timed::new(span),
            server: server.to_string(),
            tool: tool.to_string(),
        }
    }

    /// The span, for instrumenting the call's future.
    pub fn span(&self) -> &Span {
        &self.call.span
    }

    /// Ends the call with its `outcome` (`ok`, `tool_error`, `cancelled`,
    /// `failed`) and, when it failed, the message.
    pub fn finish(self, outcome: &str, error: Option<&str>) {
        let error_type = self.call.outcome("hecate.mcp.outcome", outcome, error);
        let elapsed = self.call.started.elapsed();
        metrics::mcp_call(&self.server, &self.tool, error_type, elapsed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_base_url_names_its_server() {
        assert_eq!(
            server_of("http://127.0.0.1:8080/v1"),
            (Some("127.0.0.1".into()), Some(8080))
        );
        assert_eq!(
            server_of("https://api.openai.com/v1"),
            (Some("api.openai.com".into()), Some(443))
        );
        assert_eq!(server_of("not a url"), (None, None));
    }
}
