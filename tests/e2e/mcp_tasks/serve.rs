//! `/mcp` of `hecate serve`, whose own workers run the tasks: `start_task`
//! with `wait` streams the run's events as progress notifications over the
//! Streamable HTTP response, puts the approval gate to the client by
//! elicitation on that same response, and returns the finished run.

use crate::support::common::Home;
use crate::support::http::serve;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// An eliciting client that approves every question and passes on the
/// messages of progress notifications and questions.
#[derive(Clone)]
struct Approver {
    progress: UnboundedSender<String>,
    asked: UnboundedSender<String>,
}

impl ClientHandler for Approver {
    fn get_info(&self) -> ClientConfig {
        let caps: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {}})).expect("capabilities");
        ClientConfig::new(caps, Implementation::new("serve-e2e", "1"))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params.message.unwrap_or_default());
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = match request {
            ElicitRequestParams::FormElicitationParams { message, .. } => message,
            other => format!("{other:?}"),
        };
        let _ = self.asked.send(message);
        let mut answer = ElicitResult::new(ElicitationAction::Accept);
        answer.content = Some(json!({"decision": "approve_once"}));
        Ok(answer)
    }
}

async fn call(
    client: &RunningService<RoleClient, Approver>,
    tool: &'static str,
    args: Value,
) -> Value {
    let r: CallToolResult = client
        .call_tool(
            CallToolRequestParams::new(tool)
                .with_arguments(args.as_object().cloned().unwrap_or_default()),
        )
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert_ne!(r.is_error, Some(true), "{tool}: {r:?}");
    r.structured_content.expect("structured content")
}

/// Progress messages until the run's end, at most 30 s.
async fn until_finished(rx: &mut UnboundedReceiver<String>) -> Vec<String> {
    let mut seen = Vec::new();
    while !seen.iter().any(|m: &String| m.starts_with("run.finished")) {
        match tokio::time::timeout(Duration::from_secs(30), rx.recv()).await {
            Ok(Some(m)) => seen.push(m),
            _ => panic!("the run's end never came as progress: {seen:?}"),
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_task_over_mcp_of_hecate_serve_streams_progress_and_returns_the_finished_run() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    // The default policy gates shell commands.
    let home = Home::empty();
    let served = serve(&home);
    let (progress, mut progress_rx) = unbounded_channel();
    let (asked, mut asked_rx) = unbounded_channel();
    let client = Approver { progress, asked }
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "{}/mcp",
            served.base
        )))
        .await
        .expect("connect");

    let created = call(
        &client,
        "create_task",
        json!({"execution_kind": "shell", "shell_command": "echo served"}),
    )
    .await;
    let task = created["task"]["id"].clone();
    let state = call(
        &client,
        "start_task",
        json!({"task_id": task, "wait": true}),
    )
    .await;
    assert_eq!(state["run"]["status"], "completed", "{state}");
    assert_eq!(state["approvals"][0]["status"], "approved", "{state}");
    let stdout = state["artifacts"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["kind"] == "stdout"))
        .map(|x| x["preview"].clone());
    assert_eq!(stdout, Some(json!("served\n")), "{state}");

    let question = asked_rx.try_recv().expect("the gate was put to the client");
    assert!(
        question.contains("echo served") && question.contains("shell_command"),
        "{question}"
    );
    let msgs = until_finished(&mut progress_rx).await;
    for wanted in ["approval.requested", "approval.resolved", "run.started"] {
        assert!(
            msgs.iter().any(|m| m.starts_with(wanted)),
            "{wanted} in {msgs:?}"
        );
    }
    client.cancel().await.expect("close");
}
