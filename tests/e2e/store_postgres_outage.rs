//! A PostgreSQL server that goes away in the middle of a turn of `hecate serve`
//! and comes back: what the turn wrote while it was away reaches the store once
//! it is back, an answer finished during the outage is stored when the server
//! returns within the retry window, and a longer outage fails the turn with
//! `store_error`, never answering that something was saved when it was not.

use crate::support::common::{Home, ModelServer};
use crate::support::http::{Api, last_message, serve_args, slow_text};
use crate::support::postgres::{self, PgServer};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A `hecate serve` on a private cluster of its own (so the test may stop it),
/// with the fixture model streaming `words` words `delay_ms` apart.
struct Outage {
    pg: Arc<PgServer>,
    db: String,
    model: ModelServer,
    api: Api,
    _served: crate::support::http::Served,
}

async fn outage_setup(words: usize, delay_ms: u64, lease_seconds: &str) -> Outage {
    let (pg, db) = tokio::task::spawn_blocking(|| {
        let pg = postgres::private();
        let db = pg.create_database();
        (pg, db)
    })
    .await
    .expect("cluster");
    let model = ModelServer::start(Some(json!([slow_text(words, delay_ms)])));
    let mut home = Home::with_openai(&model);
    home.set("HECATE_SESSION_LEASE_SECONDS", lease_seconds);
    let url = pg.url(&db);
    let served = serve_args(
        &home,
        &["serve", "--listen", "127.0.0.1:0", "--store", &url],
    );
    let api = Api::new(&served);
    Outage {
        pg: Arc::new(pg),
        db,
        model,
        api,
        _served: served,
    }
}

impl Outage {
    /// Waits until the model was asked (the turn is streaming).
    async fn until_the_model_was_asked(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.model.requests().is_empty() {
            assert!(
                Instant::now() < deadline,
                "the turn never reached the model"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn stop(&self) {
        let pg = self.pg.clone();
        tokio::task::spawn_blocking(move || pg.stop())
            .await
            .expect("stop");
    }

    async fn start_again(&self) {
        let pg = self.pg.clone();
        tokio::task::spawn_blocking(move || pg.start_again())
            .await
            .expect("start");
    }

    /// Runs `sql` in the test's database and answers its one value.
    async fn sql(&self, sql: &str) -> String {
        let (pg, db, sql) = (self.pg.clone(), self.db.clone(), sql.to_string());
        tokio::task::spawn_blocking(move || pg.psql(&db, &sql))
            .await
            .expect("psql")
    }

    /// The session as stored, read over HTTP.
    async fn session(&self, id: &str) -> Value {
        let got = self
            .api
            .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
            .await;
        assert_eq!(got.status, 200, "{}", got.body);
        got.body["data"].clone()
    }
}

fn full_text(words: usize) -> String {
    (0..words)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test]
async fn a_server_gone_for_a_moment_mid_turn_loses_none_of_the_turn() {
    // 30 words 100 ms apart: the turn streams for three seconds, and the
    // server is away for about one of them.
    let o = outage_setup(30, 100, "30").await;
    let id = o.api.create_session(json!({"title": "outage"})).await;
    let (api, sid) = (o.api.clone(), id.clone());
    let turn = tokio::spawn(async move { api.say(&sid, "talk through it").await });
    o.until_the_model_was_asked().await;
    o.stop().await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    o.start_again().await;

    let answer = turn.await.expect("join");
    assert_eq!(answer.status, 200, "{}", answer.body);
    let last = last_message(&answer.body);
    assert_eq!(last["content"], full_text(30));
    assert_eq!(last["status"], "completed");
    assert_eq!(
        answer.body["data"]["status"], "completed",
        "{}",
        answer.body
    );

    // Every streamed event reached the store, numbered without a gap.
    let stored = o.session(&id).await;
    let run_id = last["run_id"].as_str().expect("run id").to_string();
    let sequences = o
        .sql(&format!(
            "SELECT string_agg(sequence::text, ',' ORDER BY sequence) FROM run_events \
             WHERE run_id = '{run_id}'"
        ))
        .await;
    let sequences: Vec<i64> = sequences
        .split(',')
        .map(|s| s.parse().expect("sequence"))
        .collect();
    assert_eq!(
        sequences,
        (1..=sequences.len() as i64).collect::<Vec<_>>(),
        "the events written during the outage were retried, not dropped"
    );
    // The stored deltas hold every word once, in order (words that queued up
    // behind a flush waiting for the server are merged into one delta).
    let streamed = o
        .sql(&format!(
            "SELECT string_agg(data_json::jsonb->>'text', '' ORDER BY sequence) FROM run_events \
             WHERE run_id = '{run_id}' AND type = 'text_delta'"
        ))
        .await;
    assert_eq!(streamed, full_text(30), "every streamed word stored once");
    assert_eq!(stored["messages"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn an_answer_finished_while_the_server_is_away_is_stored_when_it_returns() {
    // The answer ends about a second in; the server is away from the first
    // word until two seconds after that, inside the default retry window.
    let o = outage_setup(10, 100, "30").await;
    let id = o.api.create_session(json!({"title": "outage"})).await;
    let (api, sid) = (o.api.clone(), id.clone());
    let turn = tokio::spawn(async move { api.say(&sid, "finish without me").await });
    o.until_the_model_was_asked().await;
    o.stop().await;
    // The model has long finished when the server comes back.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        !turn.is_finished(),
        "the turn waits for the store instead of answering"
    );
    o.start_again().await;

    let answer = turn.await.expect("join");
    assert_eq!(answer.status, 200, "{}", answer.body);
    let last = last_message(&answer.body);
    assert_eq!(last["content"], full_text(10));
    assert_eq!(last["status"], "completed");
    assert_eq!(answer.body["data"]["status"], "completed");
    let runs: i64 = o
        .sql("SELECT COUNT(*) FROM runs WHERE status = 'completed'")
        .await
        .parse()
        .expect("count");
    assert_eq!(runs, 1);
    let answers: i64 = o
        .sql("SELECT COUNT(*) FROM messages WHERE role = 'assistant'")
        .await
        .parse()
        .expect("count");
    assert_eq!(answers, 1, "stored once, not once per retry");
}

#[tokio::test]
async fn a_server_away_longer_than_the_retry_window_fails_the_turn_with_store_error() {
    // A 2 s lease retries the end for 1 s; the server stays away for 4.
    let o = outage_setup(5, 50, "2").await;
    let id = o.api.create_session(json!({"title": "outage"})).await;
    let (api, sid) = (o.api.clone(), id.clone());
    let turn = tokio::spawn(async move { api.say(&sid, "too long").await });
    o.until_the_model_was_asked().await;
    o.stop().await;
    let answer = turn.await.expect("join");
    assert_eq!(answer.status, 500, "{}", answer.body);
    assert_eq!(answer.error_type(), "store_error", "{}", answer.body);
    o.start_again().await;

    // The prompt was durable before the model saw it, and no answer claims to be
    // saved: the run stays open until the sweep closes it once the 2 s lease
    // has expired, as for a replica that died.
    let deadline = Instant::now() + Duration::from_secs(30);
    let data = loop {
        let data = o.session(&id).await;
        if data["runs"][0]["status"] == "failed" {
            break data;
        }
        assert!(
            Instant::now() < deadline,
            "the open run was never closed: {data}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(data["runs"][0]["error_type"], "interrupted", "{data}");
    let messages = data["messages"].as_array().expect("messages");
    assert_eq!(messages[0]["content"], "too long");
    assert!(
        messages
            .iter()
            .filter(|m| m["role"] == "assistant")
            .all(|m| m["status"] == "failed"),
        "{messages:?}"
    );
    assert_eq!(data["runs"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn a_replica_on_another_host_that_dies_mid_turn_is_taken_over_once_its_lease_expires() {
    // Two replicas with a 2 s session lease. Replica one streams a slow turn and
    // is killed with SIGKILL; its owner id is then rewritten to another host's, so
    // only the lease (not a pid check on this machine) can say it is gone.
    let (pg, db) = tokio::task::spawn_blocking(|| {
        let pg = postgres::shared();
        let db = pg.create_database();
        (pg, db)
    })
    .await
    .expect("cluster");
    let model = ModelServer::start(Some(json!([
        {"match": {"contains": "slow"}, "chunks": ["one ", "two ", "three ", "four "], "chunk_delay_ms": 1500},
        {"repeat": true, "text": "taken over"}
    ])));
    let mut home = Home::with_openai(&model);
    home.set("HECATE_SESSION_LEASE_SECONDS", "2");
    let url = pg.url(&db);
    let args = ["serve", "--listen", "127.0.0.1:0", "--store", &url];
    let mut one = serve_args(&home, &args);
    let two = serve_args(&home, &args);
    let (api_one, api_two) = (Api::new(&one), Api::new(&two));
    let id = api_one.create_session(json!({"title": "handover"})).await;
    let (api, sid) = (api_one.clone(), id.clone());
    let _turn = tokio::spawn(async move { api.say(&sid, "slow please").await });
    // Wait until the first words are stored, then kill the replica.
    let deadline = Instant::now() + Duration::from_secs(30);
    let psql = |sql: String| {
        let db = db.clone();
        async move {
            tokio::task::spawn_blocking(move || postgres::shared().psql(&db, &sql))
                .await
                .expect("psql")
        }
    };
    loop {
        let n: i64 = psql(format!(
            "SELECT COUNT(*) FROM run_events e JOIN runs r ON r.id = e.run_id \
             WHERE r.session_id = '{id}' AND e.type = 'text_delta'"
        ))
        .await
        .parse()
        .unwrap_or(0);
        if n > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the turn never streamed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    one.child.kill().expect("SIGKILL");
    one.child.wait().expect("reaped");
    psql(format!(
        "UPDATE sessions SET owner_id = 'another-host:4242:abcdef12' WHERE id = '{id}'"
    ))
    .await;

    // Replica two's sweep closes the turn once the lease has expired: the run
    // ends interrupted and the words the user saw stay as a failed answer.
    let deadline = Instant::now() + Duration::from_secs(30);
    let data = loop {
        let got = api_two
            .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
            .await;
        assert_eq!(got.status, 200, "{}", got.body);
        let data = got.body["data"].clone();
        if data["runs"][0]["status"] == "failed" {
            break data;
        }
        assert!(
            Instant::now() < deadline,
            "the dead replica's turn was never closed: {data}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(data["runs"][0]["error_type"], "interrupted", "{data}");
    let partial = data["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(partial["role"], "assistant");
    assert_eq!(partial["content"], "one ");
    assert_eq!(partial["status"], "failed");

    // And the session goes on there.
    let next = api_two.say(&id, "carry on").await;
    assert_eq!(next.status, 200, "{}", next.body);
    assert_eq!(last_message(&next.body)["content"], "taken over");
}
