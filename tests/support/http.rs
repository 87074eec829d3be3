//! Shared helpers for the HTTP end-to-end tests: the real `hecate serve` on an
//! ephemeral loopback port, a JSON client, and an SSE reader.

use super::common::{Home, ModelServer};
use eventsource_stream::{Event, Eventsource};
use futures::{Stream, StreamExt};
use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader};
use std::pin::Pin;
use std::process::{Child, Stdio};
use std::time::Duration;

/// A running `hecate serve`, killed on drop.
pub struct Served {
    /// The process.
    pub child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// Sends SIGTERM (and returns at once).
    pub fn sigterm(&self) {
        // SAFETY: kill with a valid pid and signal has no memory effects.
        let rc = unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        assert_eq!(rc, 0, "SIGTERM");
    }

    /// Sends SIGTERM and waits (at most ten seconds) for the graceful exit;
    /// answers the exit status, or none when it did not stop.
    pub fn stop_gracefully(&mut self) -> Option<std::process::ExitStatus> {
        self.sigterm();
        for _ in 0..200 {
            if let Some(st) = self.child.try_wait().expect("wait") {
                return Some(st);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        None
    }
}

/// Starts `hecate serve --listen 127.0.0.1:0` in `home` and waits for its address.
pub fn serve(home: &Home) -> Served {
    serve_args(home, &["serve", "--listen", "127.0.0.1:0"])
}

/// Serves a home with the OpenAI-compatible provider `fix` on `server`
/// ([`Home::with_openai`]); answers the home, the server and a client of it.
pub fn serve_openai(server: &ModelServer) -> (Home, Served, Api) {
    let home = Home::with_openai(server);
    let served = serve(&home);
    let api = Api::new(&served);
    (home, served, api)
}

/// Starts `hecate` with `args` (a serve command) and waits for `listening on`.
pub fn serve_args(home: &Home, args: &[&str]) -> Served {
    serve_command(home.cmd(args))
}

/// Spawns `cmd` (a `hecate serve` command, environment set) and waits for
/// `listening on`.
pub fn serve_command(mut cmd: std::process::Command) -> Served {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let mut reader = BufReader::new(child.stderr.take().expect("stderr"));
    let mut base = None;
    let mut seen = String::new();
    for _ in 0..50 {
        let mut line = String::new();
        if reader.read_line(&mut line).expect("read stderr") == 0 {
            break;
        }
        seen.push_str(&line);
        if let Some(rest) = line.trim().split("listening on ").nth(1) {
            base = Some(rest.to_string());
            break;
        }
    }
    std::thread::spawn(move || for _ in reader.lines() {});
    Served {
        child,
        base: base.unwrap_or_else(|| panic!("serve did not announce its address:\n{seen}")),
    }
}

/// A reqwest client (installs the ring TLS provider first).
pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("client")
}

/// A JSON client for one server, optionally sending a bearer token.
#[derive(Clone)]
pub struct Api {
    /// Server base URL.
    pub base: String,
    /// The HTTP client.
    pub http: reqwest::Client,
    /// Token sent as `Authorization: Bearer`.
    pub token: Option<String>,
}

/// A response's status, headers and JSON body (`Null` when not JSON).
pub struct Answer {
    /// Status code.
    pub status: u16,
    /// Headers.
    pub headers: reqwest::header::HeaderMap,
    /// Body as JSON.
    pub body: Value,
}

impl Answer {
    /// The error envelope's `type`.
    pub fn error_type(&self) -> &str {
        self.body["error"]["type"].as_str().unwrap_or("")
    }

    /// A header as a string.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

impl Api {
    /// A client for `served`.
    pub fn new(served: &Served) -> Self {
        Self {
            base: served.base.clone(),
            http: client(),
            token: None,
        }
    }

    /// The same client sending `token`.
    pub fn with_token(mut self, token: &str) -> Self {
        self.token = Some(token.to_string());
        self
    }

    /// Absolute URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A request builder with the token applied.
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let rb = self.http.request(method, self.url(path));
        match &self.token {
            Some(t) => rb.bearer_auth(t),
            None => rb,
        }
    }

    /// Sends and reads the answer.
    pub async fn send(&self, rb: reqwest::RequestBuilder) -> Answer {
        let r = rb.send().await.expect("request");
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let bytes = r.bytes().await.expect("body");
        Answer {
            status,
            headers,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Answer {
        self.send(self.request(reqwest::Method::GET, path)).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, body: Value) -> Answer {
        self.send(self.request(reqwest::Method::POST, path).json(&body))
            .await
    }

    /// `DELETE path`.
    pub async fn delete(&self, path: &str) -> Answer {
        self.send(self.request(reqwest::Method::DELETE, path)).await
    }

    /// `POST /hecate/v1/agent-chat/sessions` with `body`.
    pub async fn post_session(&self, body: Value) -> Answer {
        self.post("/hecate/v1/agent-chat/sessions", body).await
    }

    /// `POST /hecate/v1/agent-chat/sessions/{id}/{action}` (`cancel`, `close`,
    /// ...) with an empty body.
    pub async fn session_action(&self, id: &str, action: &str) -> Answer {
        self.post(
            &format!("/hecate/v1/agent-chat/sessions/{id}/{action}"),
            json!({}),
        )
        .await
    }

    /// Creates a model session on the fixture provider and returns its id.
    pub async fn create_session(&self, extra: Value) -> String {
        let mut body = json!({"model": "fix/fixture-model"});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                b.insert(k.clone(), v.clone());
            }
        }
        let a = self.post_session(body).await;
        assert_eq!(a.status, 200, "create failed: {}", a.body);
        a.body["data"]["id"].as_str().expect("id").to_string()
    }

    /// Sends a prompt and returns the answer (after the turn ended).
    pub async fn say(&self, id: &str, content: &str) -> Answer {
        self.post(
            &format!("/hecate/v1/agent-chat/sessions/{id}/messages"),
            json!({ "content": content }),
        )
        .await
    }

    /// Posts `body` to `path` with `headers` and reads its whole answer, which
    /// must be a 200 event stream: `(event name, data)` of every event.
    pub async fn post_sse(
        &self,
        path: &str,
        headers: &[(&str, &str)],
        body: &Value,
    ) -> Vec<(String, String)> {
        let mut rb = self.request(reqwest::Method::POST, path).json(body);
        for (name, value) in headers {
            rb = rb.header(*name, *value);
        }
        let r = rb.send().await.expect("stream request");
        assert_eq!(r.status(), 200);
        assert_eq!(
            r.headers()["content-type"].to_str().ok(),
            Some("text/event-stream")
        );
        let mut events = r.bytes_stream().eventsource();
        let mut out = Vec::new();
        while let Some(e) = events.next().await {
            let e = e.expect("event");
            out.push((e.event, e.data));
        }
        out
    }

    /// Opens the session's SSE stream, optionally resuming after `last_event_id`.
    pub async fn stream(&self, id: &str, last_event_id: Option<&str>) -> SseReader {
        let mut rb = self.request(
            reqwest::Method::GET,
            &format!("/hecate/v1/agent-chat/sessions/{id}/stream"),
        );
        if let Some(l) = last_event_id {
            rb = rb.header("last-event-id", l);
        }
        let r = rb.send().await.expect("stream request");
        assert_eq!(r.status(), 200, "stream status");
        SseReader {
            headers: r.headers().clone(),
            events: Box::pin(r.bytes_stream().eventsource()),
        }
    }
}

type EventStream = Pin<
    Box<
        dyn Stream<Item = Result<Event, eventsource_stream::EventStreamError<reqwest::Error>>>
            + Send,
    >,
>;

/// An open SSE stream.
pub struct SseReader {
    /// Response headers.
    pub headers: reqwest::header::HeaderMap,
    events: EventStream,
}

impl SseReader {
    /// The next event within `wait`, or `None` when the stream ended.
    pub async fn next(&mut self, wait: Duration) -> Option<Event> {
        match tokio::time::timeout(wait, self.events.next()).await {
            Ok(Some(Ok(e))) => Some(e),
            Ok(Some(Err(e))) => panic!("SSE error: {e}"),
            Ok(None) => None,
            Err(_) => panic!("no SSE event within {wait:?}"),
        }
    }

    /// Whether nothing arrives within `wait` (the stream stays open and quiet).
    pub async fn quiet_for(&mut self, wait: Duration) -> bool {
        tokio::time::timeout(wait, self.events.next())
            .await
            .is_err()
    }

    /// Reads events until `done` (inclusive) or the end; panics after `wait`.
    pub async fn until_done(&mut self, wait: Duration) -> Vec<Event> {
        let mut out = Vec::new();
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next(left).await {
                Some(e) => {
                    let done = e.event == "done";
                    out.push(e);
                    if done {
                        return out;
                    }
                }
                None => return out,
            }
        }
    }
}

/// The JSON data of an event.
pub fn data(e: &Event) -> Value {
    serde_json::from_str(&e.data).expect("event data is JSON")
}

/// Polls the gateway chat session `id` until it exists (at most 20 s) and
/// returns it: a partial exchange is written once the gateway notices that its
/// client went away.
pub async fn recorded_chat_session(api: &Api, id: &str) -> Answer {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let s = api.get(&format!("/hecate/v1/chat/sessions/{id}")).await;
        if s.status == 200 {
            return s;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the exchange was never recorded in {id}: {}",
            s.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The last message of a session object (`{"object","data"}`).
pub fn last_message(session: &Value) -> Value {
    session["data"]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or(Value::Null)
}

/// The text contents of the messages of `holder` (a session or a request
/// body), in order.
pub fn message_contents(holder: &Value) -> Vec<&str> {
    holder["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect()
}

/// Polls session `id`'s pending approvals until one shows up (at most 60 s);
/// returns it.
pub async fn pending_approval(api: &Api, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let a = api
            .get(&format!(
                "/hecate/v1/agent-chat/sessions/{id}/approvals?status=pending"
            ))
            .await;
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(a.body["object"], "agent_chat_approvals");
        if let Some(first) = a.body["data"].as_array().and_then(|d| d.first()) {
            return first.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no approval was requested"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Polls `GET /hecate/v1/system/stats` until `agent_processes` is `want` (a hang
/// guard of `limit`, not a timing assertion).
pub async fn agent_processes_reach(api: &Api, want: u64, limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let st = api.get("/hecate/v1/system/stats").await;
        assert_eq!(st.status, 200, "{}", st.body);
        if st.body["data"]["agent_processes"] == want {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "agent_processes never reached {want}: {}",
            st.body
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Creates an external-agent session of adapter `adapter` in `workspace`; answers
/// its id.
pub async fn create_agent_session(api: &Api, adapter: &str, workspace: &std::path::Path) -> String {
    let a = api
        .post(
            "/hecate/v1/agent-chat/sessions",
            json!({
                "runtime_kind": "external_agent",
                "adapter_id": adapter,
                "workspace": workspace.display().to_string()
            }),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["data"]["id"].as_str().expect("id").to_string()
}

/// A fixture script step that streams `words` words slowly (`delay_ms` per chunk).
pub fn slow_text(words: usize, delay_ms: u64) -> Value {
    let text: Vec<String> = (0..words).map(|i| format!("w{i}")).collect();
    json!({"text": text.join(" "), "chunk_delay_ms": delay_ms})
}
