//! The agent resources of the HTTP API against the fixture ACP agent: adapters
//! (list, health, probe), approvals and grants (list, read, resolve, cancel,
//! revoke) and the files a turn changed (list, diff, revert), each with its main
//! error.

use crate::support::common::{Home, git_workspace, permission_turn};
use crate::support::http::{
    Api, Served, agent_processes_reach, create_agent_session, last_message, pending_approval, serve,
};
use crate::support::mcp::McpProc;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::task::JoinHandle;

const WAIT: Duration = Duration::from_secs(60);

/// The fixture agent's turns: a gated write of three files, a greeting and
/// three billed answers.
fn script() -> String {
    let write_files = json!([
        {"fs_write": {"path": "b.txt", "content": "new file\n"}},
        {"fs_write": {"path": "sub/c.txt", "content": "nested\n"}},
        {"edit_file": {"path": "a.txt", "content": "changed\n"}}
    ]);
    json!({"turns": [
        permission_turn("Write files", write_files),
        {"match":"hello","actions":[{"text":"hi"}]},
        {"match":"bill one","actions":[{"text":"first"},{"usage":{"used":1200,"size":200000,
          "cost":{"amount":0.0125,"currency":"USD"},"turn":{"input_tokens":100,"output_tokens":20}}}]},
        {"match":"bill two","actions":[{"text":"second"},{"usage":{"used":2400,"size":200000,
          "cost":{"amount":0.04,"currency":"USD"},"turn":{"input_tokens":150,"output_tokens":30}}}]},
        {"match":"credits","actions":[{"text":"third"},{"usage":{"used":2500,"size":200000,
          "cost":{"amount":7,"currency":"credits"}}}]}
    ]})
    .to_string()
}

/// A home with the fixture agent `fixture` running [`script`].
fn home() -> Home {
    let home = Home::empty();
    home.add_scripted_agent(&script(), &[], "");
    home
}

/// Serves `home` and creates an external-agent session in `ws`.
async fn session(home: &Home, ws: &std::path::Path) -> (Served, Api, String) {
    let s = serve(home);
    let api = Api::new(&s);
    let id = create_agent_session(&api, "fixture", ws).await;
    (s, api, id)
}

/// Starts a turn in the background.
fn start_turn(api: &Api, id: &str, content: &str) -> JoinHandle<Value> {
    let (api, id, content) = (api.clone(), id.to_string(), content.to_string());
    tokio::spawn(async move { api.say(&id, &content).await.body })
}

#[tokio::test]
async fn adapters_are_listed_checked_and_probed() {
    let home = home();
    let s = serve(&home);
    let api = Api::new(&s);

    let a = api.get("/hecate/v1/agent-adapters").await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["object"], "agent_adapters");
    let fixture = a.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .find(|x| x["id"] == "fixture")
        .cloned()
        .expect("the fixture adapter is listed");
    assert_eq!(fixture["kind"], "acp");
    assert_eq!(fixture["available"], true);
    assert_eq!(fixture["status"], "available");
    assert_eq!(fixture["cost_mode"], "external");

    let h = api.get("/hecate/v1/agent-adapters/fixture/health").await;
    assert_eq!(h.status, 200, "{}", h.body);
    assert_eq!(h.body["object"], "agent_adapter_health");
    assert_eq!(h.body["data"]["adapter_id"], "fixture");
    assert_eq!(
        h.body["data"]["status"], "ready",
        "it really started: {}",
        h.body
    );
    assert_eq!(h.body["data"]["stage"], "ready");
    assert!(h.body["data"]["path"].is_string());
    assert!(h.body["data"]["duration_ms"].is_u64());

    let h = api.get("/hecate/v1/agent-adapters/nope/health").await;
    assert_eq!(h.status, 404, "{}", h.body);
    assert_eq!(h.error_type(), "not_found");

    let p = api
        .post("/hecate/v1/agent-adapters/fixture/probe", json!({}))
        .await;
    assert_eq!(p.status, 200, "{}", p.body);
    assert_eq!(p.body["object"], "agent_adapter_probe");
    assert_eq!(p.body["data"]["adapter"]["id"], "fixture");
    assert_eq!(p.body["data"]["health"]["adapter_id"], "fixture");
    assert_eq!(p.body["data"]["health"]["status"], "ready", "{}", p.body);
    assert_eq!(p.body["data"]["health"]["stage"], "ready");

    let p = api
        .post("/hecate/v1/agent-adapters/nope/probe", json!({}))
        .await;
    assert_eq!(p.status, 404, "{}", p.body);
    assert_eq!(p.error_type(), "not_found");
}

#[tokio::test]
async fn approvals_are_read_resolved_cancelled_and_grants_revoked() {
    let home = home();
    let ws = git_workspace();
    let (_s, api, id) = session(&home, ws.path()).await;
    let base = format!("/hecate/v1/agent-chat/sessions/{id}/approvals");

    let a = api
        .get("/hecate/v1/agent-chat/sessions/agent_chat_nope/approvals")
        .await;
    assert_eq!(a.status, 404, "{}", a.body);
    let a = api.get(&format!("{base}?status=bogus")).await;
    assert_eq!(a.status, 400, "{}", a.body);
    assert_eq!(a.error_type(), "invalid_request");

    // First turn: resolved with session scope, which records a grant.
    let turn = start_turn(&api, &id, "please write");
    let pending = pending_approval(&api, &id).await;
    let aid = pending["id"].as_str().expect("approval id").to_string();
    assert_eq!(pending["status"], "pending");
    assert_eq!(pending["session_id"], id.as_str());
    assert_eq!(pending["tool_name"], "Write files");

    let g = api.get(&format!("{base}/{aid}")).await;
    assert_eq!(g.status, 200, "{}", g.body);
    assert_eq!(g.body["object"], "agent_chat_approval");
    assert_eq!(g.body["data"]["id"], aid.as_str());
    let g = api.get(&format!("{base}/appr_nope")).await;
    assert_eq!(g.status, 404, "{}", g.body);
    assert_eq!(g.error_type(), "not_found");

    let bad = api
        .post(
            &format!("{base}/{aid}/resolve"),
            json!({"decision": "maybe"}),
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.body);

    let r = api
        .post(
            &format!("{base}/{aid}/resolve"),
            json!({"decision": "approve", "scope": "session"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["object"], "agent_chat_approval");
    assert_eq!(r.body["data"]["status"], "approved");
    assert_eq!(r.body["data"]["decision"], "approve");
    assert_eq!(r.body["data"]["scope"], "session");
    assert_eq!(r.body["data"]["path"], "operator");
    let done = tokio::time::timeout(WAIT, turn)
        .await
        .expect("turn ends")
        .expect("join");
    assert_eq!(done["data"]["status"], "completed", "{done}");

    let again = api
        .post(
            &format!("{base}/{aid}/resolve"),
            json!({"decision": "reject", "scope": "once"}),
        )
        .await;
    assert_eq!(again.status, 409, "{}", again.body);
    assert_eq!(again.error_type(), "conflict");
    let c = api.post(&format!("{base}/{aid}/cancel"), json!({})).await;
    assert_eq!(c.status, 409, "{}", c.body);

    let all = api.get(&base).await;
    assert_eq!(all.status, 200);
    assert_eq!(all.body["data"].as_array().map(Vec::len), Some(1));

    // The grant, then revoking it.
    let grants = api.get("/hecate/v1/agent-chat/grants").await;
    assert_eq!(grants.status, 200, "{}", grants.body);
    assert_eq!(grants.body["object"], "agent_chat_grants");
    let grant = grants.body["data"]
        .as_array()
        .and_then(|d| d.first())
        .cloned()
        .expect("a grant");
    assert_eq!(grant["scope"], "session");
    assert_eq!(grant["session_id"], id.as_str());
    assert_eq!(grant["decision"], "approve");
    let gid = grant["id"].as_str().expect("grant id");
    let d = api
        .delete(&format!("/hecate/v1/agent-chat/grants/{gid}"))
        .await;
    assert_eq!(d.status, 200, "{}", d.body);
    assert_eq!(d.body["object"], "agent_chat_grant_deleted");
    assert_eq!(d.body["data"]["deleted"], true);
    let d = api
        .delete(&format!("/hecate/v1/agent-chat/grants/{gid}"))
        .await;
    assert_eq!(d.status, 404, "{}", d.body);
    let grants = api.get("/hecate/v1/agent-chat/grants").await;
    assert_eq!(grants.body["data"], json!([]));

    // Second turn: asked again (the grant is gone), then cancelled.
    let turn = start_turn(&api, &id, "please write again");
    let pending = pending_approval(&api, &id).await;
    let aid2 = pending["id"].as_str().expect("approval id").to_string();
    assert_ne!(aid2, aid);
    let c = api.post(&format!("{base}/{aid2}/cancel"), json!({})).await;
    assert_eq!(c.status, 200, "{}", c.body);
    assert_eq!(c.body["data"]["status"], "cancelled");
    assert_eq!(c.body["data"]["path"], "operator");
    tokio::time::timeout(WAIT, turn)
        .await
        .expect("turn ends")
        .expect("join");
    let c = api.post(&format!("{base}/{aid2}/cancel"), json!({})).await;
    assert_eq!(c.status, 409, "{}", c.body);
    let p = api.get(&format!("{base}?status=pending")).await;
    assert_eq!(p.body["data"], json!([]));
}

#[tokio::test]
async fn changed_files_are_listed_diffed_and_reverted() {
    let home = home();
    let ws = git_workspace();
    let (_s, api, id) = session(&home, ws.path()).await;

    let turn = start_turn(&api, &id, "please write");
    let pending = pending_approval(&api, &id).await;
    let aid = pending["id"].as_str().expect("approval id");
    let r = api
        .post(
            &format!("/hecate/v1/agent-chat/sessions/{id}/approvals/{aid}/resolve"),
            json!({"decision": "approve"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let done = tokio::time::timeout(WAIT, turn)
        .await
        .expect("turn ends")
        .expect("join");
    let msg = last_message(&done)["id"]
        .as_str()
        .expect("message id")
        .to_string();
    let base = format!("/hecate/v1/agent-chat/sessions/{id}/messages/{msg}");
    let stat = last_message(&done)["diff_stat"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for p in ["a.txt", "b.txt", "sub/c.txt"] {
        assert!(
            stat.contains(p),
            "the answer's diff_stat names {p}: {stat:?}"
        );
    }

    let f = api.get(&format!("{base}/files")).await;
    assert_eq!(f.status, 200, "{}", f.body);
    assert_eq!(f.body["object"], "agent_chat_changed_files");
    let mut paths: Vec<&str> = f.body["data"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|x| x["path"].as_str())
        .collect();
    paths.sort_unstable();
    assert_eq!(paths, ["a.txt", "b.txt", "sub/c.txt"], "{}", f.body);
    let f = api
        .get(&format!(
            "/hecate/v1/agent-chat/sessions/{id}/messages/msg_nope/files"
        ))
        .await;
    assert_eq!(f.status, 404, "{}", f.body);

    let d = api.get(&format!("{base}/files/a.txt")).await;
    assert_eq!(d.status, 200, "{}", d.body);
    assert_eq!(d.body["object"], "agent_chat_changed_file_diff");
    assert_eq!(d.body["data"]["path"], "a.txt");
    assert_eq!(d.body["data"]["status"], "modified");
    let diff = d.body["data"]["diff"].as_str().expect("diff");
    assert!(
        diff.contains("-original") && diff.contains("+changed"),
        "{diff}"
    );
    let d = api.get(&format!("{base}/files/sub%2Fc.txt")).await;
    assert_eq!(d.status, 200, "{}", d.body);
    assert_eq!(d.body["data"]["path"], "sub/c.txt");
    assert_eq!(d.body["data"]["status"], "added");
    let d = api.get(&format!("{base}/files/nope.txt")).await;
    assert_eq!(d.status, 404, "{}", d.body);
    assert_eq!(d.error_type(), "not_found");

    let bad = api
        .post(
            &format!("{base}/revert"),
            json!({"paths": ["not-changed.txt"]}),
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(bad.error_type(), "invalid_request");
    // A typo must never widen a destructive request to "revert everything".
    for typo in [json!({"path": ["a.txt"]}), json!({"nope": 1})] {
        let bad = api.post(&format!("{base}/revert"), typo.clone()).await;
        assert_eq!(bad.status, 400, "{typo}: {}", bad.body);
        assert_eq!(bad.error_type(), "invalid_request");
        let field = typo.as_object().and_then(|o| o.keys().next().cloned());
        assert!(
            bad.body
                .to_string()
                .contains(&format!("`{}`", field.unwrap_or_default())),
            "the error names the unknown field: {}",
            bad.body
        );
        assert!(ws.path().join("b.txt").exists(), "{typo} reverted b.txt");
        assert!(
            ws.path().join("sub/c.txt").exists(),
            "{typo} reverted c.txt"
        );
    }

    let mut stream = api.stream(&id, None).await;
    let rv = api
        .post(&format!("{base}/revert"), json!({"paths": ["a.txt"]}))
        .await;
    assert_eq!(rv.status, 200, "{}", rv.body);
    assert_eq!(rv.body["object"], "agent_chat_revert");
    assert_eq!(rv.body["data"]["reverted"], true);
    assert_eq!(rv.body["data"]["paths"], json!(["a.txt"]));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).expect("a"),
        "original\n"
    );
    assert!(ws.path().join("b.txt").exists(), "only a.txt was reverted");
    let stat = rv.body["data"]["diff_stat"].as_str().unwrap_or_default();
    assert!(
        stat.contains("b.txt") && !stat.contains("a.txt"),
        "the remaining diff: {stat}"
    );
    // The stored diff is refreshed: a.txt is no longer among the turn's changes.
    let f = api.get(&format!("{base}/files")).await;
    let mut paths: Vec<&str> = f.body["data"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|x| x["path"].as_str())
        .collect();
    paths.sort_unstable();
    assert_eq!(paths, ["b.txt", "sub/c.txt"], "{}", f.body);
    let d = api.get(&format!("{base}/files/a.txt")).await;
    assert_eq!(d.status, 404, "{}", d.body);
    // Watchers get a snapshot whose message carries a files_reverted activity.
    let reverted_activity = |snapshot: &Value| snapshot.to_string().contains("\"files_reverted\"");
    let mut seen = false;
    for _ in 0..20 {
        let Some(ev) = stream.next(WAIT).await else {
            break;
        };
        if let Ok(v) = serde_json::from_str::<Value>(&ev.data)
            && reverted_activity(&v)
        {
            seen = true;
            break;
        }
    }
    assert!(seen, "no snapshot with the files_reverted activity");
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    let message = shown.body["data"]["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["id"] == msg.as_str()))
        .cloned()
        .expect("the message");
    let kinds: Vec<&str> = message["activities"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["type"].as_str())
        .collect();
    assert_eq!(kinds.last(), Some(&"files_reverted"), "{message}");

    let rv = api
        .post(&format!("{base}/revert"), json!({"paths": []}))
        .await;
    assert_eq!(rv.status, 200, "{}", rv.body);
    assert!(!ws.path().join("b.txt").exists());
    assert!(!ws.path().join("sub/c.txt").exists());
}

#[tokio::test]
async fn revert_needs_a_git_workspace() {
    let home = home();
    let ws = tempfile::tempdir().expect("plain dir");
    let (_s, api, id) = session(&home, ws.path()).await;
    let done = api.say(&id, "hello").await;
    assert_eq!(done.status, 200, "{}", done.body);
    let msg = last_message(&done.body)["id"]
        .as_str()
        .expect("message id")
        .to_string();
    let base = format!("/hecate/v1/agent-chat/sessions/{id}/messages/{msg}");
    let f = api.get(&format!("{base}/files")).await;
    assert_eq!(f.status, 200, "{}", f.body);
    assert_eq!(f.body["data"], json!([]));
    let rv = api
        .post(&format!("{base}/revert"), json!({"paths": []}))
        .await;
    assert_eq!(rv.status, 400, "{}", rv.body);
    assert_eq!(rv.error_type(), "invalid_request");
}

#[tokio::test]
async fn grants_are_created_with_an_expiry_and_bad_ones_refused_with_the_field() {
    let home = Home::empty();
    let s = serve(&home);
    let api = Api::new(&s);
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let ok = api
        .post(
            "/hecate/v1/agent-chat/grants",
            json!({"scope": "workspace_tool", "workspace": format!("{w}/."), "tool_kind": "edit",
                "decision": "approve", "expires_at": "2999-01-01T02:00:00+02:00"}),
        )
        .await;
    assert_eq!(ok.status, 201, "{}", ok.body);
    assert_eq!(ok.body["object"], "agent_chat_grant");
    let g = &ok.body["data"];
    assert_eq!(g["expires_at"], "2999-01-01T00:00:00.000Z", "stored in UTC");
    let canonical = std::fs::canonicalize(ws.path()).expect("canonical");
    assert_eq!(g["workspace"], canonical.display().to_string());
    let listed = api.get("/hecate/v1/agent-chat/grants").await;
    assert_eq!(listed.body["data"][0]["id"], g["id"]);

    let cases = [
        (
            json!({"scope": "once", "tool_kind": "edit", "decision": "approve"}),
            "scope",
        ),
        (
            json!({"scope": "workspace_tool", "tool_kind": "edit", "decision": "approve"}),
            "workspace",
        ),
        (
            json!({"scope": "adapter_tool", "adapter_id": "fixture", "session_id": "s", "tool_kind": "edit", "decision": "approve"}),
            "session_id",
        ),
        (
            json!({"scope": "workspace_tool", "workspace": "/definitely/not/here", "tool_kind": "edit", "decision": "approve"}),
            "workspace",
        ),
        (
            json!({"scope": "adapter_tool", "adapter_id": "fixture", "tool_kind": " ", "decision": "approve"}),
            "tool_kind",
        ),
        (
            json!({"scope": "adapter_tool", "adapter_id": "fixture", "tool_kind": "edit", "decision": "approve", "expires_at": "2001-01-01T00:00:00Z"}),
            "expires_at",
        ),
        (
            json!({"scope": "adapter_tool", "adapter_id": "fixture", "tool_kind": "edit", "decision": "approve", "expires_at": "next week"}),
            "expires_at",
        ),
    ];
    for (body, field) in cases {
        let a = api.post("/hecate/v1/agent-chat/grants", body.clone()).await;
        assert_eq!(
            (a.status, a.error_type()),
            (400, "invalid_request"),
            "{body} -> {}",
            a.body
        );
        assert_eq!(a.body["error"]["field"], field, "{body} -> {}", a.body);
    }
    let typo = api
        .post(
            "/hecate/v1/agent-chat/grants",
            json!({"scope": "adapter_tool", "adapter": "fixture", "tool_kind": "edit", "decision": "approve"}),
        )
        .await;
    assert_eq!(typo.status, 400, "{}", typo.body);
    assert!(
        typo.body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("adapter")
    );
    let unknown = api
        .post(
            "/hecate/v1/agent-chat/grants",
            json!({"scope": "session", "session_id": "sess_nope", "tool_kind": "edit", "decision": "approve"}),
        )
        .await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    let listed = api.get("/hecate/v1/agent-chat/grants").await;
    assert_eq!(
        listed.body["data"].as_array().map(Vec::len),
        Some(1),
        "nothing else was created"
    );
}

#[tokio::test]
async fn usage_and_cost_an_agent_reports_are_recorded_per_turn_and_unknown_otherwise() {
    let home = home();
    let ws = git_workspace();
    let (_s, api, id) = session(&home, ws.path()).await;
    for prompt in ["bill one", "bill two", "hello", "credits"] {
        let r = api.say(&id, prompt).await;
        assert_eq!(r.status, 200, "{prompt}: {}", r.body);
    }
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(shown.status, 200, "{}", shown.body);
    let calls = shown.body["data"]["provider_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let summary: Vec<(Value, Value, Value, Value)> = calls
        .iter()
        .map(|c| {
            (
                c["provider"].clone(),
                c["prompt_tokens"].clone(),
                c["completion_tokens"].clone(),
                c["cost_micros_usd"].clone(),
            )
        })
        .collect();
    // The turn that reported nothing has no call; the running USD total is split
    // per turn; a total in credits is kept unknown in USD.
    assert_eq!(
        summary,
        vec![
            (json!("fixture"), json!(100), json!(20), json!(12_500)),
            (json!("fixture"), json!(150), json!(30), json!(27_500)),
            (json!("fixture"), json!(0), json!(0), Value::Null),
        ],
        "{}",
        shown.body
    );
    let messages = shown.body["data"]["messages"].as_array().expect("messages");
    let answer = messages
        .iter()
        .find(|m| m["content"] == "second")
        .expect("second answer");
    assert_eq!(answer["produced_by_call_id"], calls[1]["id"]);
    // The seed's run metadata of an external-agent answer.
    assert_eq!(answer["adapter_id"], "fixture");
    assert!(answer["adapter_name"].is_string(), "{answer}");
    assert_eq!(answer["driver_kind"], "acp");
    assert_eq!(answer["cost_mode"], "external");
    let canonical = std::fs::canonicalize(ws.path()).expect("canonical");
    assert_eq!(answer["workspace"], canonical.display().to_string());
    assert_eq!(
        answer["native_session_id"],
        shown.body["data"]["native_session_id"]
    );
    assert!(answer["native_session_id"].is_string(), "{answer}");
    // The seed's lifecycle activities of an external-agent answer.
    let rows = answer["activities"].as_array().expect("activities");
    let kinds: Vec<&str> = rows.iter().filter_map(|a| a["type"].as_str()).collect();
    assert_eq!(kinds, ["started", "output", "completed"], "{answer}");
    assert_eq!(
        rows[0]["detail"],
        format!(
            "{} in {}",
            answer["adapter_name"].as_str().expect("name"),
            canonical.display()
        )
    );
    assert_eq!(rows[2]["title"], "Final answer");

    // MCP's transcript shows each answer's usage as HTTP does (another process on
    // the same store), and none on the answer whose turn reported nothing.
    let mut mcp = McpProc::start(&home, json!({}));
    let t = mcp.call_ok("get_transcript", json!({"session_id": id}));
    let over_mcp = t["structuredContent"]["messages"]
        .as_array()
        .cloned()
        .expect("messages");
    let mut with_usage = 0;
    for m in messages.iter().filter(|m| m["role"] == "assistant") {
        let twin = over_mcp
            .iter()
            .find(|x| x["sequence"] == m["sequence"])
            .unwrap_or_else(|| panic!("answer {m} over MCP: {t}"));
        let call = calls.iter().find(|c| c["id"] == m["produced_by_call_id"]);
        match call {
            Some(c) => {
                with_usage += 1;
                assert_eq!(twin["usage"]["prompt_tokens"], c["prompt_tokens"], "{twin}");
                assert_eq!(
                    twin["usage"]["completion_tokens"], c["completion_tokens"],
                    "{twin}"
                );
                assert_eq!(
                    twin["usage"]
                        .get("cost_micros_usd")
                        .cloned()
                        .unwrap_or(Value::Null),
                    c["cost_micros_usd"],
                    "{twin}"
                );
            }
            None => assert!(twin.get("usage").is_none(), "{twin}"),
        }
    }
    assert_eq!(with_usage, 3, "{t}");

    // MCP's tools answer HTTP's resources: every field of an MCP session header,
    // listing entry and message is HTTP's, with the same value (HTTP's transcript
    // carries more), and each keeps the fields the tools have always answered.
    let got = mcp.call_ok("get_session", json!({"session_id": id}));
    let listed_mcp = mcp.call_ok("list_sessions", json!({}));
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    let listed = api.get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let header = [
        "id",
        "title",
        "runtime_kind",
        "status",
        "turns_used",
        "created_at",
        "updated_at",
    ];
    for session in [
        &got["structuredContent"]["session"],
        &t["structuredContent"]["session"],
    ] {
        has_fields(session, &header);
        carried_by(session, &shown.body["data"]);
    }
    let entry = |list: &Value| {
        list.as_array()
            .and_then(|l| l.iter().find(|s| s["id"] == json!(id)))
            .cloned()
            .unwrap_or_else(|| panic!("{id} is not listed: {list}"))
    };
    let over_mcp_entry = entry(&listed_mcp["structuredContent"]["sessions"]);
    has_fields(&over_mcp_entry, &header);
    has_fields(&over_mcp_entry, &["message_count"]);
    carried_by(&over_mcp_entry, &entry(&listed.body["data"]));
    let messages = shown.body["data"]["messages"].as_array().expect("messages");
    assert_eq!(over_mcp.len(), messages.len(), "{t}");
    for (m, twin) in over_mcp.iter().zip(messages) {
        has_fields(m, &["sequence", "role", "text", "status", "created_at"]);
        assert_eq!(m["text"], m["content"], "{m}");
        let mut m = m.clone();
        m.as_object_mut().expect("object").remove("text");
        carried_by(&m, twin);
    }
}

/// Asserts `value` has each of `fields`.
fn has_fields(value: &Value, fields: &[&str]) {
    for f in fields {
        assert!(value.get(f).is_some(), "{f} is missing: {value}");
    }
}

/// Asserts every field of `mcp` is in `http` with the same value.
fn carried_by(mcp: &Value, http: &Value) {
    let fields = mcp
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {mcp}"));
    for (k, v) in fields {
        assert_eq!(http.get(k), Some(v), "{k}: MCP {mcp}, HTTP {http}");
    }
}

#[tokio::test]
async fn an_idle_agent_process_is_stopped_and_reattached_but_never_while_an_approval_waits() {
    let home = home();
    home.write_config("[agents]\nprocess_idle_ms = 300\n");
    let ws = git_workspace();
    let (_s, api, id) = session(&home, ws.path()).await;
    let a = api.say(&id, "hello").await;
    assert_eq!(a.body["data"]["status"], "completed", "{}", a.body);
    let native = |body: &Value| body["data"]["native_session_id"].clone();
    let before = native(
        &api.get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
            .await
            .body,
    );
    assert!(before.is_string(), "{before}");

    // Unused, the process is stopped; the next prompt starts it again and the
    // agent reloads the same native session.
    agent_processes_reach(&api, 0, WAIT).await;
    let a = api.say(&id, "hello").await;
    assert_eq!(a.body["data"]["status"], "completed", "{}", a.body);
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await
        .body;
    assert_eq!(last_message(&shown)["content"], "hi", "{shown}");
    let after = native(&shown);
    assert_eq!(after, before, "reattached with session/load");

    // A turn waiting on an approval keeps its process however long it waits.
    let turn = start_turn(&api, &id, "please write");
    let pending = pending_approval(&api, &id).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    agent_processes_reach(&api, 1, WAIT).await;
    let aid = pending["id"].as_str().expect("approval id");
    let r = api
        .post(
            &format!("/hecate/v1/agent-chat/sessions/{id}/approvals/{aid}/resolve"),
            json!({"decision": "approve"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let done = tokio::time::timeout(WAIT, turn)
        .await
        .expect("turn ends")
        .expect("join");
    assert_eq!(done["data"]["status"], "completed", "{done}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("b.txt")).expect("written"),
        "new file\n"
    );
    agent_processes_reach(&api, 0, WAIT).await;
}

/// The fixture agents running as children of process `parent`.
fn fixture_agent_children(parent: u32) -> usize {
    let ppid = parent.to_string();
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|e| e.ok())
        .filter(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // pid (comm) state ppid ...: the fields after the command name.
            let ppid_of = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.split(' ').nth(1));
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            ppid_of == Some(ppid.as_str())
                && String::from_utf8_lossy(&cmdline).contains("acp-agent")
        })
        .count()
}

#[tokio::test]
async fn serve_with_200_idle_agent_sessions_does_not_keep_200_agent_processes() {
    use futures::StreamExt;
    let home = home();
    home.write_config("[agents]\nprocess_idle_ms = 300\n");
    let ws = git_workspace();
    let s = serve(&home);
    let api = Api::new(&s);
    let turns: Vec<Value> = futures::stream::iter(0..200)
        .map(|_| {
            let (api, ws) = (api.clone(), ws.path());
            async move {
                let id = create_agent_session(&api, "fixture", ws).await;
                api.say(&id, "hello").await.body
            }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    let completed = turns
        .iter()
        .filter(|t| t["data"]["status"] == "completed")
        .count();
    assert_eq!(
        completed,
        200,
        "{:?}",
        turns.iter().find(|t| t["data"]["status"] != "completed")
    );
    // Every session is idle now: their agent processes are stopped, and the OS
    // agrees that none is left.
    agent_processes_reach(&api, 0, WAIT).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    while fixture_agent_children(s.child.id()) > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} agent processes outlived their reaping",
            fixture_agent_children(s.child.id())
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
