//! `acp`: what `hecate acp` costs an editor, against the direct path in the same
//! run. Cold start to the `initialize` answer (median of N spawns) of
//! `hecate acp` vs the fixture agent (a minimal responder) and any installed Node
//! agents; and a streamed turn of N chunks through `client → hecate acp → fixture
//! agent` vs `client → fixture agent`, as a wall-time ratio and added µs per update.
//! The client is the official SDK's client role over the child's pipes.

use crate::support::{Group, TempDir, fixture_bin, hecate_bin, num};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest, SessionNotification,
    SessionUpdate,
};
use agent_client_protocol::{Agent, Client};
use hecate::adapters::acp::transport::child_transport;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Arguments of the `acp` benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct AcpArgs {
    /// Cold starts measured per command (the median is reported).
    #[arg(long, default_value_t = 20)]
    pub starts: usize,
    /// Chunks in the streamed turn.
    #[arg(long, default_value_t = 1000)]
    pub chunks: usize,
    /// Measured turns per path (after one warm-up turn).
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// The hecate-fixtures binary (default: the one of this build).
    #[arg(long)]
    pub fixture_bin: Option<PathBuf>,
    /// A directory with Node-based agents (e.g. target/test-deps/node/node_modules/.bin,
    /// Node 22 first): their cold starts are measured too.
    #[arg(long)]
    pub agents_bin: Option<PathBuf>,
    /// Cold starts measured per Node agent.
    #[arg(long, default_value_t = 5)]
    pub agent_starts: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// How to start one ACP agent process.
#[derive(Debug, Clone)]
struct Peer {
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

/// Node agents measured when installed: (bin, args).
const NODE_AGENTS: &[(&str, &[&str])] = &[
    ("claude-agent-acp", &[]),
    ("codex-acp", &[]),
    ("gemini", &["--acp"]),
    ("opencode", &["acp"]),
];

fn median_ms(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v.get(v.len() / 2).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// Spawns `peer` with its stdio piped; returns the process and the SDK transport.
fn spawn(
    peer: &Peer,
    cwd: &Path,
) -> anyhow::Result<(
    Group,
    impl agent_client_protocol::ConnectTo<Client> + 'static,
)> {
    let mut cmd = tokio::process::Command::new(&peer.program);
    cmd.args(&peer.args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in &peer.env {
        cmd.env(k, v);
    }
    let mut process = Group::spawn(&mut cmd)?;
    let stdin = process
        .child()
        .stdin
        .take()
        .ok_or_else(|| anyhow::anyhow!("no stdin"))?;
    let stdout = process
        .child()
        .stdout
        .take()
        .ok_or_else(|| anyhow::anyhow!("no stdout"))?;
    // Hecate's own client transport toward agents (the same framing and frame
    // limit on both paths), with diagnostics dropped.
    let transport = child_transport(
        stdin,
        stdout,
        tokio_util::sync::CancellationToken::new(),
        Arc::new(|_| {}),
    );
    Ok((process, transport))
}

async fn initialize(cx: &ConnectionTo<Agent>) -> Result<(), agent_client_protocol::Error> {
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
        .block_task()
        .await
        .map(|_| ())
}

/// Spawn to `initialize` answer, once.
async fn cold_start(peer: &Peer, cwd: &Path) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let (process, transport) = spawn(peer, cwd)?;
    let elapsed = Client
        .v1()
        .name("hecate-bench")
        .connect_with(transport, async |cx: ConnectionTo<Agent>| {
            initialize(&cx).await?;
            Ok(started.elapsed())
        })
        .await;
    process.reap().await;
    Ok(elapsed?)
}

/// The median cold start of `peer` over `n` runs (after one unmeasured warm-up).
async fn cold_starts(peer: &Peer, cwd: &Path, n: usize) -> anyhow::Result<Value> {
    cold_start(peer, cwd).await?;
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        samples.push(cold_start(peer, cwd).await?);
    }
    Ok(json!({"runs": n, "median_ms": median_ms(samples)}))
}

/// One warm-up and `repeats` measured turns of `chunks` chunks in one session.
async fn turns(
    peer: &Peer,
    ws: &Path,
    chunks: usize,
    repeats: usize,
) -> anyhow::Result<Vec<Duration>> {
    let (process, transport) = spawn(peer, ws)?;
    let tally = Arc::new(AtomicUsize::new(0));
    let seen = tally.clone();
    let result = Client
        .v1()
        .name("hecate-bench")
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                if let SessionUpdate::AgentMessageChunk(_) = n.update {
                    seen.fetch_add(1, Ordering::Relaxed);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(transport, async |cx: ConnectionTo<Agent>| {
            initialize(&cx).await?;
            let sid = cx
                .send_request(NewSessionRequest::new(ws))
                .block_task()
                .await?
                .session_id;
            let mut walls = Vec::with_capacity(repeats);
            for i in 0..=repeats {
                tally.store(0, Ordering::Relaxed);
                let started = Instant::now();
                cx.send_request(PromptRequest::new(
                    sid.clone(),
                    vec![ContentBlock::from("stream please")],
                ))
                .block_task()
                .await?;
                let wall = started.elapsed();
                let got = tally.load(Ordering::Relaxed);
                if got != chunks {
                    return Err(agent_client_protocol::Error::internal_error()
                        .data(json!({"expected_chunks": chunks, "received": got})));
                }
                if i > 0 {
                    walls.push(wall);
                }
            }
            Ok(walls)
        })
        .await;
    process.reap().await;
    Ok(result?)
}

/// Cold starts of the Node agents installed in `bin`; an agent that fails
/// reports its error instead of figures.
async fn node_agents(
    bin: &Path,
    dir: &Path,
    ws: &Path,
    starts: usize,
    cold: &mut serde_json::Map<String, Value>,
) -> anyhow::Result<()> {
    let bin = std::fs::canonicalize(bin)?;
    let home = dir.join("agent-home");
    std::fs::create_dir_all(&home)?;
    let path = std::env::var("PATH").unwrap_or_default();
    for (name, agent_args) in NODE_AGENTS {
        let program = bin.join(name);
        if !program.exists() {
            continue;
        }
        let peer = Peer {
            program,
            args: agent_args.iter().map(|a| a.to_string()).collect(),
            env: vec![
                ("PATH".into(), format!("{}:{path}", bin.display())),
                ("HOME".into(), home.display().to_string()),
                ("IS_SANDBOX".into(), "1".into()),
            ],
        };
        let figures = match cold_starts(&peer, ws, starts).await {
            Ok(v) => v,
            Err(e) => json!({"error": e.to_string()}),
        };
        cold.insert((*name).to_string(), figures);
    }
    Ok(())
}

/// Runs the benchmark and returns its report.
pub async fn bench(args: &AcpArgs) -> anyhow::Result<Value> {
    let fixture = fixture_bin(args.fixture_bin.as_deref());
    let hecate = hecate_bin();
    let tmp = TempDir::new("acp")?;
    let dir = tmp.path();
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws)?;
    let script = dir.join("stream.json");
    let turn = json!({"turns": [{"actions": [{"stream": {"count": args.chunks, "text": "x"}}]}]});
    std::fs::write(&script, turn.to_string())?;
    std::fs::create_dir_all(dir.join("adapters"))?;
    std::fs::write(
        dir.join("adapters/bench.toml"),
        format!(
            "id = \"bench\"\nname = \"bench\"\ncommand = {:?}\nargs = [\"acp-agent\", \"--script\", {:?}]\n",
            fixture.display().to_string(),
            script.display().to_string()
        ),
    )?;
    let hecate_env = vec![
        (
            "HECATE_DATA_DIR".to_string(),
            dir.join("data").display().to_string(),
        ),
        (
            "HECATE_CONFIG".to_string(),
            dir.join("config.toml").display().to_string(),
        ),
        (
            "PATH".to_string(),
            std::env::var("PATH").unwrap_or_default(),
        ),
    ];
    let hecate_acp = |target: &[&str]| Peer {
        program: hecate.clone(),
        args: std::iter::once("acp")
            .chain(target.iter().copied())
            .map(str::to_string)
            .collect(),
        env: hecate_env.clone(),
    };
    let fixture_agent = Peer {
        program: fixture.clone(),
        args: vec![
            "acp-agent".into(),
            "--script".into(),
            script.display().to_string(),
        ],
        env: Vec::new(),
    };

    let starts = args.starts.max(1);
    let mut cold = serde_json::Map::new();
    let h = cold_starts(&hecate_acp(&[]), &ws, starts).await?;
    let f = cold_starts(&fixture_agent, &ws, starts).await?;
    let ratio = num(&h, "median_ms") / num(&f, "median_ms").max(1e-9);
    cold.insert("hecate_acp".into(), h);
    cold.insert("fixture_agent".into(), f);
    cold.insert("ratio_hecate_vs_fixture".into(), json!(ratio));
    if let Some(bin) = &args.agents_bin {
        node_agents(bin, dir, &ws, args.agent_starts.max(1), &mut cold).await?;
    }

    let repeats = args.repeats.max(1);
    let direct = turns(&fixture_agent, &ws, args.chunks, repeats).await?;
    let through = turns(
        &hecate_acp(&["--target", "agent:bench"]),
        &ws,
        args.chunks,
        repeats,
    )
    .await?;
    let (d, t) = (median_ms(direct), median_ms(through));
    Ok(json!({
        "benchmark": "acp_bridge",
        "cold_start_to_initialize": cold,
        "streamed_turn": {
            "chunks": args.chunks,
            "repeats": repeats,
            "direct_ms_median": d,
            "through_hecate_ms_median": t,
            "wall_ratio": t / d.max(1e-9),
            "added_us_per_update": (t - d) * 1e3 / args.chunks.max(1) as f64,
            "note": "client → hecate acp → fixture agent vs client → fixture agent; the Hecate path \
                     persists the prompt, the run events (batched) and the answer",
        },
    }))
}
