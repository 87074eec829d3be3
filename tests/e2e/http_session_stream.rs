//! The session SSE stream: a subscriber sees partial output then `done`; a client
//! that reconnects with `Last-Event-ID` resumes without duplicates; a client that
//! disconnects (from the stream or from the POST) does not disturb the turn; a
//! Hecate Agent turn streams its model's words as they come; a turn that ends
//! while its snapshot is being read never leaves a `done` that says `running`.

use crate::support::agent::{WIRES, agent_home};
use crate::support::common::{Home, ModelServer, workspace};
use crate::support::http::{Api, SseReader, data, last_message, serve, slow_text};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);

fn full_text(words: usize) -> String {
    (0..words)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `(run_id, seq, done)` of an event id.
fn parse_id(id: &str) -> (String, i64, bool) {
    let mut parts = id.split(':');
    let run = parts.next().unwrap_or_default().to_string();
    let seq = parts.next().and_then(|s| s.parse().ok()).expect("sequence");
    (run, seq, parts.next() == Some("done"))
}

async fn post_in_background(api: &Api, id: &str, content: &str) -> tokio::task::JoinHandle<Value> {
    let (api, id, content) = (api.clone(), id.to_string(), content.to_string());
    tokio::spawn(async move { api.say(&id, &content).await.body })
}

#[tokio::test]
async fn a_subscriber_sees_partial_snapshots_and_then_done() {
    let server = ModelServer::start(Some(json!([slow_text(30, 40)])));
    let home = Home::with_openai(&server);
    let s = serve(&home);
    let api = Api::new(&s);
    let id = api.create_session(json!({})).await;

    let mut sse = api.stream(&id, None).await;
    assert!(
        sse.headers["content-type"]
            .to_str()
            .is_ok_and(|c| c.starts_with("text/event-stream"))
    );
    assert_eq!(sse.headers["x-accel-buffering"], "no");
    let first = sse.next(WAIT).await.expect("initial snapshot");
    assert_eq!(first.event, "snapshot");
    assert_eq!(data(&first)["data"]["status"], "idle");
    assert_eq!(first.id, "", "no run yet, no id");

    let post = post_in_background(&api, &id, "stream please").await;
    let events = sse.until_done(WAIT).await;
    let done = events.last().expect("events");
    assert_eq!(done.event, "done");
    let final_session = data(done);
    assert_eq!(final_session["data"]["status"], "completed");
    assert_eq!(last_message(&final_session)["content"], full_text(30));

    let partial: Vec<String> = events
        .iter()
        .filter(|e| e.event == "snapshot")
        .map(data)
        .filter(|v| last_message(v)["status"] == "running")
        .map(|v| {
            last_message(&v)["content"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert!(
        partial
            .iter()
            .any(|c| !c.is_empty() && c.len() < full_text(30).len()),
        "expected a snapshot with partial content, got {partial:?}"
    );
    for p in &partial {
        assert!(
            full_text(30).starts_with(p.as_str()),
            "{p:?} is not a prefix"
        );
    }
    // Ids name the run and only move forward.
    let ids: Vec<(String, i64, bool)> = events.iter().map(|e| parse_id(&e.id)).collect();
    let run_id = last_message(&final_session)["run_id"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(ids.iter().all(|(r, _, _)| *r == run_id));
    assert!(
        ids.windows(2).all(|w| (w[0].1, w[0].2) <= (w[1].1, w[1].2)),
        "{ids:?}"
    );
    assert!(ids.last().is_some_and(|(_, _, d)| *d));
    // The stream ends after done.
    assert!(sse.next(WAIT).await.is_none());
    assert_eq!(post.await.expect("join")["data"]["status"], "completed");
}

/// Whether a rendered session says a turn runs although the run its header
/// names has ended: a header read before the turn's end with runs read after it.
fn running_over_an_ended_run(session: &Value) -> bool {
    let data = &session["data"];
    let latest = &data["latest_run_id"];
    let ended = data["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| &r["id"] == latest && r["status"] != "running" && r["status"] != "queued");
    ended && (data["status"] == "running" || data["status"] == "awaiting_approval")
}

/// Quick turns end while snapshots and reads of their session are under way: no
/// `done` and no read shows a running session over an ended run (the stream ends
/// after `done`, so a wrong one would stay on the subscriber's screen).
#[tokio::test]
async fn snapshots_and_reads_during_quick_turns_agree_with_their_runs() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let s = serve(&home);
    let api = Api::new(&s);
    let id = api.create_session(json!({})).await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (api, id, stop) = (api.clone(), id.clone(), stop.clone());
            tokio::spawn(async move {
                let mut wrong = Vec::new();
                let mut reads = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let got = api
                        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
                        .await;
                    reads += 1;
                    if running_over_an_ended_run(&got.body) {
                        wrong.push(got.body);
                    }
                }
                (reads, wrong)
            })
        })
        .collect();
    for turn in 0..40 {
        let mut sse = api.stream(&id, None).await;
        sse.next(WAIT).await.expect("initial snapshot");
        let post = post_in_background(&api, &id, &format!("turn {turn}")).await;
        let events = sse.until_done(WAIT).await;
        let done = events.last().expect("events");
        assert_eq!(done.event, "done");
        let session = data(done);
        assert!(
            !running_over_an_ended_run(&session),
            "turn {turn}: {session}"
        );
        assert_eq!(session["data"]["status"], "completed", "turn {turn}");
        assert_eq!(last_message(&session)["status"], "completed");
        assert_eq!(post.await.expect("join")["data"]["status"], "completed");
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for reader in readers {
        let (reads, wrong) = reader.await.expect("join");
        assert!(reads > 0);
        assert!(
            wrong.is_empty(),
            "{} of {reads} reads: {:?}",
            wrong.len(),
            wrong.first()
        );
    }
}

#[tokio::test]
async fn reconnecting_with_last_event_id_resumes_without_duplicates() {
    let server = ModelServer::start(Some(json!([slow_text(40, 40)])));
    let home = Home::with_openai(&server);
    let s = serve(&home);
    let api = Api::new(&s);
    let id = api.create_session(json!({})).await;

    let mut first: SseReader = api.stream(&id, None).await;
    first.next(WAIT).await.expect("initial snapshot");
    let post = post_in_background(&api, &id, "resume me").await;
    let mut seen: Vec<eventsource_stream::Event> = Vec::new();
    while seen.iter().filter(|e| !e.id.is_empty()).count() < 2 {
        let e = first.next(WAIT).await.expect("event");
        assert_eq!(e.event, "snapshot", "turn ended before the disconnect");
        seen.push(e);
    }
    drop(first);
    let last_id = seen.last().map(|e| e.id.clone()).unwrap_or_default();
    let (run, last_seq, _) = parse_id(&last_id);
    let last_content = last_message(&data(seen.last().expect("seen")))["content"]
        .as_str()
        .unwrap_or("")
        .to_string();

    let mut second = api.stream(&id, Some(&last_id)).await;
    let resumed = second.until_done(WAIT).await;
    assert_eq!(resumed.last().map(|e| e.event.as_str()), Some("done"));
    let seen_ids: HashSet<&str> = seen.iter().map(|e| e.id.as_str()).collect();
    for e in &resumed {
        assert!(
            !seen_ids.contains(e.id.as_str()),
            "duplicate event id {}",
            e.id
        );
        let (r, seq, _) = parse_id(&e.id);
        assert_eq!(r, run);
        assert!(seq >= last_seq, "{seq} went back before {last_seq}");
        let content = last_message(&data(e))["content"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert!(
            content.starts_with(&last_content),
            "gap: {content:?} vs {last_content:?}"
        );
    }
    let done = data(resumed.last().expect("done"));
    assert_eq!(last_message(&done)["content"], full_text(40));
    assert_eq!(post.await.expect("join")["data"]["status"], "completed");

    // Reconnecting with the done id sends nothing again: the turn was seen whole.
    let done_id = resumed.last().map(|e| e.id.clone()).unwrap_or_default();
    let mut third = api.stream(&id, Some(&done_id)).await;
    assert!(third.quiet_for(Duration::from_millis(600)).await);
    // A client that missed the end (cursor mid-run) gets the done at once.
    let mut fourth = api.stream(&id, Some(&last_id)).await;
    let e = fourth.next(WAIT).await.expect("catch-up");
    assert_eq!(e.event, "done");
    assert_eq!(e.id, done_id);
    // after_sequence is the same cursor for the latest run.
    let r = api
        .http
        .get(api.url(&format!(
            "/hecate/v1/agent-chat/sessions/{id}/stream?after_sequence={last_seq}"
        )))
        .send()
        .await
        .expect("stream");
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn clients_that_disconnect_do_not_disturb_the_turn() {
    let server = ModelServer::start(Some(json!([slow_text(30, 30), {"text": "second turn"}])));
    let home = Home::with_openai(&server);
    let s = serve(&home);
    let api = Api::new(&s);
    let id = api.create_session(json!({})).await;

    let mut sse = api.stream(&id, None).await;
    sse.next(WAIT).await.expect("initial snapshot");
    // The POST's client gives up early; the turn keeps running in the engine.
    let impatient = {
        let (api, id) = (api.clone(), id.clone());
        tokio::spawn(async move {
            tokio::time::timeout(Duration::from_millis(300), api.say(&id, "go")).await
        })
    };
    let e = sse.next(WAIT).await.expect("a snapshot");
    assert_eq!(e.event, "snapshot");
    drop(sse);
    assert!(
        impatient.await.expect("join").is_err(),
        "the POST was cut short"
    );

    let mut done = None;
    for _ in 0..1500 {
        let a = api
            .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
            .await;
        if a.body["data"]["status"] == "completed" {
            done = Some(a.body);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let done = done.expect("the turn completed");
    assert_eq!(last_message(&done)["content"], full_text(30));
    // The server notices the dropped stream on its next write at the latest.
    let mut subscribers = Value::Null;
    for _ in 0..200 {
        let stats = api.get("/hecate/v1/system/stats").await;
        subscribers = stats.body["data"]["sse_subscribers"].clone();
        if subscribers == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(subscribers, 0);
    // The session is usable right away.
    let a = api.say(&id, "again").await;
    assert_eq!(last_message(&a.body)["content"], "second turn");
}

#[tokio::test]
async fn streaming_an_unknown_session_is_a_404_envelope() {
    let home = Home::empty();
    let s = serve(&home);
    let api = Api::new(&s);
    let a = api
        .get("/hecate/v1/agent-chat/sessions/agent_chat_nope/stream")
        .await;
    assert_eq!(a.status, 404);
    assert_eq!(a.error_type(), "not_found");
}

#[tokio::test]
async fn the_server_stops_on_sigterm_while_streams_are_open() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let mut s = serve(&home);
    let api = Api::new(&s);
    let id = api.create_session(json!({})).await;
    let mut open = Vec::new();
    for _ in 0..3 {
        let mut sse = api.stream(&id, None).await;
        sse.next(WAIT).await.expect("initial snapshot");
        open.push(sse);
    }
    s.sigterm();
    for sse in &mut open {
        assert!(
            sse.next(WAIT).await.is_none(),
            "the stream ends on shutdown"
        );
    }
    for _ in 0..200 {
        if let Some(st) = s.child.try_wait().expect("try_wait") {
            assert!(st.success(), "graceful exit, got {st:?}");
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("serve did not stop on SIGTERM with open streams");
}

/// Hecate's own agent streams what its model says as it says it, on both
/// provider wires: the words before a tool call, then the final answer word by
/// word, each a snapshot while the turn runs; the stored answer is exactly
/// what streamed.
#[tokio::test]
async fn an_agent_turn_streams_its_words_as_the_model_says_them() {
    for wire in WIRES {
        let answer = full_text(30);
        let server = ModelServer::start(Some(json!([
            {"text": "Looking first.", "tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
            slow_text(30, 30),
        ])));
        let home = agent_home(&server, wire, "");
        let s = serve(&home);
        let api = Api::new(&s);
        let (_dir, ws) = workspace();
        let id = api
            .create_session(json!({"runtime_kind": "agent", "model": wire.2, "workspace": ws}))
            .await;
        let mut sse = api.stream(&id, None).await;
        sse.next(WAIT).await.expect("initial snapshot");
        let post = post_in_background(&api, &id, "look around").await;
        let events = sse.until_done(WAIT).await;
        let done = data(events.last().expect("events"));
        assert_eq!(done["data"]["status"], "completed", "{}: {done}", wire.0);
        let said = format!("Looking first.\n{answer}");
        assert_eq!(last_message(&done)["content"], said, "{}", wire.0);

        let running: Vec<String> = events
            .iter()
            .filter(|e| e.event == "snapshot")
            .map(data)
            .filter(|v| last_message(v)["status"] == "running")
            .filter_map(|v| last_message(&v)["content"].as_str().map(String::from))
            .collect();
        assert!(
            running.iter().all(|c| said.starts_with(c.as_str())),
            "{}: every snapshot is a prefix of what was said: {running:?}",
            wire.0
        );
        // The running answer names its task run before the run ends.
        let task_run = last_message(&done)["task_run_id"].clone();
        assert!(task_run.is_string(), "{}: {done}", wire.0);
        let linked = events
            .iter()
            .filter(|e| e.event == "snapshot")
            .map(data)
            .filter(|v| last_message(v)["status"] == "running")
            .filter(|v| last_message(v)["content"] != "")
            .map(|v| last_message(&v)["task_run_id"].clone())
            .collect::<Vec<_>>();
        assert!(
            !linked.is_empty() && linked.iter().all(|t| *t == task_run),
            "{}: words shown without their task run {task_run}: {linked:?}",
            wire.0
        );
        let mid_answer = running
            .iter()
            .filter(|c| c.len() > "Looking first.\n".len() && c.len() < said.len())
            .count();
        assert!(
            mid_answer > 0,
            "{}: the answer showed word by word, not at the end: {running:?}",
            wire.0
        );
        assert_eq!(post.await.expect("join")["data"]["status"], "completed");
    }
}
