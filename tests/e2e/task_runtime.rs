//! The durable task runtime over real HTTP against the real binary: tasks gated
//! by approvals, executed by `hecate serve` workers (confined with bubblewrap by
//! default), their output and patches, events with a replay cursor that survives
//! a restart, the transition rules, bad input, hung steps, and two processes on
//! one store (each run executes once; a run whose worker was SIGKILLed is
//! reclaimed after its lease expires).

use crate::support::common::Home;
use crate::support::http::{Api, Served, serve, serve_args};
use serde_json::{Value, json};
use std::time::Duration;

/// A home whose tasks run without approval gates (unless a test turns them on).
fn ungated() -> Home {
    let mut home = Home::empty();
    home.env
        .push(("HECATE_TASK_APPROVAL_POLICIES".into(), String::new()));
    home
}

async fn create(api: &Api, body: Value) -> String {
    let a = api.post("/hecate/v1/tasks", body).await;
    assert_eq!(a.status, 201, "{}", a.body);
    a.body["data"]["id"].as_str().expect("id").to_string()
}

async fn start(api: &Api, task: &str) -> String {
    let a = api
        .post(&format!("/hecate/v1/tasks/{task}/start"), json!({}))
        .await;
    assert_eq!(a.status, 202, "{}", a.body);
    a.body["data"]["id"].as_str().expect("run id").to_string()
}

/// Polls a run until it is terminal (a hang guard, not a timing assertion).
async fn finished(api: &Api, task: &str, run: &str) -> Value {
    for _ in 0..600 {
        let a = api
            .get(&format!("/hecate/v1/tasks/{task}/runs/{run}"))
            .await;
        let status = a.body["data"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if ["completed", "failed", "cancelled"].contains(&status.as_str()) {
            return a.body["data"].clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("run {run} did not finish");
}

async fn event_types(api: &Api, task: &str, run: &str) -> Vec<String> {
    let a = api
        .get(&format!("/hecate/v1/tasks/{task}/runs/{run}/events"))
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["data"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Reads a run's SSE stream to its end.
async fn stream(
    api: &Api,
    task: &str,
    run: &str,
    last_event_id: Option<&str>,
) -> Vec<(String, String)> {
    use eventsource_stream::Eventsource;
    use futures::StreamExt;
    let mut rb = api.request(
        reqwest::Method::GET,
        &format!("/hecate/v1/tasks/{task}/runs/{run}/stream"),
    );
    if let Some(l) = last_event_id {
        rb = rb.header("last-event-id", l);
    }
    let r = rb.send().await.expect("stream");
    assert_eq!(r.status(), 200);
    let mut events = r.bytes_stream().eventsource();
    let mut out = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(60), events.next()).await {
            Ok(Some(Ok(e))) => out.push((e.id, e.event)),
            Ok(Some(Err(e))) => panic!("SSE error: {e}"),
            Ok(None) => return out,
            Err(_) => panic!("the run stream did not end: {out:?}"),
        }
    }
}

#[tokio::test]
async fn a_shell_task_waits_for_its_approval_then_runs_confined_with_its_output_captured() {
    let home = Home::empty();
    let s = serve(&home);
    let api = Api::new(&s);
    let task = create(
        &api,
        json!({"execution_kind": "shell",
               "shell_command": "echo hello; echo oops >&2; head -c 1100000 /dev/zero | tr '\\0' x"}),
    )
    .await;
    let run = start(&api, &task).await;
    let r = api
        .get(&format!("/hecate/v1/tasks/{task}/runs/{run}"))
        .await;
    assert_eq!(r.body["data"]["status"], "awaiting_approval");
    let approvals = api.get(&format!("/hecate/v1/tasks/{task}/approvals")).await;
    let approval = &approvals.body["data"][0];
    assert_eq!(approval["kind"], "shell_command");
    assert_eq!(approval["status"], "pending");
    let id = approval["id"].as_str().expect("approval id");
    let bad = api
        .post(
            &format!("/hecate/v1/tasks/{task}/approvals/{id}/resolve"),
            json!({"decision": "maybe"}),
        )
        .await;
    assert_eq!((bad.status, bad.error_type()), (400, "invalid_request"));
    let ok = api
        .post(
            &format!("/hecate/v1/tasks/{task}/approvals/{id}/resolve"),
            json!({"decision": "approve", "note": "fine"}),
        )
        .await;
    assert_eq!(ok.body["data"]["status"], "approved", "{}", ok.body);
    let done = finished(&api, &task, &run).await;
    assert_eq!(done["status"], "completed", "{done}");
    let steps = api
        .get(&format!("/hecate/v1/tasks/{task}/runs/{run}/steps"))
        .await;
    assert_eq!(steps.body["data"][0]["exit_code"], 0);
    assert_eq!(steps.body["data"][0]["status"], "completed");
    let step_id = steps.body["data"][0]["id"].as_str().expect("step");
    let one = api
        .get(&format!(
            "/hecate/v1/tasks/{task}/runs/{run}/steps/{step_id}"
        ))
        .await;
    assert_eq!(one.body["data"]["kind"], "shell");
    let arts = api
        .get(&format!("/hecate/v1/tasks/{task}/runs/{run}/artifacts"))
        .await;
    let arts = arts.body["data"].as_array().expect("artifacts").clone();
    let stdout = arts.iter().find(|a| a["name"] == "stdout").expect("stdout");
    assert!(
        stdout["content"]
            .as_str()
            .expect("text")
            .starts_with("hello\n")
    );
    assert_eq!(stdout["size_bytes"], 1_100_006);
    assert_eq!(stdout["truncated"], true, "capped at 1 MiB");
    let stderr = arts.iter().find(|a| a["name"] == "stderr").expect("stderr");
    assert_eq!(stderr["content"], "oops\n");
    let aid = stderr["id"].as_str().expect("artifact id");
    let got = api
        .get(&format!(
            "/hecate/v1/tasks/{task}/runs/{run}/artifacts/{aid}"
        ))
        .await;
    assert_eq!(got.body["data"]["content"], "oops\n");
    assert_eq!(
        event_types(&api, &task, &run).await,
        [
            "run.created",
            "approval.requested",
            "approval.resolved",
            "run.queued",
            "run.started",
            "step.started",
            "step.finished",
            "run.finished"
        ]
    );
    // The stream replays everything, then ends with the run; a reconnect with
    // Last-Event-ID gets exactly what came after.
    let all = stream(&api, &task, &run, None).await;
    assert_eq!(all.len(), 8);
    assert_eq!(all.last().map(|e| e.1.as_str()), Some("run.finished"));
    let after = stream(&api, &task, &run, Some(&all[4].0)).await;
    assert_eq!(after, all[5..].to_vec());
    // The process-wide feed carries them too, filtered by type.
    let feed = api
        .get(&format!(
            "/hecate/v1/events?task_id={task}&event_type=run.started,run.finished"
        ))
        .await;
    let types: Vec<_> = feed.body["data"]
        .as_array()
        .expect("feed")
        .iter()
        .map(|e| e["type"].clone())
        .collect();
    assert_eq!(types, [json!("run.started"), json!("run.finished")]);
    assert_eq!(feed.body["data"][0]["schema_version"], "v1");
}

#[tokio::test]
async fn file_tasks_record_patches_and_never_leave_the_workspace() {
    let home = ungated();
    let s = serve(&home);
    let api = Api::new(&s);
    let ws = tempfile::tempdir().expect("ws");
    let dir = ws.path().canonicalize().expect("canon");
    std::fs::write(dir.join("notes.txt"), "old\n").expect("seed");
    let task = create(
        &api,
        json!({"execution_kind": "file", "file_path": "notes.txt", "file_content": "new\n",
               "workspace_mode": "in_place", "working_directory": dir}),
    )
    .await;
    let run = start(&api, &task).await;
    assert_eq!(finished(&api, &task, &run).await["status"], "completed");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).expect("read"),
        "new\n"
    );
    let arts = api.get(&format!("/hecate/v1/tasks/{task}/artifacts")).await;
    let patch = &arts.body["data"][0];
    assert_eq!(
        (patch["kind"].clone(), patch["status"].clone()),
        (json!("patch"), json!("applied"))
    );
    let body: Value =
        serde_json::from_str(patch["content"].as_str().expect("json")).expect("patch");
    assert_eq!(
        body,
        json!({"path": "notes.txt", "before": "old\n", "after": "new\n"})
    );
    assert!(
        event_types(&api, &task, &run)
            .await
            .contains(&"tool.file.applied".to_string())
    );

    // Revert restores the before-content, apply writes the after-content again,
    // and neither touches a file that changed since.
    let pid = patch["id"].as_str().expect("patch id");
    let base = format!("/hecate/v1/tasks/{task}/runs/{run}/patches");
    let listed = api.get(&base).await;
    assert_eq!(listed.body["data"][0]["before"], "old\n");
    let reverted = api.post(&format!("{base}/{pid}/revert"), json!({})).await;
    assert_eq!(
        reverted.body["data"]["status"], "reverted",
        "{}",
        reverted.body
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).expect("read"),
        "old\n"
    );
    let again = api.post(&format!("{base}/{pid}/revert"), json!({})).await;
    assert_eq!((again.status, again.error_type()), (409, "conflict"));
    std::fs::write(dir.join("notes.txt"), "edited by hand\n").expect("edit");
    let stale = api.post(&format!("{base}/{pid}/apply"), json!({})).await;
    assert_eq!((stale.status, stale.error_type()), (409, "conflict"));
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).expect("read"),
        "edited by hand\n",
        "a conflicting apply leaves the file alone"
    );
    std::fs::write(dir.join("notes.txt"), "old\n").expect("restore");
    let applied = api.post(&format!("{base}/{pid}/apply"), json!({})).await;
    assert_eq!(
        applied.body["data"]["status"], "applied",
        "{}",
        applied.body
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).expect("read"),
        "new\n"
    );
    let types = event_types(&api, &task, &run).await;
    assert!(
        types.ends_with(&[
            "tool.file.reverted".to_string(),
            "tool.file.applied".to_string()
        ]),
        "{types:?}"
    );
    let missing = api.get(&format!("{base}/tart_nope")).await;
    assert_eq!(missing.status, 404);

    // Reverting a patch that created a file removes it.
    let task2 = create(
        &api,
        json!({"execution_kind": "file", "file_path": "sub/fresh.txt", "file_content": "x",
               "workspace_mode": "in_place", "working_directory": dir}),
    )
    .await;
    let run2 = start(&api, &task2).await;
    assert_eq!(finished(&api, &task2, &run2).await["status"], "completed");
    let p2 = api
        .get(&format!("/hecate/v1/tasks/{task2}/runs/{run2}/patches"))
        .await;
    let p2id = p2.body["data"][0]["id"].as_str().expect("id");
    assert_eq!(p2.body["data"][0]["before"], Value::Null);
    let r = api
        .post(
            &format!("/hecate/v1/tasks/{task2}/runs/{run2}/patches/{p2id}/revert"),
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(!dir.join("sub/fresh.txt").exists());
    // Deleting an in-place task never touches the user's directory.
    let deleted = api.delete(&format!("/hecate/v1/tasks/{task2}")).await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert!(
        dir.join("notes.txt").exists(),
        "the working directory is the user's"
    );

    // A symlink that leaves the workspace: the run fails and nothing is written.
    let outside = tempfile::tempdir().expect("outside");
    std::os::unix::fs::symlink(outside.path(), dir.join("link")).expect("link");
    let task = create(
        &api,
        json!({"execution_kind": "file", "file_path": "link/x.txt", "file_content": "x",
               "workspace_mode": "in_place", "working_directory": dir}),
    )
    .await;
    let run = start(&api, &task).await;
    let done = finished(&api, &task, &run).await;
    assert_eq!(
        (done["status"].clone(), done["error_type"].clone()),
        (json!("failed"), json!("sandbox_error")),
        "{done}"
    );
    assert!(!outside.path().join("x.txt").exists());
}

#[tokio::test]
async fn bad_input_is_refused_with_the_field_named_and_creates_nothing() {
    let home = Home::empty();
    let s = serve(&home);
    let api = Api::new(&s);
    let ws = tempfile::tempdir().expect("ws");
    let root = tempfile::tempdir().expect("root");
    let cases = [
        (
            json!({"execution_kind": "python", "shell_command": "x"}),
            "execution_kind",
        ),
        (json!({"shell_command": "x"}), "execution_kind"),
        (json!({"execution_kind": "shell"}), "shell_command"),
        (
            json!({"execution_kind": "git", "git_command": "log 'open"}),
            "git_command",
        ),
        (json!({"execution_kind": "file"}), "file_path"),
        (
            json!({"execution_kind": "shell", "shell_command": "x", "workspace_mode": "in_place"}),
            "working_directory",
        ),
        (
            json!({"execution_kind": "shell", "shell_command": "x", "working_directory": "relative/dir"}),
            "working_directory",
        ),
        (
            json!({"execution_kind": "shell", "shell_command": "x", "working_directory": "/definitely/not/here"}),
            "working_directory",
        ),
        (
            json!({"execution_kind": "shell", "shell_command": "x", "working_directory": ws.path(),
                "sandbox_allowed_root": root.path()}),
            "working_directory",
        ),
        (
            json!({"execution_kind": "shell", "shell_command": "x", "workspace_mode": "sometimes"}),
            "workspace_mode",
        ),
        (
            json!({"execution_kind": "file", "file_path": "a", "file_operation": "chmod"}),
            "file_operation",
        ),
        (
            json!({"execution_kind": "shell", "shell_command": "x", "execution_profile": "fast"}),
            "execution_profile",
        ),
        (
            json!({"execution_profile": "repo_local", "prompt": "x", "working_directory": "."}),
            "working_directory",
        ),
        (
            json!({"execution_kind": "shell", "shell_command": "x",
                "mcp_servers": vec![json!({"name": "s", "command": "true"}); 17]}),
            "mcp_servers",
        ),
    ];
    for (body, field) in cases {
        let a = api.post("/hecate/v1/tasks", body.clone()).await;
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
            "/hecate/v1/tasks",
            json!({"execution_kind": "shell", "shell_comand": "x"}),
        )
        .await;
    assert_eq!(
        typo.status, 400,
        "unknown fields are refused: {}",
        typo.body
    );
    assert!(
        typo.body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("shell_comand")
    );
    let agent = api
        .post(
            "/hecate/v1/tasks",
            json!({"execution_kind": "agent_loop", "prompt": " "}),
        )
        .await;
    assert_eq!((agent.status, agent.error_type()), (400, "invalid_request"));
    assert_eq!(agent.body["error"]["field"], "prompt", "{}", agent.body);
    let list = api.get("/hecate/v1/tasks").await;
    assert_eq!(list.body["data"], json!([]), "nothing was created");
    for path in [
        "/hecate/v1/tasks/task_nope",
        "/hecate/v1/tasks/task_nope/runs",
        "/hecate/v1/tasks/task_nope/approvals",
    ] {
        let a = api.get(path).await;
        assert_eq!((a.status, a.error_type()), (404, "not_found"), "{path}");
    }
    // A profile never picks the server's own directory: without one the task
    // gets a directory of its own when it runs.
    let profiled = create(
        &api,
        json!({"execution_profile": "repo_local", "prompt": "look around"}),
    )
    .await;
    let t = api.get(&format!("/hecate/v1/tasks/{profiled}")).await;
    assert_eq!(t.body["data"]["workspace_mode"], "persistent", "{}", t.body);
    assert!(
        t.body["data"]["working_directory"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "{}",
        t.body
    );
    assert_eq!(
        api.delete(&format!("/hecate/v1/tasks/{profiled}"))
            .await
            .status,
        200
    );
    let task = create(
        &api,
        json!({"execution_kind": "shell", "shell_command": "true"}),
    )
    .await;
    for path in [
        format!("/hecate/v1/tasks/{task}/runs/trun_nope"),
        format!("/hecate/v1/tasks/{task}/runs/trun_nope/steps"),
        format!("/hecate/v1/tasks/{task}/runs/trun_nope/events"),
        format!("/hecate/v1/tasks/{task}/approvals/tappr_nope"),
    ] {
        let a = api.get(&path).await;
        assert_eq!((a.status, a.error_type()), (404, "not_found"), "{path}");
    }
}

#[tokio::test]
async fn runs_move_only_through_valid_transitions() {
    let home = Home::empty();
    let s = serve(&home);
    let api = Api::new(&s);
    let task = create(
        &api,
        json!({"execution_kind": "shell", "shell_command": "echo hi"}),
    )
    .await;
    let run = start(&api, &task).await;
    // One active run per task.
    let again = api
        .post(&format!("/hecate/v1/tasks/{task}/start"), json!({}))
        .await;
    assert_eq!((again.status, again.error_type()), (409, "conflict"));
    let busy = api.delete(&format!("/hecate/v1/tasks/{task}")).await;
    assert_eq!((busy.status, busy.error_type()), (409, "conflict"));
    let resume = api
        .post(
            &format!("/hecate/v1/tasks/{task}/runs/{run}/resume"),
            json!({}),
        )
        .await;
    assert_eq!(
        (resume.status, resume.error_type()),
        (409, "conflict"),
        "not ended yet"
    );
    // Cancelling a run that waits for its approval cancels the approval; the
    // approval can no longer be resolved.
    let cancelled = api
        .post(
            &format!("/hecate/v1/tasks/{task}/runs/{run}/cancel"),
            json!({}),
        )
        .await;
    assert_eq!(
        cancelled.body["data"]["status"], "cancelled",
        "{}",
        cancelled.body
    );
    let approvals = api.get(&format!("/hecate/v1/tasks/{task}/approvals")).await;
    assert_eq!(approvals.body["data"][0]["status"], "cancelled");
    let id = approvals.body["data"][0]["id"].as_str().expect("id");
    let late = api
        .post(
            &format!("/hecate/v1/tasks/{task}/approvals/{id}/resolve"),
            json!({"decision": "approve"}),
        )
        .await;
    assert_eq!((late.status, late.error_type()), (409, "conflict"));
    let twice = api
        .post(
            &format!("/hecate/v1/tasks/{task}/runs/{run}/cancel"),
            json!({}),
        )
        .await;
    assert_eq!((twice.status, twice.error_type()), (409, "conflict"));
    // Retry makes run 2, from the cancelled one; rejecting its gate fails it.
    let retry = api
        .post(
            &format!("/hecate/v1/tasks/{task}/runs/{run}/retry"),
            json!({"reason": "try again"}),
        )
        .await;
    assert_eq!(retry.status, 202, "{}", retry.body);
    assert_eq!(retry.body["data"]["number"], 2);
    assert_eq!(retry.body["data"]["resumed_from_run_id"], json!(run));
    let run2 = retry.body["data"]["id"]
        .as_str()
        .expect("run 2")
        .to_string();
    let pending = api.get(&format!("/hecate/v1/tasks/{task}/approvals")).await;
    let id2 = pending.body["data"][1]["id"]
        .as_str()
        .expect("second approval");
    let rejected = api
        .post(
            &format!("/hecate/v1/tasks/{task}/approvals/{id2}/resolve"),
            json!({"decision": "reject", "note": "no"}),
        )
        .await;
    assert_eq!(rejected.body["data"]["status"], "rejected");
    let r2 = finished(&api, &task, &run2).await;
    assert_eq!(
        (r2["status"].clone(), r2["error_type"].clone()),
        (json!("failed"), json!("approval_rejected"))
    );
    let types = event_types(&api, &task, &run2).await;
    assert_eq!(types[1], "run.resumed_from_event");
    // A completed run cannot be retried, a retried one cannot be started twice,
    // and an ended task can be deleted.
    let nope = api
        .post(
            &format!("/hecate/v1/tasks/{task}/runs/{run2}/retry"),
            json!({"bogus": 1}),
        )
        .await;
    assert_eq!(nope.status, 400, "unknown body fields: {}", nope.body);
    let gone = api.delete(&format!("/hecate/v1/tasks/{task}")).await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    let after = api.get(&format!("/hecate/v1/tasks/{task}")).await;
    assert_eq!(after.status, 404);
}

#[tokio::test]
async fn a_hung_step_is_killed_at_its_timeout_with_everything_it_started() {
    let home = ungated();
    let s = serve(&home);
    let api = Api::new(&s);
    let marker = format!("hecate-hung-{}", std::process::id());
    let task = create(
        &api,
        json!({"execution_kind": "shell", "timeout_ms": 3000,
               "shell_command": format!("(sleep 1000; echo {marker}) & sleep 1000; echo {marker}")}),
    )
    .await;
    let run = start(&api, &task).await;
    // The step and its background child run (the check below is not vacuous).
    let mut seen = false;
    for _ in 0..100 {
        if crate::support::child::pids_running(&marker).len() >= 2 {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(seen, "the step's processes never showed up");
    let done = finished(&api, &task, &run).await;
    assert_eq!(
        (done["status"].clone(), done["error_type"].clone()),
        (json!("failed"), json!("step_timeout")),
        "{done}"
    );
    assert!(
        crate::support::child::all_gone(&marker, Duration::from_secs(5)).await,
        "a process of the hung step survived"
    );
}

#[tokio::test]
async fn the_replay_cursor_survives_a_restart() {
    let home = ungated();
    let (task, run, all) = {
        let s = serve(&home);
        let api = Api::new(&s);
        let task = create(
            &api,
            json!({"execution_kind": "shell", "shell_command": "echo one"}),
        )
        .await;
        let run = start(&api, &task).await;
        finished(&api, &task, &run).await;
        let all = stream(&api, &task, &run, None).await;
        (task, run, all)
    };
    let s = serve(&home);
    let api = Api::new(&s);
    let after = stream(&api, &task, &run, Some(&all[2].0)).await;
    assert_eq!(after, all[3..].to_vec());
    // Deleting the task removes the workspace Hecate made for its run.
    let r = api
        .get(&format!("/hecate/v1/tasks/{task}/runs/{run}"))
        .await;
    let ws = std::path::PathBuf::from(r.body["data"]["workspace"].as_str().expect("workspace"));
    assert!(ws.is_dir() && ws.starts_with(home.dir.path().canonicalize().expect("home")));
    let gone = api.delete(&format!("/hecate/v1/tasks/{task}")).await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    assert!(!ws.exists(), "the ephemeral workspace was removed");
}

fn kill9(served: &mut Served) {
    let _ = served.child.kill();
    let _ = served.child.wait();
}

#[tokio::test]
async fn two_servers_on_one_store_run_each_task_once_and_reclaim_a_dead_workers_run() {
    two_servers_run_each_task_once_and_reclaim_a_dead_workers_run(&mut ungated()).await;
}

#[tokio::test]
async fn two_servers_on_one_postgres_database_run_each_task_once_and_reclaim_a_dead_workers_run() {
    let url = tokio::task::spawn_blocking(crate::support::postgres::fresh_database_url)
        .await
        .expect("database");
    let mut home = ungated();
    home.set("HECATE_STORE_URL", &url);
    two_servers_run_each_task_once_and_reclaim_a_dead_workers_run(&mut home).await;
    assert!(
        !home.data_dir().join("hecate.db").exists(),
        "the replicas kept their tasks in PostgreSQL"
    );
}

/// Two `hecate serve` on the store `home` names: twelve runs created on either
/// each run once; a run whose server is SIGKILLed mid-step is finished by the
/// other after its lease expires.
async fn two_servers_run_each_task_once_and_reclaim_a_dead_workers_run(home: &mut Home) {
    home.env
        .push(("HECATE_TASK_QUEUE_LEASE_SECONDS".into(), "2".into()));
    let args = ["serve", "--listen", "127.0.0.1:0"];
    let mut a = serve_args(home, &args);
    let b = serve_args(home, &args);
    let (api_a, api_b) = (Api::new(&a), Api::new(&b));
    let ws = tempfile::tempdir().expect("ws");
    let dir = ws.path().canonicalize().expect("canon");
    let mut runs = Vec::new();
    for i in 0..12 {
        let api = if i % 2 == 0 { &api_a } else { &api_b };
        let task = create(
            api,
            json!({"execution_kind": "shell", "workspace_mode": "in_place",
                   "working_directory": dir, "shell_command": format!("echo {i} >> ran.txt")}),
        )
        .await;
        runs.push((task.clone(), start(api, &task).await));
    }
    for (task, run) in &runs {
        let done = finished(&api_b, task, run).await;
        let arts = api_b
            .get(&format!("/hecate/v1/tasks/{task}/runs/{run}/artifacts"))
            .await;
        assert_eq!(done["status"], "completed", "{done} {}", arts.body);
        let types = event_types(&api_a, task, run).await;
        assert_eq!(
            types.iter().filter(|t| *t == "run.started").count(),
            1,
            "{types:?}"
        );
    }
    let ran = std::fs::read_to_string(dir.join("ran.txt")).expect("ran");
    let mut lines: Vec<_> = ran.lines().collect();
    lines.sort();
    lines.dedup();
    assert_eq!(
        (ran.lines().count(), lines.len()),
        (12, 12),
        "each task ran exactly once"
    );

    // Server A holds a slow run and is SIGKILLed; B claims it after the lease.
    let task = create(
        &api_a,
        json!({"execution_kind": "shell", "workspace_mode": "in_place", "working_directory": dir,
               "shell_command": "echo started >> slow.txt; sleep 4; echo done >> slow.txt"}),
    )
    .await;
    drop(b);
    let run = start(&api_a, &task).await;
    for _ in 0..100 {
        if dir.join("slow.txt").exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    kill9(&mut a);
    let b = serve_args(home, &args);
    let api_b = Api::new(&b);
    let done = finished(&api_b, &task, &run).await;
    assert_eq!(done["status"], "completed", "{done}");
    let events = api_b
        .get(&format!(
            "/hecate/v1/tasks/{task}/runs/{run}/events?event_type=gap.run_disconnected"
        ))
        .await;
    assert_eq!(
        events.body["data"][0]["data"]["reason"], "worker_lease_expired",
        "{}",
        events.body
    );
}

/// A client appends its own events to a run's log: they follow Hecate's in the
/// run's list and the feed; Hecate's own names, malformed types, non-object data,
/// no events and unknown runs are refused and append nothing.
#[tokio::test]
async fn a_client_appends_its_own_events_to_a_runs_log() {
    let home = ungated();
    let s = serve(&home);
    let api = Api::new(&s);
    let task = create(
        &api,
        json!({"execution_kind": "shell", "shell_command": "true"}),
    )
    .await;
    let run = start(&api, &task).await;
    finished(&api, &task, &run).await;
    let path = format!("/hecate/v1/tasks/{task}/runs/{run}/events");
    let before = api.get(&path).await.body["data"]
        .as_array()
        .expect("events")
        .len();

    let a = api
        .post(
            &path,
            json!({"events": [{"type": "ci.note", "data": {"text": "looked fine"}}, {"type": "ci.done"}]}),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(a.body["object"], "task_events");
    assert_eq!(a.body["data"][0]["type"], "ci.note");
    assert_eq!(a.body["data"][1]["data"], json!({}));
    let listed = api.get(&path).await.body["data"].clone();
    let types: Vec<&str> = listed
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert_eq!(types.len(), before + 2);
    assert_eq!(&types[before..], ["ci.note", "ci.done"]);
    // The newest events: listed oldest first, and replayed first by a stream.
    let tail = api.get("/hecate/v1/events?tail=2").await;
    let tail_types: Vec<&str> = tail.body["data"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert_eq!(tail_types, ["ci.note", "ci.done"], "{}", tail.body);
    {
        use eventsource_stream::Eventsource;
        use futures::StreamExt;
        let r = api
            .request(reqwest::Method::GET, "/hecate/v1/events/stream?tail=1")
            .send()
            .await
            .expect("stream");
        let mut frames = r.bytes_stream().eventsource();
        let first = tokio::time::timeout(Duration::from_secs(30), frames.next())
            .await
            .expect("a frame")
            .expect("open")
            .expect("SSE");
        assert_eq!(first.event, "ci.done", "only the newest is replayed");
    }
    let bad = api.get("/hecate/v1/events?tail=0").await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(bad.body["error"]["field"], "tail");
    let feed = api.get("/hecate/v1/events?event_type=ci.note").await;
    assert_eq!(
        feed.body["data"][0]["run_id"],
        run.as_str(),
        "{}",
        feed.body
    );

    for (body, field) in [
        (json!({"events": []}), "events"),
        (
            json!({"events": [{"type": "run.finished"}]}),
            "events[0].type",
        ),
        (
            json!({"events": [{"type": "ok.one"}, {"type": "Bad Type"}]}),
            "events[1].type",
        ),
        (
            json!({"events": [{"type": "ci.x", "data": [1, 2]}]}),
            "events[0].data",
        ),
    ] {
        let bad = api.post(&path, body.clone()).await;
        assert_eq!(
            (bad.status, bad.error_type()),
            (400, "invalid_request"),
            "{body}: {}",
            bad.body
        );
        assert_eq!(bad.body["error"]["field"], field, "{body}: {}", bad.body);
    }
    let unknown = api
        .post(
            &format!("/hecate/v1/tasks/{task}/runs/trun_nope/events"),
            json!({"events": [{"type": "ci.x"}]}),
        )
        .await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    let after = api.get(&path).await.body["data"]
        .as_array()
        .expect("events")
        .len();
    assert_eq!(after, before + 2, "refusals appended nothing");
}

/// Every frame of a run's stream carries the run as it is: a gated shell run
/// shows its pending approval (with `needs_action`) before anyone answers, and
/// its step, output, answered approval and result once it is over, so a client
/// follows it without refetching.
#[tokio::test]
async fn a_runs_stream_frames_carry_its_state_and_timeline() {
    use eventsource_stream::Eventsource;
    use futures::StreamExt;
    let home = Home::empty();
    let s = serve(&home);
    let api = Api::new(&s);
    let task = create(
        &api,
        json!({"execution_kind": "shell", "shell_command": "echo streamed"}),
    )
    .await;
    let run = start(&api, &task).await;
    let r = api
        .request(
            reqwest::Method::GET,
            &format!("/hecate/v1/tasks/{task}/runs/{run}/stream"),
        )
        .send()
        .await
        .expect("stream");
    assert_eq!(r.status(), 200);
    let mut frames = r.bytes_stream().eventsource();
    let mut next = async || -> Option<(String, Value)> {
        match tokio::time::timeout(Duration::from_secs(60), frames.next()).await {
            Ok(Some(Ok(e))) => Some((e.event, serde_json::from_str(&e.data).expect("JSON data"))),
            Ok(Some(Err(e))) => panic!("SSE error: {e}"),
            Ok(None) => None,
            Err(_) => panic!("the run stream stalled"),
        }
    };
    // Replayed up to the gate: the frames say the run waits for a person.
    let mut waiting = None;
    while let Some((event, data)) = next().await {
        assert_eq!(data["event_type"], event, "{data}");
        assert_eq!(data["type"], event, "the envelope is kept: {data}");
        if event == "approval.requested" {
            waiting = Some(data);
            break;
        }
    }
    let waiting = waiting.expect("an approval.requested frame");
    assert_eq!(waiting["run"]["status"], "awaiting_approval", "{waiting}");
    assert_eq!(waiting["approvals"][0]["status"], "pending");
    let gate = waiting["activity"]
        .as_array()
        .expect("activity")
        .iter()
        .find(|a| a["type"] == "approval")
        .expect("an approval row")
        .clone();
    assert_eq!(gate["needs_action"], true, "{gate}");
    let approval_id = gate["approval_id"].as_str().expect("approval_id");
    assert_eq!(waiting["approvals"][0]["id"], approval_id);

    let ok = api
        .post(
            &format!("/hecate/v1/tasks/{task}/approvals/{approval_id}/resolve"),
            json!({"decision": "approve", "note": "go"}),
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    let mut last = None;
    while let Some((_, data)) = next().await {
        last = Some(data);
    }
    let last = last.expect("frames after the approval");
    assert_eq!(last["event_type"], "run.finished", "{last}");
    assert_eq!(last["run"]["status"], "completed");
    assert_eq!(last["steps"][0]["status"], "completed");
    assert!(
        last["artifacts"]
            .as_array()
            .expect("artifacts")
            .iter()
            .any(|a| a["kind"] == "stdout" && a["content"] == "streamed\n"),
        "{last}"
    );
    let rows: Vec<(&str, &str)> = last["activity"]
        .as_array()
        .expect("activity")
        .iter()
        .map(|a| {
            (
                a["type"].as_str().unwrap_or_default(),
                a["status"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("approval", "approved"),
            ("tool_call", "completed"),
            ("run_result", "completed")
        ]
    );
    assert_eq!(last["activity"][0]["needs_action"], false);
    assert_eq!(last["activity"][0]["detail"], "go");
}

/// `GET /hecate/v1/tasks` filters by the newest run's status, the kind and the
/// directory, pages with a `before` cursor, shows each task's newest run
/// status, and refuses a status, kind or cursor it does not know.
#[tokio::test]
async fn the_task_list_filters_and_pages() {
    let home = ungated();
    let s = serve(&home);
    let api = Api::new(&s);
    let dir = tempfile::tempdir().expect("dir");
    let dir = dir.path().canonicalize().expect("canonical");
    let shell = create(
        &api,
        json!({"execution_kind": "shell", "shell_command": "true",
               "working_directory": dir, "sandbox_allowed_root": dir}),
    )
    .await;
    let never = create(
        &api,
        json!({"execution_kind": "shell", "shell_command": "true"}),
    )
    .await;
    let run = start(&api, &shell).await;
    finished(&api, &shell, &run).await;

    let all = api.get("/hecate/v1/tasks?limit=1").await;
    assert_eq!(all.status, 200, "{}", all.body);
    assert_eq!(all.body["data"][0]["id"], never.as_str());
    let next = api
        .get(&format!("/hecate/v1/tasks?limit=1&before={never}"))
        .await;
    assert_eq!(next.body["data"][0]["id"], shell.as_str(), "{}", next.body);
    assert_eq!(next.body["data"][0]["latest_run_status"], "completed");
    let done = api.get("/hecate/v1/tasks?status=completed").await;
    let ids: Vec<&str> = done.body["data"]
        .as_array()
        .expect("tasks")
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert_eq!(ids, [shell.as_str()]);
    let wd = api
        .get(&format!(
            "/hecate/v1/tasks?execution_kind=shell&working_directory={}",
            dir.display()
        ))
        .await;
    assert_eq!(
        wd.body["data"].as_array().map(Vec::len),
        Some(1),
        "{}",
        wd.body
    );
    for (query, field, status) in [
        ("status=paused", "status", 400),
        ("execution_kind=python", "execution_kind", 400),
        ("before=task_nope", "before", 404),
    ] {
        let bad = api.get(&format!("/hecate/v1/tasks?{query}")).await;
        assert_eq!(bad.status, status, "{query}: {}", bad.body);
        assert_eq!(bad.body["error"]["field"], field, "{query}: {}", bad.body);
    }
}
