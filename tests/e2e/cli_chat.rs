//! `hecate chat` and `hecate sessions` against the fixture model server: streaming,
//! recording, continuing with history, rich content, export and delete.

use crate::support::common::{Home, ModelServer, session_id_from, text};
use serde_json::json;

#[test]
fn chat_streams_records_and_continues_with_history() {
    let server = ModelServer::start(Some(json!([
        {"match": {"api": "openai_chat", "contains": "first question"}, "text": "first answer here", "usage": {"input_tokens": 7, "output_tokens": 3}},
        {"match": {"api": "openai_chat", "contains": "second question"}, "text": "second answer"}
    ])));
    let home = Home::with_openai(&server);
    let out = home.run(&[
        "chat",
        "--model",
        "fix/fixture-model",
        "--system",
        "be brief",
        "first question",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "first answer here");
    let id = session_id_from(&out.stderr);

    let out = home.run(&["chat", "--session", &id, "second question"]);
    assert!(out.status.success(), "{}", text(&out).1);
    assert_eq!(text(&out).0.trim(), "second answer");

    // The second request carried the system prompt and the whole history.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let msgs = reqs[1]["body"]["messages"]
        .as_array()
        .expect("messages")
        .clone();
    let roles: Vec<_> = msgs
        .iter()
        .map(|m| m["role"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(msgs[0]["content"], "be brief");
    assert_eq!(msgs[2]["content"], "first answer here");
    assert_eq!(reqs[1]["body"]["stream"], true);

    let show = home.json(&["sessions", "show", &id, "--format", "json"]);
    assert_eq!(show["object"], "agent_chat_session");
    let data = &show["data"];
    let seqs: Vec<i64> = data["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["sequence"].as_i64().expect("seq"))
        .collect();
    assert_eq!(seqs, [0, 1, 2, 3]);
    assert_eq!(data["turns_used"], 2);
    assert_eq!(data["provider_calls"][0]["prompt_tokens"], 7);
    assert!(
        data["provider_calls"][0]["cost_micros_usd"].is_null(),
        "unknown price stays unknown"
    );
    assert_eq!(
        data["messages"][1]["produced_by_call_id"],
        data["provider_calls"][0]["id"]
    );
    assert_eq!(data["segments"].as_array().map(Vec::len), Some(1));
    assert_eq!(data["runs"][1]["status"], "completed");

    let text_show = text(&home.run(&["sessions", "show", &id])).0;
    assert!(
        text_show.contains("fix/fixture-model · 7 in / 3 out tokens · cost unknown"),
        "{text_show}"
    );

    let md = text(&home.run(&["sessions", "export", &id, "--format", "md"])).0;
    assert!(
        md.contains("## assistant (#3)") && md.contains("second answer"),
        "{md}"
    );

    let list = home.json(&["sessions", "list", "--format", "json"]);
    assert_eq!(list["object"], "agent_chat_sessions");
    assert_eq!(list["data"][0]["message_count"], 4);

    assert!(home.run(&["sessions", "delete", &id]).status.success());
    let gone = home.run(&["sessions", "show", &id]);
    assert_eq!(gone.status.code(), Some(3), "not_found exit code");
    assert!(text(&gone).1.contains("not_found"));
}

#[test]
fn anthropic_thinking_keeps_its_signature_and_is_replayed() {
    let server = ModelServer::start(Some(json!([
        {"match": {"api": "anthropic"}, "thinking": "let me think", "signature": "sig-123", "text": "pondered answer"},
        {"match": {"api": "anthropic"}, "text": "ok"}
    ])));
    let mut home = Home::empty();
    home.set("PROVIDER_ANT_BASE_URL", &server.base);
    home.set("PROVIDER_ANT_KIND", "anthropic");
    home.set("PROVIDER_ANT_API_KEY", "test-key");
    let out = home.run(&["chat", "--model", "ant/claude-test", "think please"]);
    assert!(out.status.success(), "{}", text(&out).1);
    assert_eq!(text(&out).0.trim(), "pondered answer");
    let id = session_id_from(&out.stderr);
    assert!(
        home.run(&["chat", "--session", &id, "again"])
            .status
            .success()
    );

    let reqs = server.requests();
    assert_eq!(reqs[0]["headers"]["x-api-key"], "test-key");
    let replayed = &reqs[1]["body"]["messages"][1]["content"];
    assert_eq!(replayed[0]["type"], "thinking");
    assert_eq!(replayed[0]["signature"], "sig-123");
    assert_eq!(replayed[1]["text"], "pondered answer");

    let show = home.json(&["sessions", "show", &id, "--format", "json"]);
    let blocks = &show["data"]["messages"][1]["content_blocks"];
    assert_eq!(blocks[0]["type"], "thinking");
    assert_eq!(blocks[0]["signature"], "sig-123");
}

#[test]
fn tool_calls_pass_through_into_the_message_model() {
    let server = ModelServer::start(Some(json!([
        {"text": "calling", "tool_calls": [{"id": "call_9", "name": "read_file", "arguments": {"path": "a.txt"}}]}
    ])));
    let home = Home::with_openai(&server);
    let out = home.run(&[
        "chat",
        "--model",
        "fix/fixture-model",
        "--format",
        "json",
        "read it",
    ]);
    assert!(out.status.success(), "{}", text(&out).1);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let a = &v["data"]["assistant"];
    assert_eq!(a["tool_calls"][0]["name"], "read_file");
    let args: serde_json::Value =
        serde_json::from_str(a["tool_calls"][0]["arguments"].as_str().expect("args"))
            .expect("json args");
    assert_eq!(args["path"], "a.txt");
    assert_eq!(a["content_blocks"][1]["type"], "tool_use");
}

#[test]
fn bad_input_gets_stable_errors_and_exit_codes() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let empty = home.run(&["chat", "--model", "fix/m", "   "]);
    assert_eq!(empty.status.code(), Some(2));
    assert!(text(&empty).1.contains("invalid_request"));

    let huge = vec![b'x'; 1024 * 1024 + 1];
    let over = home.run_with_stdin(&["chat", "--model", "fix/m", "-"], &huge);
    assert_eq!(over.status.code(), Some(2), "{}", text(&over).1);
    assert!(text(&over).1.contains("limit is"));

    let no_model = home.run(&["chat", "hello"]);
    assert_eq!(no_model.status.code(), Some(2));
    assert!(text(&no_model).1.contains("agent_chat.model_required"));

    let unknown = home.run(&["chat", "--model", "nowhere/m", "hello"]);
    assert_eq!(unknown.status.code(), Some(5));
    assert!(text(&unknown).1.contains("route_impossible"));

    let missing = home.run(&["chat", "--session", "agent_chat_nope", "hello"]);
    assert_eq!(missing.status.code(), Some(3));
    assert!(text(&missing).1.contains("not_found"));

    let bad_ws = home.run(&[
        "chat",
        "--model",
        "fix/m",
        "--workspace",
        "/no/such/dir",
        "hi",
    ]);
    assert_eq!(bad_ws.status.code(), Some(2));
    assert!(text(&bad_ws).1.contains("agent_chat.workspace_required"));

    // Nothing was stored by any rejected request.
    let list = home.json(&["sessions", "list", "--format", "json"]);
    assert_eq!(list["data"].as_array().map(Vec::len), Some(0));
}

#[test]
fn switching_model_starts_a_new_segment() {
    let server = ModelServer::start(None);
    let mut home = Home::with_openai(&server);
    home.set("PROVIDER_FIX_MODELS", "m1,m2");
    let out = home.run(&["chat", "--model", "fix/m1", "one"]);
    assert!(out.status.success(), "{}", text(&out).1);
    let id = session_id_from(&out.stderr);
    assert!(
        home.run(&["chat", "--session", &id, "two"])
            .status
            .success()
    );
    assert!(
        home.run(&["chat", "--session", &id, "--model", "fix/m2", "three"])
            .status
            .success()
    );
    let stale = home.run(&["chat", "--session", &id, "--model", "fix/m3", "four"]);
    assert_eq!(stale.status.code(), Some(5));
    assert!(text(&stale).1.contains("model_not_configured"));
    let show = home.json(&["sessions", "show", &id, "--format", "json"]);
    let segs = show["data"]["segments"]
        .as_array()
        .expect("segments")
        .clone();
    assert_eq!(segs.len(), 2);
    assert_eq!(segs[0]["model"], "m1");
    assert_eq!(segs[0]["message_count"], 4);
    assert_eq!(segs[1]["model"], "m2");
    assert_eq!(show["data"]["model"], "m2");
}

#[test]
fn logs_on_a_pipe_carry_no_colour_codes_and_json_logs_are_one_object_a_line() {
    let server = ModelServer::start(Some(json!([
        {"match": {"api": "openai_chat", "contains": "log me"}, "text": "logged"},
        {"match": {"api": "openai_chat", "contains": "log me"}, "text": "logged"}
    ])));
    let home = Home::with_openai(&server);
    let out = home.run(&["-vv", "chat", "--model", "fix/fixture-model", "log me"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "logged");
    assert!(
        stderr.contains("DEBUG"),
        "debug logs reach stderr: {stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "stderr is a pipe, so no ANSI escapes: {stderr:?}"
    );
    let out = home.run(&[
        "-vv",
        "--log-format",
        "json",
        "chat",
        "--model",
        "fix/fixture-model",
        "log me",
    ]);
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let logs: Vec<serde_json::Value> = stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(!logs.is_empty(), "{stderr}");
    assert!(logs.iter().all(|l| l["level"].is_string()), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
}
