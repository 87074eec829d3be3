//! The floor of the `turns` benchmark: the least a durable model turn over HTTP
//! can cost, served alone by a minimal server on its own two-thread runtime.
//! Per turn it parses the JSON body, stores the prompt and an open run in one
//! SQLite transaction (WAL, `synchronous=NORMAL`, as Hecate's store), streams
//! the same Chat Completions request from the same fixture and gathers the
//! answer's text from its SSE events, stores the answer and closes the run in a
//! second transaction, and answers the two messages as JSON. No sessions, no
//! routing, no events, no traces, no followers: what is left is what any design
//! that keeps the prompt before the model sees it and the answer before the
//! client does must pay. The benchmark drives it exactly as it drives Hecate.

use anyhow::Context;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use eventsource_stream::Eventsource;
use futures::StreamExt;
use hecate::runtimes::model::DEFAULT_MAX_TOKENS;
use rusqlite::{Connection, params};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// What every request of the floor server shares.
struct Floor {
    db: Mutex<Connection>,
    http: reqwest::Client,
    chat_url: String,
    model: String,
}

/// A running floor server: its base URL; dropping it stops the server.
pub struct FloorServer {
    /// Base URL, e.g. `http://127.0.0.1:PORT`.
    pub base: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for FloorServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Opens the floor's SQLite file with Hecate's settings and its two tables.
fn open_db(file: &Path) -> anyhow::Result<Connection> {
    let conn = Connection::open(file)?;
    let _: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, session TEXT NOT NULL,
             status TEXT NOT NULL, started_at INTEGER NOT NULL, ended_at INTEGER);
         CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, session TEXT NOT NULL,
             run INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL);
         CREATE INDEX IF NOT EXISTS messages_by_session ON messages(session, id);",
    )?;
    Ok(conn)
}

/// Starts the floor server on a loopback port, on a runtime of two worker
/// threads (the cores `hecate serve` gets), storing into `file` and asking the
/// fixture at `fixture_v1` for `model`.
pub fn start(file: &Path, fixture_v1: &str, model: &str) -> anyhow::Result<FloorServer> {
    let floor = Arc::new(Floor {
        db: Mutex::new(open_db(file)?),
        http: reqwest::Client::builder().tcp_nodelay(true).build()?,
        chat_url: format!("{fixture_v1}/chat/completions"),
        model: model.to_string(),
    });
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let base = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let thread = std::thread::Builder::new()
        .name("turn-floor".into())
        .spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let app = Router::new()
                    .route("/turn/{session}", post(turn))
                    .with_state(floor);
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stopped.await;
                    })
                    .await;
            });
        })?;
    Ok(FloorServer {
        base,
        stop: Some(stop),
        thread: Some(thread),
    })
}

/// `POST /turn/{session}` with `{"content": …}`: one durable model turn.
async fn turn(
    State(floor): State<Arc<Floor>>,
    UrlPath(session): UrlPath<String>,
    Json(body): Json<Value>,
) -> Result<Json<Value>, (StatusCode, String)> {
    answer(&floor, &session, &body)
        .await
        .map(Json)
        .map_err(|e| (StatusCode::BAD_GATEWAY, format!("{e:#}")))
}

/// The turn: prompt and run stored, the model streamed, answer and run end stored.
async fn answer(floor: &Arc<Floor>, session: &str, body: &Value) -> anyhow::Result<Value> {
    let content = body["content"].as_str().context("no content")?.to_string();
    // The writes are short enough to make in place: no hand-off to another
    // thread, the cheapest a design can be.
    let (run, user_id) = begin(floor, session, &content)?;
    let resp = floor
        .http
        .post(&floor.chat_url)
        .json(&json!({
            "model": floor.model,
            "messages": [{"role": "user", "content": content}],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": DEFAULT_MAX_TOKENS,
        }))
        .send()
        .await?
        .error_for_status()?;
    let mut events = resp.bytes_stream().eventsource();
    let mut text = String::new();
    while let Some(event) = events.next().await {
        let event = event.context("reading the model's stream")?;
        if event.data == "[DONE]" {
            break;
        }
        let chunk: Value = serde_json::from_str(&event.data)?;
        if let Some(piece) = chunk["choices"][0]["delta"]["content"].as_str() {
            text.push_str(piece);
        }
    }
    let answer_id = finish(floor, session, run, &text)?;
    Ok(json!({
        "session": session,
        "run": run,
        "messages": [
            {"id": user_id, "role": "user", "content": content},
            {"id": answer_id, "role": "assistant", "content": text},
        ],
    }))
}

/// Milliseconds since the Unix epoch.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The first transaction: an open run and the prompt.
fn begin(floor: &Floor, session: &str, content: &str) -> anyhow::Result<(i64, i64)> {
    let mut db = floor.db.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
    let tx = db.transaction()?;
    tx.prepare_cached("INSERT INTO runs (session, status, started_at) VALUES (?1, 'running', ?2)")?
        .execute(params![session, now_ms()])?;
    let run = tx.last_insert_rowid();
    tx.prepare_cached(
        "INSERT INTO messages (session, run, role, content) VALUES (?1, ?2, 'user', ?3)",
    )?
    .execute(params![session, run, content])?;
    let user = tx.last_insert_rowid();
    tx.commit()?;
    Ok((run, user))
}

/// The second transaction: the answer, and the run closed.
fn finish(floor: &Floor, session: &str, run: i64, text: &str) -> anyhow::Result<i64> {
    let mut db = floor.db.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
    let tx = db.transaction()?;
    tx.prepare_cached(
        "INSERT INTO messages (session, run, role, content) VALUES (?1, ?2, 'assistant', ?3)",
    )?
    .execute(params![session, run, text])?;
    let answer = tx.last_insert_rowid();
    tx.prepare_cached("UPDATE runs SET status = 'completed', ended_at = ?2 WHERE id = ?1")?
        .execute(params![run, now_ms()])?;
    tx.commit()?;
    Ok(answer)
}
