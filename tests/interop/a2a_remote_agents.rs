//! Remote A2A agents as targets (`[a2a_agents]`, `driver_kind = "a2a"`),
//! against an agent built with the official Python SDK's server side
//! (`a2a-sdk[http-server]` 1.3.0, `tests/a2a_peers/remote_agent.py`, installed
//! by `scripts/test-deps/a2a.sh`): Agent Chat over HTTP (streamed answers, a
//! context kept over two turns, `input-required` answered as a Hecate
//! approval, a cancel passed on, a hand-off from a model with the transcript),
//! `hecate chat --agent` over the HTTP+JSON binding with a bearer token,
//! `hecate acp` with the test editor and with acpx (a real ACP client from
//! `scripts/test-deps/acp-clients.sh`) over one persistent session, and MCP
//! `ask_agent`.

use crate::support::acp_clients::{
    ClientRun, Clients, acpx_answer, client_cmd, client_methods, hecate as acp_hecate,
    run as acp_client_run,
};
use crate::support::acp_editor::{Editor, Hecate, answer as acp_answer, open, prompt, run_editor};
use crate::support::common::{Home, ModelServer, test_deps, text, workspace};
use crate::support::http::{Api, create_agent_session, pending_approval, serve};
use crate::support::mcp::McpProc;
use agent_client_protocol::v1::schema::StopReason;
use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The Python SDK agent, killed on drop.
struct RemoteAgent {
    child: Child,
    card_url: String,
}

impl Drop for RemoteAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl RemoteAgent {
    /// Starts the agent with `args` (`--binding rest`, `--no-streaming`,
    /// `--token T`) and waits for its port.
    fn start(args: &[&str]) -> Self {
        let venv = test_deps("a2a", "the A2A Python SDK");
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/a2a_peers/remote_agent.py");
        let mut child = Command::new(venv.join("bin/python"))
            .arg(script)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the Python remote agent");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the port");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .unwrap_or_else(|| panic!("the remote agent said {line:?}"))
            .to_string();
        Self {
            child,
            card_url: format!("http://127.0.0.1:{port}/.well-known/agent-card.json"),
        }
    }
}

/// A home declaring `agent` as `[a2a_agents.remote]` (with `extra` lines),
/// with the fixture model `fix/fixture-model` on `server`.
fn home_with(agent: &RemoteAgent, server: &ModelServer, extra: &str) -> Home {
    let home = Home::with_openai(server);
    home.write_config(&format!(
        "[a2a_agents.remote]\ncard_url = \"{}\"\nname = \"Remote SDK agent\"\n{extra}",
        agent.card_url
    ));
    home
}

/// The newest message of an Agent Chat answer.
fn last(a: &crate::support::http::Answer) -> Value {
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["data"]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_else(|| panic!("no messages in {}", a.body))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_remote_agent_answers_keeps_its_context_asks_and_is_cancelled_over_http() {
    let agent = RemoteAgent::start(&[]);
    let server = ModelServer::start(None);
    let home = home_with(&agent, &server, "");
    let served = serve(&home);
    let api = Api::new(&served);
    let (_dir, ws) = workspace();

    let list = api.get("/hecate/v1/agent-adapters").await;
    let row = list.body["data"]
        .as_array()
        .and_then(|d| d.iter().find(|a| a["id"] == "remote"))
        .cloned()
        .unwrap_or_else(|| panic!("no remote row: {}", list.body));
    assert_eq!(row["kind"], "a2a", "{row}");
    assert_eq!(row["status"], "available", "{row}");
    assert_eq!(row["name"], "Remote SDK agent");

    let sid = create_agent_session(&api, "remote", &ws).await;
    let first = last(&api.say(&sid, "hello").await);
    assert_eq!(
        first["content"], "remote agent heard: hello [turn 1 of context]",
        "{first}"
    );
    assert_eq!(first["driver_kind"], "a2a", "{first}");
    let second = last(&api.say(&sid, "again").await);
    assert_eq!(
        second["content"], "remote agent heard: again [turn 2 of context]",
        "the A2A contextId is kept per session: {second}"
    );

    // input-required is a Hecate approval; its answer is the next message.
    let asking = {
        let api = api.clone();
        let sid = sid.clone();
        tokio::spawn(async move { api.say(&sid, "CONFIRM the change").await })
    };
    let approval = pending_approval(&api, &sid).await;
    assert_eq!(
        approval["tool_name"], "Shall I go ahead with the change?",
        "{approval}"
    );
    home.approve(approval["id"].as_str().expect("approval id"));
    let confirmed = last(&asking.await.expect("turn"));
    assert_eq!(confirmed["content"], "confirmed: approve", "{confirmed}");

    // A cancel stops the turn and is passed on as CancelTask.
    let slow = {
        let api = api.clone();
        let sid = sid.clone();
        tokio::spawn(async move { api.say(&sid, "SLOW work").await })
    };
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let c = api.session_action(&sid, "cancel").await;
    assert_eq!(c.status, 202, "{}", c.body);
    let cancelled = last(&slow.await.expect("turn"));
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");

    // The task's artifacts are kept with the turn.
    let stored = crate::support::acp_editor::stored_run_events(&home);
    let artifacts: Vec<&Value> = stored
        .iter()
        .filter_map(|e| e.pointer("/data/a2a/artifacts"))
        .collect();
    assert!(
        artifacts
            .iter()
            .any(|a| a[0]["artifactId"] == "answer"
                && a[0]["parts"].as_array().map(Vec::len) == Some(2)),
        "{stored:?}"
    );
    // The remote agent saw the cancel: its task of the slow turn is cancelled.
    let slow_task = stored
        .iter()
        .filter_map(|e| e.pointer("/data/a2a/task_id").and_then(Value::as_str))
        .next_back()
        .expect("the slow turn's task");
    let rpc = agent
        .card_url
        .replace("/.well-known/agent-card.json", "/rpc");
    let task: Value = crate::support::http::client()
        .post(rpc)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": slow_task}}))
        .send()
        .await
        .expect("GetTask")
        .json()
        .await
        .expect("GetTask answer");
    assert_eq!(
        task["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{task}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_conversation_hands_off_to_a_remote_agent_with_its_transcript() {
    let agent = RemoteAgent::start(&[]);
    let server = ModelServer::start(Some(json!([{"text": "Nice to meet you, Ada."}])));
    let home = home_with(&agent, &server, "");
    let served = serve(&home);
    let api = Api::new(&served);
    let (_dir, ws) = workspace();
    let sid = api.create_session(json!({})).await;
    let hello = last(&api.say(&sid, "My name is Ada.").await);
    assert_eq!(hello["content"], "Nice to meet you, Ada.");
    let handed = api
        .post(
            &format!("/hecate/v1/agent-chat/sessions/{sid}/messages"),
            json!({"content": "What is my name?", "runtime_kind": "external_agent",
                   "adapter_id": "remote", "workspace": ws}),
        )
        .await;
    let answer = last(&handed);
    let said = answer["content"].as_str().unwrap_or_default();
    assert!(said.starts_with("remote agent heard: Context:"), "{said}");
    assert!(said.contains("User: My name is Ada."), "{said}");
    assert!(said.contains("Assistant: Nice to meet you, Ada."), "{said}");
    assert!(
        said.ends_with("What is my name? [turn 1 of context]"),
        "{said}"
    );
}

#[test]
fn hecate_chat_reaches_a_rest_agent_with_its_token_and_reports_a_refused_one() {
    let agent = RemoteAgent::start(&["--binding", "rest", "--no-streaming", "--token", "t0k"]);
    let server = ModelServer::start(None);
    let mut home = home_with(&agent, &server, "token_env = \"REMOTE_A2A_TOKEN\"\n");
    home.set("REMOTE_A2A_TOKEN", "t0k");
    let (_dir, ws) = workspace();
    let w = ws.display().to_string();
    let out = home.run(&["chat", "--agent", "remote", "--workspace", &w, "hello rest"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("remote agent heard: hello rest [turn 1 of context]"),
        "{stdout}"
    );

    let refused = home_with(&agent, &server, "");
    let out = refused.run(&["chat", "--agent", "remote", "--workspace", &w, "hello"]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("refused the credentials (HTTP 401)"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_talks_to_a_remote_agent_through_hecate_acp() {
    let agent = RemoteAgent::start(&[]);
    let server = ModelServer::start(None);
    let home = home_with(&agent, &server, "");
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:remote"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        assert_eq!(
            prompt(&cx, &sid, "hi from the editor").await?,
            StopReason::EndTurn
        );
        assert_eq!(
            acp_answer(&updates.drain()),
            "remote agent heard: hi from the editor [turn 1 of context]"
        );
        // The editor answers the agent's input-required as a permission request.
        assert_eq!(
            prompt(&cx, &sid, "CONFIRM please").await?,
            StopReason::EndTurn
        );
        assert_eq!(acp_answer(&updates.drain()), "confirmed: approve");
        Ok(())
    })
    .await
    .expect("editor session");
}

/// acpx's persistent session in `ws` on `hecate acp --target agent:remote`
/// (its records in the home's `client-home`), closed on drop, which ends the
/// queue owner acpx keeps between prompts (and the `hecate acp` under it).
struct AcpxSession<'a> {
    home: &'a Home,
    ws: PathBuf,
}

impl<'a> AcpxSession<'a> {
    /// `acpx sessions new` in `ws`.
    fn new(home: &'a Home, ws: &Path) -> Self {
        let session = Self {
            home,
            ws: ws.to_path_buf(),
        };
        let ClientRun { stdout, .. } = session.acpx(&["--format", "json", "sessions", "new"]);
        assert!(stdout.contains("\"session_ensured\""), "{stdout}");
        session
    }

    /// `acpx --agent "<hecate> acp --target agent:remote" ARGS`, asserting
    /// that it succeeded.
    fn acpx(&self, args: &[&str]) -> ClientRun {
        let out = acp_client_run(self.command(args), b"");
        ClientRun::exited(&out, 0, "")
    }

    /// One prompt on the session with the permission `policy`.
    fn prompt(&self, policy: &str, text: &str) -> ClientRun {
        self.acpx(&[
            policy,
            "--format",
            "json",
            "--timeout",
            "120",
            "prompt",
            text,
        ])
    }

    fn command(&self, args: &[&str]) -> Command {
        let clients = Clients::get();
        let mut c = client_cmd(&clients.acpx(), self.home, &self.ws);
        let client_home = self.home.path("client-home");
        std::fs::create_dir_all(&client_home).expect("client home");
        c.env("HOME", client_home)
            .env("PATH", clients.path(&[]))
            .args([
                "--agent",
                &format!("{} acp --target agent:remote", acp_hecate()),
            ])
            .arg("--cwd")
            .arg(&self.ws)
            // The queue owner's idle TTL, should the close below not run.
            .args(["--ttl", "60"])
            .args(args);
        c
    }
}

impl Drop for AcpxSession<'_> {
    fn drop(&mut self) {
        let mut close = self.command(&["sessions", "close"]);
        close
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Ok(mut child) = close.spawn() {
            for _ in 0..600 {
                if !matches!(child.try_wait(), Ok(None)) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn acpx_talks_to_a_remote_agent_through_hecate_acp_over_one_session() {
    let agent = RemoteAgent::start(&[]);
    let server = ModelServer::start(None);
    let home = home_with(&agent, &server, "");
    let (_guard, ws) = workspace();
    let session = AcpxSession::new(&home, &ws);

    // Two prompts on one acpx session: one A2A context, its turns counted.
    let ClientRun {
        stdout, frames: f, ..
    } = session.prompt("--approve-all", "hi from acpx");
    assert_eq!(
        acpx_answer(&f),
        "remote agent heard: hi from acpx [turn 1 of context]",
        "{stdout}"
    );
    assert!(
        f.iter().any(|x| x["result"]["stopReason"] == "end_turn"),
        "{stdout}"
    );
    let ClientRun {
        stdout, frames: f, ..
    } = session.prompt("--approve-all", "and again");
    assert_eq!(
        acpx_answer(&f),
        "remote agent heard: and again [turn 2 of context]",
        "the session keeps the remote contextId: {stdout}"
    );

    // input-required is put to acpx as a permission request; its answer goes
    // back to the remote agent as the next message of the task.
    for (policy, said) in [
        ("--approve-all", "confirmed: approve"),
        ("--deny-all", "confirmed: reject"),
    ] {
        let ClientRun {
            stdout, frames: f, ..
        } = session.prompt(policy, "CONFIRM the change");
        assert_eq!(
            client_methods(&f),
            ["session/request_permission"],
            "{policy}: {stdout}"
        );
        assert!(
            f.iter().any(|x| x["method"] == "session/request_permission"
                && x["params"]["toolCall"]["title"] == "Shall I go ahead with the change?"),
            "{stdout}"
        );
        assert_eq!(acpx_answer(&f), said, "{policy}: {stdout}");
    }

    // Every turn of the session went to the same remote context.
    let contexts: Vec<Value> = crate::support::acp_editor::stored_run_events(&home)
        .iter()
        .filter_map(|e| e.pointer("/data/a2a/context_id").cloned())
        .collect();
    assert_eq!(contexts.len(), 4, "{contexts:?}");
    assert!(
        contexts[0].is_string() && contexts.iter().all(|c| *c == contexts[0]),
        "{contexts:?}"
    );
}

#[test]
fn mcp_ask_agent_delegates_to_a_remote_agent() {
    let agent = RemoteAgent::start(&["--binding", "rest"]);
    let server = ModelServer::start(None);
    let home = home_with(&agent, &server, "");
    let (_dir, ws) = workspace();
    let mut mcp = McpProc::start(&home, json!({}));
    let out = mcp.call_ok(
        "ask_agent",
        json!({"target": "agent:remote", "prompt": "hi from mcp", "workspace": ws}),
    );
    assert_eq!(
        out["structuredContent"]["answer"], "remote agent heard: hi from mcp [turn 1 of context]",
        "{out}"
    );
    let sid = out["structuredContent"]["session_id"].clone();
    let again = mcp.call_ok(
        "ask_agent",
        json!({"target": "agent:remote", "prompt": "and again", "session_id": sid}),
    );
    assert_eq!(
        again["structuredContent"]["answer"], "remote agent heard: and again [turn 2 of context]",
        "{again}"
    );
}

/// One LONG turn of Agent Chat over HTTP on a remote agent started with
/// `args`: the answer's message, and the A2A calls the agent counted by method.
async fn long_turn(args: &[&str]) -> (Value, Value) {
    let agent = RemoteAgent::start(args);
    let server = ModelServer::start(None);
    let home = home_with(&agent, &server, "");
    let served = serve(&home);
    let api = Api::new(&served);
    let (_dir, ws) = workspace();
    let sid = create_agent_session(&api, "remote", &ws).await;
    let answer = last(&api.say(&sid, "LONG job").await);
    let calls_url = agent
        .card_url
        .replace("/.well-known/agent-card.json", "/calls");
    let calls: Value = crate::support::http::client()
        .get(calls_url)
        .send()
        .await
        .expect("calls")
        .json()
        .await
        .expect("calls JSON");
    (answer, calls)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_remote_task_is_followed_by_subscribe_and_polled_only_as_a_fallback() {
    // The send's stream breaks after its first event, and so does the first
    // subscribe: Hecate subscribes again and follows the task to its end
    // without one GetTask.
    let (answer, calls) = long_turn(&["--drop-streams"]).await;
    assert_eq!(answer["status"], "completed", "{answer}");
    assert_eq!(answer["content"], "long work done", "{answer}");
    assert_eq!(calls["SendStreamingMessage"], 1, "{calls}");
    assert_eq!(calls["SubscribeToTask"], 2, "{calls}");
    assert!(calls.get("GetTask").is_none(), "no polling: {calls}");

    // An agent refusing SubscribeToTask (HTTP+JSON here) is polled instead.
    let (answer, calls) =
        long_turn(&["--binding", "rest", "--drop-streams", "--no-subscribe"]).await;
    assert_eq!(answer["content"], "long work done", "{answer}");
    assert_eq!(calls["SubscribeToTask"], 1, "{calls}");
    assert!(calls["GetTask"].as_u64().is_some_and(|n| n >= 1), "{calls}");

    // A card without streaming: a send answered while the task still works is
    // polled, never subscribed to.
    let (answer, calls) = long_turn(&["--no-streaming", "--return-immediately"]).await;
    assert_eq!(answer["content"], "long work done", "{answer}");
    assert_eq!(calls["SendMessage"], 1, "{calls}");
    assert!(calls.get("SubscribeToTask").is_none(), "{calls}");
    assert!(calls["GetTask"].as_u64().is_some_and(|n| n >= 1), "{calls}");
}
