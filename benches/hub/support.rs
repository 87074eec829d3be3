//! What every benchmark of the hub shares: the paths of the `hecate` and
//! `hecate-fixtures` binaries Cargo built for this target, child processes in
//! their own process group that die with their guard, the fixture model server,
//! temporary directories, percentiles, and writing a report to stdout.

use anyhow::Context;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long a spawned peer may take to announce its address or accept
/// connections.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// The `hecate` binary of this build.
pub fn hecate_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_hecate"))
}

/// The `hecate-fixtures` binary the benchmarks start their fake peers from:
/// `explicit` (a `--fixture-bin` option) or the one of this build.
pub fn fixture_bin(explicit: Option<&Path>) -> PathBuf {
    explicit.map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_hecate-fixtures")),
        Path::to_path_buf,
    )
}

/// A fresh directory under the system temp dir, named after `what`; the caller
/// removes it (or wraps it in a [`TempDir`]).
pub fn temp_dir(what: &str) -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!(
        "hecate-bench-{what}-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// A temporary directory removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates a fresh directory named after `what`.
    pub fn new(what: &str) -> anyhow::Result<Self> {
        temp_dir(what).map(Self)
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child process leading its own process group: [`Group::stop`] ends it
/// gracefully, [`Group::reap`] waits for it to exit by itself, and dropping it
/// while it runs kills the whole group.
pub struct Group {
    child: Child,
}

impl Group {
    /// Spawns `cmd` in a new process group (and kills it if the guard is lost).
    pub fn spawn(cmd: &mut Command) -> std::io::Result<Self> {
        let child = cmd.process_group(0).kill_on_drop(true).spawn()?;
        Ok(Self { child })
    }

    /// The child process (for its pipes, its pid, `try_wait`).
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    fn pgid(&self) -> Option<i32> {
        self.child.id().and_then(|p| i32::try_from(p).ok())
    }

    fn signal(&self, signal: libc::c_int) {
        if let Some(pid) = self.pgid() {
            // SAFETY: kill(2) has no memory-safety preconditions; the child leads
            // its own process group (spawned with `process_group(0)`).
            unsafe {
                libc::kill(-pid, signal);
            }
        }
    }

    /// Sends SIGTERM to the group, waits up to 5 s, then kills it.
    pub async fn stop(self) {
        self.signal(libc::SIGTERM);
        self.reap().await;
    }

    /// Waits up to 5 s for the child to exit (it saw EOF or a signal), then
    /// kills its group.
    pub async fn reap(mut self) {
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            self.signal(libc::SIGKILL);
            let _ = self.child.wait().await;
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.signal(libc::SIGKILL);
        }
    }
}

/// A peer that announced the base URL it listens on.
pub struct Listening {
    /// The process (killed with its group when dropped).
    pub process: Group,
    /// Its base URL, e.g. `http://127.0.0.1:PORT`.
    pub base: String,
}

/// Starts `hecate serve` on an ephemeral loopback port with its data and config
/// in `dir` (the config file must exist), the caller's environment cleared of
/// settings that would change it and `env` added, and waits up to `timeout`
/// for the address it announces on stderr.
pub async fn serve_on_ephemeral_port(
    dir: &Path,
    env: &[(&str, &str)],
    timeout: Duration,
) -> anyhow::Result<Listening> {
    let mut cmd = Command::new(hecate_bin());
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .env("HECATE_DATA_DIR", dir.join("data"))
        .env("HECATE_CONFIG", dir.join("config.toml"))
        .env_remove("HECATE_TOKEN")
        .env_remove("HECATE_NAMESPACE")
        .env_remove("HECATE_STORE_URL")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut process = Group::spawn(&mut cmd).context("starting hecate serve")?;
    let stderr = process.child().stderr.take().context("serve stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    let base = tokio::time::timeout(timeout, async {
        while let Some(line) = lines.next_line().await? {
            if let Some(rest) = line.trim().split("listening on ").nth(1) {
                return Ok(rest.to_string());
            }
        }
        anyhow::bail!("hecate serve exited before announcing its address")
    })
    .await
    .context("hecate serve did not announce its address")??;
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(Listening { process, base })
}

/// A TCP port free on all interfaces right now (Node servers bind `::`), for
/// peers that cannot report the port they chose.
pub fn free_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("[::]:0")
        .or_else(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .context("finding a free port")?;
    Ok(l.local_addr()?.port())
}

/// Starts the fixture model server (an echo model, OpenAI-compatible under
/// `/v1`) on a free loopback port and reads its `{"listening": URL}` line.
pub async fn fixture_model_server(bin: &Path) -> anyhow::Result<Listening> {
    let mut process = Group::spawn(
        Command::new(bin)
            .args(["model-server", "--listen", "127.0.0.1:0"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .context("starting the fixture model server")?;
    let stdout = process.child().stdout.take().context("fixture stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(READY_TIMEOUT, lines.next_line())
        .await
        .context("the fixture did not announce its address")??
        .context("the fixture exited before announcing its address")?;
    let v: Value = serde_json::from_str(&line)?;
    let base = v["listening"]
        .as_str()
        .context("the fixture's ready line has no address")?
        .to_string();
    Ok(Listening { process, base })
}

/// The value at rank `p` (0..=1) of ascending `sorted`; 0 when empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

/// Sorts `samples` and reports their count, median, p99 and minimum.
pub fn summarize(mut samples: Vec<f64>) -> Value {
    samples.sort_by(f64::total_cmp);
    json!({
        "n": samples.len(),
        "median": percentile(&samples, 0.5),
        "p99": percentile(&samples, 0.99),
        "min": samples.first().copied().unwrap_or(0.0),
    })
}

/// The number at `key` of `v`, 0 when absent.
pub fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(0.0)
}

/// Writes `text` to stdout.
pub fn print_text(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `report` inside `{"object", "data"}`, the envelope the `hecate` command
/// prints its resources in.
pub fn envelope(object: &str, report: &Value) -> Value {
    json!({ "object": object, "data": report })
}
