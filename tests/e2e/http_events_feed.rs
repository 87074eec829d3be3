//! `GET /hecate/v1/events/stream`, the process-wide task event feed, over the
//! real `hecate serve`: events appear live as they are stored, filtered by type
//! and task; a reconnect with `Last-Event-ID` resumes after that event with
//! nothing lost or repeated; a reader that stops reading while thousands of
//! events are stored gets every one of them, in order, when it reads again (the
//! feed pages from the store behind the reader's cursor, so nothing queues up
//! for it in memory); bad cursors and tails are 400s naming the field.

use crate::support::common::Home;
use crate::support::http::{Api, serve};
use eventsource_stream::{Event, Eventsource};
use futures::{Stream, StreamExt};
use serde_json::{Value, json};
use std::pin::Pin;
use std::time::Duration;

type Frames = Pin<Box<dyn Stream<Item = Event> + Send>>;

/// A home whose shell commands run without an approval.
fn ungated() -> Home {
    let mut home = Home::empty();
    home.set("HECATE_TASK_APPROVAL_POLICIES", "");
    home
}

/// A finished shell task and its run.
async fn finished_task(api: &Api) -> (String, String) {
    let a = api
        .post(
            "/hecate/v1/tasks",
            json!({"execution_kind": "shell", "shell_command": "true"}),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.body);
    let task = a.body["data"]["id"].as_str().expect("id").to_string();
    let r = api
        .post(&format!("/hecate/v1/tasks/{task}/start"), json!({}))
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let run = r.body["data"]["id"].as_str().expect("run").to_string();
    for _ in 0..600 {
        let s = api
            .get(&format!("/hecate/v1/tasks/{task}/runs/{run}"))
            .await;
        if s.body["data"]["status"] == "completed" {
            return (task, run);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("run {run} never completed");
}

/// Appends `events` to a run's log.
async fn append(api: &Api, task: &str, run: &str, events: Value) {
    let a = api
        .post(
            &format!("/hecate/v1/tasks/{task}/runs/{run}/events"),
            json!({"events": events}),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.body);
}

/// Opens the feed at `query`, resuming after `last_event_id` when given.
async fn open(api: &Api, query: &str, last_event_id: Option<&str>) -> Frames {
    let mut rb = api.request(
        reqwest::Method::GET,
        &format!("/hecate/v1/events/stream{query}"),
    );
    if let Some(id) = last_event_id {
        rb = rb.header("last-event-id", id);
    }
    let r = rb.send().await.expect("stream");
    assert_eq!(r.status(), 200);
    Box::pin(
        r.bytes_stream()
            .eventsource()
            .map(|f| f.expect("an SSE frame")),
    )
}

/// The next frame (a hang guard, not a timing assertion).
async fn next(frames: &mut Frames) -> Event {
    tokio::time::timeout(Duration::from_secs(30), frames.next())
        .await
        .expect("a frame within 30 s")
        .expect("the stream is open")
}

#[tokio::test]
async fn the_feed_follows_live_filters_and_resumes_after_last_event_id() {
    let home = ungated();
    let s = serve(&home);
    let api = Api::new(&s);
    let (a_task, a_run) = finished_task(&api).await;
    let (b_task, b_run) = finished_task(&api).await;

    // Live, filtered by type: only `ci.note` frames, as they are stored.
    let mut notes = open(&api, "?event_type=ci.note&tail=1", None).await;
    let mut of_b = open(
        &api,
        &format!("?task_id={b_task}&event_type=ci.note,ci.other"),
        None,
    )
    .await;
    append(
        &api,
        &a_task,
        &a_run,
        json!([{"type": "ci.other"}, {"type": "ci.note", "data": {"n": 1}}]),
    )
    .await;
    append(
        &api,
        &b_task,
        &b_run,
        json!([{"type": "ci.note", "data": {"n": 2}}]),
    )
    .await;
    let first = next(&mut notes).await;
    assert_eq!(first.event, "ci.note");
    let first_data: Value = serde_json::from_str(&first.data).expect("JSON");
    assert_eq!(first_data["data"]["n"], 1, "{first_data}");
    assert_eq!(first_data["task_id"], a_task.as_str());
    let second = next(&mut notes).await;
    let second_data: Value = serde_json::from_str(&second.data).expect("JSON");
    assert_eq!(second_data["data"]["n"], 2);
    assert!(
        second.id.parse::<i64>().expect("seq") > first.id.parse::<i64>().expect("seq"),
        "ids are the feed's sequence"
    );
    // Filtered by task: only B's events.
    let b_first = next(&mut of_b).await;
    let b_data: Value = serde_json::from_str(&b_first.data).expect("JSON");
    assert_eq!(
        (b_first.event.as_str(), &b_data["task_id"]),
        ("ci.note", &json!(b_task))
    );

    // A reconnect resumes after the last event it saw: the rest, once each.
    drop(notes);
    append(
        &api,
        &a_task,
        &a_run,
        json!([{"type": "ci.note", "data": {"n": 3}}, {"type": "ci.note", "data": {"n": 4}}]),
    )
    .await;
    let mut resumed = open(&api, "?event_type=ci.note", Some(&second.id)).await;
    for n in [3, 4] {
        let f = next(&mut resumed).await;
        let d: Value = serde_json::from_str(&f.data).expect("JSON");
        assert_eq!(d["data"]["n"], n, "{d}");
    }
    // `Last-Event-ID` wins over `tail`.
    let mut both = open(&api, "?event_type=ci.note&tail=500", Some(&first.id)).await;
    let f = next(&mut both).await;
    let d: Value = serde_json::from_str(&f.data).expect("JSON");
    assert_eq!(d["data"]["n"], 2, "after the cursor, not the newest 500");

    // Bad cursors and tails are refused, naming the field.
    let bad = api
        .send(
            api.request(reqwest::Method::GET, "/hecate/v1/events/stream")
                .header("last-event-id", "yesterday"),
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(bad.body["error"]["field"], "Last-Event-ID", "{}", bad.body);
    let bad = api.get("/hecate/v1/events/stream?tail=501").await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(bad.body["error"]["field"], "tail", "{}", bad.body);
}

#[tokio::test]
async fn a_reader_that_stops_reading_gets_every_event_in_order_when_it_reads_again() {
    let home = ungated();
    let s = serve(&home);
    let api = Api::new(&s);
    let (task, run) = finished_task(&api).await;
    let mut slow = open(&api, "?event_type=bulk.item", None).await;
    append(
        &api,
        &task,
        &run,
        json!([{"type": "bulk.item", "data": {"i": 0}}]),
    )
    .await;
    let f = next(&mut slow).await;
    assert_eq!(f.event, "bulk.item");
    // 4,000 more stored while the reader reads nothing.
    const TOTAL: usize = 4000;
    for batch in 0..TOTAL / 100 {
        let events: Vec<Value> = (0..100)
            .map(|k| json!({"type": "bulk.item", "data": {"i": 1 + batch * 100 + k}}))
            .collect();
        append(&api, &task, &run, Value::Array(events)).await;
    }
    let mut last_seq = f.id.parse::<i64>().expect("seq");
    for i in 1..=TOTAL {
        let f = next(&mut slow).await;
        let d: Value = serde_json::from_str(&f.data).expect("JSON");
        assert_eq!(d["data"]["i"], i, "in order, none lost");
        let seq = f.id.parse::<i64>().expect("seq");
        assert!(seq > last_seq, "none repeated");
        last_seq = seq;
    }
}
