//! The fixture OpenTelemetry collector (`hecate-fixtures otlp-collector`): a
//! real OTLP/HTTP receiver in its own process, and readers for what it got.

use serde_json::Value;
use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a test waits for exports to arrive (the batch span processor and
/// the metric reader run on their own schedules).
const PATIENCE: Duration = Duration::from_secs(30);

/// A running collector, killed on drop.
pub struct Collector {
    child: Child,
    /// `http://127.0.0.1:PORT`, the value for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub endpoint: String,
    record: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Collector {
    /// Starts a collector on a free loopback port.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let record = dir.path().join("otlp.jsonl");
        let mut child = Command::new(env!("CARGO_BIN_EXE_hecate-fixtures"))
            .args(["otlp-collector", "--listen", "127.0.0.1:0", "--record"])
            .arg(&record)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn otlp-collector");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("ready line");
        let ready: Value = serde_json::from_str(&line).expect("ready JSON");
        let endpoint = ready["listening"].as_str().expect("listening").to_string();
        Self {
            child,
            endpoint,
            record,
            _dir: dir,
        }
    }

    /// Every record received so far (spans and metric data points).
    pub fn records(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Value> {
        self.signal("span")
    }

    /// Every metric data point received so far.
    pub fn metrics(&self) -> Vec<Value> {
        self.signal("metric")
    }

    fn signal(&self, kind: &str) -> Vec<Value> {
        self.records()
            .into_iter()
            .filter(|r| r["signal"] == kind)
            .collect()
    }

    /// Waits until a span matching `pred` has arrived and returns it; panics
    /// with every span seen when none arrives.
    pub fn wait_span(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait(what, "span", pred)
    }

    /// Waits until a metric data point matching `pred` has arrived.
    pub fn wait_metric(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait(what, "metric", pred)
    }

    /// Waits until a log record matching `pred` has arrived.
    pub fn wait_log(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait(what, "log", pred)
    }

    fn wait(&self, what: &str, kind: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(found) = self.signal(kind).into_iter().find(|r| pred(r)) {
                return found;
            }
            if Instant::now() > deadline {
                let seen: Vec<String> = self
                    .signal(kind)
                    .iter()
                    .map(|r| format!("{} {} {}", r["name"], r["body"], r["attributes"]))
                    .collect();
                panic!(
                    "the collector never received {what}; it got:\n{}",
                    seen.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A span's attribute as a string (empty when absent).
pub fn attr<'a>(span: &'a Value, key: &str) -> &'a str {
    span["attributes"][key].as_str().unwrap_or("")
}

/// The environment that points `hecate` at `collector` and makes it export
/// promptly (spans every 100 ms, metrics every 200 ms).
pub fn export_env(collector: &Collector) -> Vec<(&'static str, String)> {
    vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint.clone()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100".into()),
        ("OTEL_METRIC_EXPORT_INTERVAL", "200".into()),
    ]
}
