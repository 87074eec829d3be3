//! A small, strict MCP client for end-to-end tests of `hecate mcp` over real
//! pipes: raw JSON-RPC lines (so tests see exactly what is on stdout), requests
//! matched by id, notifications collected in order, server→client requests
//! answered by a test-supplied function.

use super::child::process_alive;
use super::common::Home;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// Upper bound of one request in these tests.
pub const REQUEST_BOUND: Duration = Duration::from_secs(60);

/// The fixture binary.
pub fn fixtures_bin() -> String {
    env!("CARGO_BIN_EXE_hecate-fixtures").to_string()
}

/// A config section for an upstream running the fixture MCP server with `args`.
pub fn fixture_upstream(name: &str, args: &[&str], extra: &str) -> String {
    let mut all = vec!["mcp-server".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    format!(
        "[mcp_servers.{name}]\ncommand = {:?}\nargs = {}\n{extra}\n",
        fixtures_bin(),
        serde_json::to_string(&all).expect("args")
    )
}

/// A running `hecate mcp` with its stdio.
pub struct McpProc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every line read from stdout, in order.
    pub raw: Vec<String>,
    /// Notifications received so far, in order.
    pub notifications: Vec<Value>,
    /// The file stderr goes to.
    pub stderr_path: PathBuf,
    next_id: i64,
    responses: std::collections::HashMap<i64, Value>,
}

impl Drop for McpProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl McpProc {
    /// Spawns `hecate mcp` (plus `extra` arguments) in `home`.
    pub fn spawn(home: &Home, extra: &[&str]) -> Self {
        let mut args = vec!["mcp"];
        args.extend_from_slice(extra);
        Self::spawn_command(home, home.cmd(&args))
    }

    /// Spawns `cmd` (an MCP server on stdio), stderr kept in a file of `home`.
    pub fn spawn_command(home: &Home, mut cmd: std::process::Command) -> Self {
        let stderr_path = home.path(&format!("mcp-stderr-{}.log", uuid_like()));
        let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn hecate mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(l) => {
                        if tx.send(l).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            raw: Vec::new(),
            notifications: Vec::new(),
            stderr_path,
            next_id: 1,
            responses: std::collections::HashMap::new(),
        }
    }

    /// Spawns and initializes with `capabilities`.
    pub fn start(home: &Home, capabilities: Value) -> Self {
        let mut p = Self::spawn(home, &[]);
        p.initialize(capabilities);
        p
    }

    /// The process's stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes one raw line to stdin.
    pub fn send_line(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    /// Writes `bytes` (not necessarily UTF-8) and a newline to stdin.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    /// Sends a JSON-RPC message.
    pub fn send(&mut self, msg: &Value) {
        self.send_line(&msg.to_string());
    }

    /// Closes stdin and waits for the process to exit, at most `bound`.
    pub fn close_and_wait(&mut self, bound: Duration) -> Option<std::process::ExitStatus> {
        self.stdin.take();
        let start = Instant::now();
        while start.elapsed() < bound {
            if let Ok(Some(st)) = self.child.try_wait() {
                for l in self.lines.try_iter() {
                    self.raw.push(l);
                }
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    fn next_line(&mut self, deadline: Instant) -> Option<Value> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(l) => {
                self.raw.push(l.clone());
                Some(serde_json::from_str(&l).unwrap_or_else(|e| {
                    panic!(
                        "stdout carried a line that is not JSON ({e}): {l:?}\nstderr:\n{}",
                        self.stderr()
                    )
                }))
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// The next message on stdout as it comes (a response, a notification or a
    /// server request; nothing is answered or kept), or `None` at the bound.
    pub fn next_message(&mut self, bound: Duration) -> Option<Value> {
        self.next_line(Instant::now() + bound)
    }

    /// Sends a request and waits for its response, answering server requests with
    /// `answer` (method, params) -> result; notifications are kept.
    pub fn request_with(
        &mut self,
        method: &str,
        params: Value,
        answer: &mut dyn FnMut(&str, &Value) -> Value,
    ) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait_response(id, answer)
    }

    /// Waits for the response to request `id`.
    pub fn wait_response(
        &mut self,
        id: i64,
        answer: &mut dyn FnMut(&str, &Value) -> Value,
    ) -> Value {
        if let Some(r) = self.responses.remove(&id) {
            return r;
        }
        let deadline = Instant::now() + REQUEST_BOUND;
        loop {
            let Some(msg) = self.next_line(deadline) else {
                panic!(
                    "no response to request {id} within {REQUEST_BOUND:?}; stderr:\n{}",
                    self.stderr()
                );
            };
            if msg.get("method").is_some() && msg.get("id").is_some() {
                let method = msg["method"].as_str().unwrap_or_default().to_string();
                let result = answer(&method, &msg["params"]);
                self.send(&json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}));
                continue;
            }
            if msg.get("method").is_some() {
                self.notifications.push(msg);
                continue;
            }
            if msg["id"] == json!(id) {
                return msg;
            }
            if let Some(other) = msg["id"].as_i64() {
                self.responses.insert(other, msg);
            }
        }
    }

    /// Waits for the response whose `id` is `id` (any JSON value, `null`
    /// included), at most `bound`; other responses and notifications are kept as
    /// `wait_response` keeps them. Server requests fail the test.
    pub fn wait_id(&mut self, id: &Value, bound: Duration) -> Option<Value> {
        if let Some(i) = id.as_i64()
            && let Some(r) = self.responses.remove(&i)
        {
            return Some(r);
        }
        let deadline = Instant::now() + bound;
        while let Some(msg) = self.next_line(deadline) {
            match (msg.get("method"), msg.get("id")) {
                (Some(m), Some(_)) => panic!("unexpected server request {m}"),
                (Some(_), None) => self.notifications.push(msg),
                (None, Some(got)) if got == id => return Some(msg),
                (None, _) => {
                    if let Some(other) = msg["id"].as_i64() {
                        self.responses.insert(other, msg);
                    }
                }
            }
        }
        None
    }

    /// Sends a request whose server requests are refused.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_with(method, params, &mut |m, _| {
            panic!("unexpected server request {m}")
        })
    }

    /// Sends a request without waiting; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// `initialize` then `notifications/initialized`.
    pub fn initialize(&mut self, capabilities: Value) -> Value {
        let r = self.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                   "clientInfo": {"name": "hecate-e2e", "version": "1.0"}}),
        );
        assert!(r.get("result").is_some(), "initialize failed: {r}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }

    /// `tools/call`; returns the whole response.
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// `tools/call` expected to succeed (`isError` false); returns the result.
    pub fn call_ok(&mut self, name: &str, arguments: Value) -> Value {
        let r = self.call(name, arguments);
        let result = r
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{name} failed: {r}"));
        assert_ne!(
            result["isError"],
            json!(true),
            "{name} returned a tool error: {result}"
        );
        result
    }

    /// Waits until a notification with `method` arrives (or returns `None` at the bound).
    pub fn wait_notification(&mut self, method: &str, bound: Duration) -> Option<Value> {
        if let Some(i) = self
            .notifications
            .iter()
            .position(|n| n["method"] == method)
        {
            return Some(self.notifications.remove(i));
        }
        let deadline = Instant::now() + bound;
        while let Some(msg) = self.next_line(deadline) {
            if msg["method"] == method {
                return Some(msg);
            }
            if msg.get("method").is_some() {
                self.notifications.push(msg);
            }
        }
        None
    }

    /// Tool names from `tools/list`.
    pub fn tool_names(&mut self) -> Vec<String> {
        let r = self.request("tools/list", json!({}));
        r["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

/// The text of a tool result's first content block.
pub fn first_text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A short unique suffix for file names.
pub fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Waits until `pid` is gone, at most `bound`; returns whether it is.
pub fn wait_gone(pid: u32, bound: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < bound {
        if !process_alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    !process_alive(pid)
}

/// The JSON lines an upstream fixture started with `--record FILE` wrote so far.
pub fn records(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The fixture records of `event` (`subscribe`, `unsubscribe`, ...) for `uri`.
pub fn uri_records(path: &std::path::Path, event: &str, uri: &str) -> usize {
    records(path)
        .iter()
        .filter(|r| r["event"] == event && r["uri"] == uri)
        .count()
}

/// Waits until the fixture recorded `event` for `uri` at least `n` times, at
/// most `bound`; returns whether it did.
pub fn wait_uri_records(
    path: &std::path::Path,
    event: &str,
    uri: &str,
    n: usize,
    bound: Duration,
) -> bool {
    let start = Instant::now();
    while start.elapsed() < bound {
        if uri_records(path, event, uri) >= n {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    uri_records(path, event, uri) >= n
}

/// A running `hecate mcp http`, killed on drop.
pub struct HttpEndpoint {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl Drop for HttpEndpoint {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HttpEndpoint {
    /// Starts `hecate mcp http` in `home` and waits for its ready line.
    pub fn start(home: &Home) -> Self {
        let mut child = home
            .cmd(&["mcp", "http"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn hecate mcp http");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("ready line");
        let v: Value = serde_json::from_str(&line).expect("ready JSON");
        Self {
            url: v["listening"].as_str().expect("url").to_string(),
            child,
        }
    }
}

/// Stores `credentials` as the sign-in of upstream `server` in `home`'s SQLite
/// store, issued by `https://issuer.example` to client `hecate-test`.
fn store_credentials(home: &Home, server: &str, credentials: &Value) {
    rusqlite::Connection::open(home.data_dir().join(hecate::store::sqlite::DB_FILE))
        .expect("open the store")
        .execute(
            "INSERT INTO mcp_oauth_tokens (server, issuer, client_id, credentials, updated_at) \
             VALUES (?1, 'https://issuer.example', 'hecate-test', ?2, '2026-11-30T00:00:00Z')",
            rusqlite::params![server, credentials.to_string()],
        )
        .expect("store a sign-in");
}

/// Stores a sign-in of upstream `server` in `home`'s SQLite store as Hecate's
/// OAuth client would: issued by `https://issuer.example`, an access token
/// (`secret-access-123`) good for an hour and a refresh token
/// (`secret-refresh-456`), so a test can check that neither is ever shown.
pub fn store_sign_in(home: &Home, server: &str) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let credentials = json!({
        "client_id": "hecate-test",
        "token_response": {"access_token": "secret-access-123", "token_type": "bearer",
                           "expires_in": 3600, "refresh_token": "secret-refresh-456"},
        "granted_scopes": ["mcp"],
        "token_received_at": now,
        "issuer": "https://issuer.example",
    });
    store_credentials(home, server, &credentials);
}

/// Stores a sign-in of `server` whose credentials Hecate cannot read (its
/// token response is a string, `secret-garbled`), as a damaged row would be.
pub fn store_unreadable_sign_in(home: &Home, server: &str) {
    let credentials = json!({"client_id": "hecate-test", "token_response": "secret-garbled"});
    store_credentials(home, server, &credentials);
}
