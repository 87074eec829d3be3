//! `agent-loop`: Hecate's own agent (`agent_loop` task runs) against a loop a
//! developer would write by hand, in the same run, on the same scripted fixture
//! model: a 20-turn loop of `read_file`, `file_edit` and `shell_exec` calls and
//! a final answer. The direct loop streams the same Chat Completions requests
//! (same tool catalog, growing history) and runs each tool in-process or with
//! one spawned `sh -c`; Hecate's loop is a task run on the task runtime with its
//! steps, events, patches and conversation checkpoints in SQLite. The store
//! floor (`agent_floor`) is the same loop's writes alone, for what no loop
//! that survives a crash can go under.

use crate::agent_floor::floor_loop;
use crate::support::{TempDir, fixture_bin, num, summarize};
use anyhow::{Context, bail, ensure};
use futures::StreamExt;
use hecate::adapters::providers::pricing::Pricebook;
use hecate::adapters::providers::{ProviderClient, ProviderConfig, ProviderKind};
use hecate::domain::task::{ApprovalPolicy, ExecutionKind, TaskSpec, WorkspaceMode};
use hecate::engine::tasks::{StartOptions, TaskConfig, TaskRuntime};
use hecate::runtimes::agent::catalog;
use hecate::runtimes::model::ModelRuntime;
use hecate::store::{SqliteStore, Store};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_util::sync::CancellationToken;

/// Arguments of the `agent-loop` benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct AgentLoopArgs {
    /// Tool-calling turns per loop (a final answer follows them).
    #[arg(long, default_value_t = 20)]
    pub turns: usize,
    /// Loops per path (after one warm-up loop each).
    #[arg(long, default_value_t = 20)]
    pub loops: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The model the fixture is scripted for.
const MODEL: &str = "loop-model";
/// The file the loop reads and edits.
const FILE: &str = "notes.txt";

/// The tool call of scripted turn `i`: read, edit (alternating the word back
/// and forth, so every edit applies), run a command.
fn scripted_call(i: usize) -> Value {
    match i % 3 {
        0 => json!({"name": "read_file", "arguments": {"path": FILE}}),
        1 => {
            let (from, to) = if (i / 3).is_multiple_of(2) {
                ("alpha", "beta")
            } else {
                ("beta", "alpha")
            };
            json!({"name": "file_edit",
                   "arguments": {"path": FILE, "old_string": from, "new_string": to}})
        }
        _ => json!({"name": "shell_exec", "arguments": {"command": "wc -l notes.txt"}}),
    }
}

/// One loop's script: `turns` tool-calling turns and an answer.
fn one_loop(turns: usize) -> Vec<Value> {
    let usage = json!({"input_tokens": 100, "output_tokens": 10});
    (0..turns)
        .map(|i| json!({"tool_calls": [scripted_call(i)], "usage": usage}))
        .chain(std::iter::once(
            json!({"text": "The loop is done.", "usage": usage}),
        ))
        .collect()
}

/// A fixture model server serving `loops` copies of the loop script in order.
struct ScriptedModel {
    child: tokio::process::Child,
    base: String,
    _dir: TempDir,
}

impl ScriptedModel {
    async fn start(turns: usize, loops: usize) -> anyhow::Result<Self> {
        let dir = TempDir::new("loop-model")?;
        let script: Vec<Value> = (0..loops).flat_map(|_| one_loop(turns)).collect();
        let path = dir.path().join("script.json");
        std::fs::write(&path, serde_json::to_vec(&script)?)?;
        let mut child = tokio::process::Command::new(fixture_bin(None))
            .args(["model-server", "--listen", "127.0.0.1:0", "--script"])
            .arg(&path)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("starting the scripted fixture model server")?;
        let stdout = child.stdout.take().context("fixture stdout")?;
        let line = tokio::time::timeout(
            Duration::from_secs(30),
            BufReader::new(stdout).lines().next_line(),
        )
        .await
        .context("the fixture did not announce its address")??
        .context("the fixture exited before announcing its address")?;
        let v: Value = serde_json::from_str(&line)?;
        let base = v["listening"]
            .as_str()
            .context("the fixture's ready line has no address")?
            .to_string();
        Ok(Self {
            child,
            base,
            _dir: dir,
        })
    }
}

/// A fresh workspace holding the file the loop works on.
fn reset_workspace(ws: &Path) -> anyhow::Result<()> {
    std::fs::write(ws.join(FILE), "alpha\nsecond line\n")?;
    Ok(())
}

/// Milliseconds since `t`.
fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// What one direct model turn asked for: tool calls (id, name, arguments).
type Calls = Vec<(String, String, String)>;

/// One streamed Chat Completions request; answers the tool calls it made.
async fn direct_llm(
    http: &reqwest::Client,
    base: &str,
    messages: &[Value],
    tools: &Value,
) -> anyhow::Result<Calls> {
    let body = json!({"model": MODEL, "messages": messages, "tools": tools, "stream": true,
                      "stream_options": {"include_usage": true}});
    let resp = http
        .post(format!("{base}/v1/chat/completions"))
        .json(&body)
        .send()
        .await?
        .error_for_status()?;
    let mut stream = eventsource_stream::Eventsource::eventsource(resp.bytes_stream());
    let mut calls: BTreeMap<u64, (String, String, String)> = BTreeMap::new();
    while let Some(ev) = stream.next().await {
        let ev = ev?;
        if ev.data.trim() == "[DONE]" {
            break;
        }
        let v: Value = serde_json::from_str(&ev.data)?;
        for tc in v["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let entry = calls.entry(tc["index"].as_u64().unwrap_or(0)).or_default();
            if let Some(id) = tc["id"].as_str() {
                entry.0 = id.to_string();
            }
            if let Some(n) = tc["function"]["name"].as_str() {
                entry.1.push_str(n);
            }
            if let Some(a) = tc["function"]["arguments"].as_str() {
                entry.2.push_str(a);
            }
        }
    }
    Ok(calls.into_values().collect())
}

/// Runs one tool call the way a hand-written loop would; answers the result text.
async fn direct_tool(ws: &Path, name: &str, arguments: &str) -> anyhow::Result<String> {
    let args: Value = serde_json::from_str(arguments)?;
    let path = |a: &Value| ws.join(a["path"].as_str().unwrap_or_default());
    Ok(match name {
        "read_file" => std::fs::read_to_string(path(&args))?,
        "file_edit" => {
            let p = path(&args);
            let text = std::fs::read_to_string(&p)?;
            let (from, to) = (
                args["old_string"].as_str().unwrap_or_default(),
                args["new_string"].as_str().unwrap_or_default(),
            );
            ensure!(text.contains(from), "direct edit: {from:?} not found");
            std::fs::write(&p, text.replacen(from, to, 1))?;
            format!("edited {}", p.display())
        }
        "shell_exec" => {
            let out = tokio::process::Command::new("/bin/sh")
                .args(["-c", args["command"].as_str().unwrap_or_default()])
                .current_dir(ws)
                .output()
                .await?;
            format!(
                "exit {:?}\n{}{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        }
        other => bail!("the script called an unknown tool {other}"),
    })
}

/// Per-kind samples of one path (milliseconds).
#[derive(Default)]
struct Samples {
    loops: Vec<f64>,
    llm: Vec<f64>,
    tools: BTreeMap<String, Vec<f64>>,
}

/// One hand-written loop to its answer; adds its timings to `s`.
async fn direct_loop(
    http: &reqwest::Client,
    base: &str,
    ws: &Path,
    tools: &Value,
    s: &mut Samples,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut messages = vec![json!({"role": "user", "content": "work on notes.txt"})];
    loop {
        let t = Instant::now();
        let calls = direct_llm(http, base, &messages, tools).await?;
        s.llm.push(ms(t));
        if calls.is_empty() {
            break;
        }
        let wire: Vec<Value> = calls
            .iter()
            .map(|(id, name, args)| {
                json!({"id": id, "type": "function",
                       "function": {"name": name, "arguments": args}})
            })
            .collect();
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": wire}));
        for (id, name, args) in calls {
            let t = Instant::now();
            let result = direct_tool(ws, &name, &args).await?;
            s.tools.entry(name).or_default().push(ms(t));
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": result}));
        }
    }
    s.loops.push(ms(started));
    Ok(())
}

/// The task runtime Hecate's agent runs on, its model provider the fixture.
fn hecate_runtime(base: &str, db: &Path, data: &Path) -> anyhow::Result<TaskRuntime> {
    let http = ProviderClient::default_http()?;
    let provider = ProviderConfig {
        name: "bench".into(),
        kind: ProviderKind::Openai,
        base_url: format!("{base}/v1"),
        api_key: None,
        models: vec![],
    };
    let models = ModelRuntime::new(
        vec![ProviderClient::new(http, provider)],
        Pricebook::default(),
    );
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(db)?);
    let config = TaskConfig {
        approval_policy: ApprovalPolicy::parse("")?,
        data_dir: data.to_path_buf(),
        poll: Duration::from_millis(20),
        ..TaskConfig::default()
    };
    Ok(TaskRuntime::new(store, models, config, "bench".into()))
}

/// The `agent_loop` task of one loop, in place in `ws`, unconfined as the direct loop.
fn loop_task(ws: &Path, turns: usize) -> TaskSpec {
    TaskSpec {
        execution_kind: Some(ExecutionKind::AgentLoop),
        prompt: "work on notes.txt".into(),
        requested_model: format!("bench/{MODEL}"),
        working_directory: ws.display().to_string(),
        workspace_mode: WorkspaceMode::InPlace,
        sandbox_network: true,
        max_turns: u32::try_from(turns + 1).unwrap_or(u32::MAX),
        ..TaskSpec::default()
    }
}

/// When this process saw a step start and end (its `step.started` and
/// `step.finished` events, published as their transactions commit).
#[derive(Default)]
struct Seen {
    started: Option<Instant>,
    ended: Option<Instant>,
}

impl Seen {
    /// Milliseconds between the two, when both were seen.
    fn ms(&self) -> Option<f64> {
        Some((self.ended? - self.started?).as_secs_f64() * 1e3)
    }
}

/// One Hecate loop (create, start, run to `run.finished`); adds its wall time
/// and its steps' durations to `s`. A step's duration runs from its
/// `step.started` event to its `step.finished` event as this process receives
/// them (microsecond precision): its work and the checkpoint that stores its
/// end with the next step's start.
async fn hecate_loop(
    rt: &TaskRuntime,
    ws: &Path,
    turns: usize,
    s: &mut Samples,
) -> anyhow::Result<()> {
    let mut events = rt.subscribe();
    let started = Instant::now();
    let task = rt.create_task("bench", loop_task(ws, turns)).await?;
    let run = rt.start("bench", &task.id, StartOptions::default()).await?;
    let mut seen: HashMap<String, Seen> = HashMap::new();
    loop {
        let e = events.recv().await?;
        if e.run_id != run.id {
            continue;
        }
        let at = Instant::now();
        let step = || e.data["step_id"].as_str().unwrap_or_default().to_string();
        match e.event_type.as_str() {
            "step.started" => seen.entry(step()).or_default().started = Some(at),
            "step.finished" | "step.failed" => seen.entry(step()).or_default().ended = Some(at),
            "run.finished" => break,
            "run.failed" | "run.cancelled" | "run.awaiting_approval" => {
                bail!("the agent loop ended with {}: {}", e.event_type, e.data)
            }
            _ => {}
        }
    }
    s.loops.push(ms(started));
    for step in rt.list_steps("bench", &task.id, &run.id).await? {
        let Some(d) = seen.get(step.id.as_str()).and_then(Seen::ms) else {
            continue;
        };
        if step.kind == "model" {
            s.llm.push(d);
        } else {
            let tool = step.input["tool"].as_str().unwrap_or("other").to_string();
            s.tools.entry(tool).or_default().push(d);
        }
    }
    Ok(())
}

/// The summary of one path's samples.
fn report(s: Samples) -> Value {
    let tools: serde_json::Map<String, Value> = s
        .tools
        .into_iter()
        .map(|(k, v)| (k, summarize(v)))
        .collect();
    json!({"loop_ms": summarize(s.loops), "llm_turn_ms": summarize(s.llm), "tool_ms": tools})
}

/// Runs the benchmark and returns its report.
pub async fn bench(args: &AgentLoopArgs) -> anyhow::Result<Value> {
    let (turns, loops) = (args.turns.max(1), args.loops.max(1));
    // Both paths consume one loop's script per loop, plus one warm-up loop each.
    let model = ScriptedModel::start(turns, 2 * (loops + 1)).await?;
    let tmp = TempDir::new("agent-loop")?;
    let ws: PathBuf = tmp.path().join("ws");
    std::fs::create_dir_all(&ws)?;
    let ws = ws.canonicalize()?;
    let http = ProviderClient::default_http()?;
    let tools: Value = catalog::definitions()
        .into_iter()
        .map(|d| {
            json!({"type": "function", "function": {"name": d.name,
                   "description": d.description, "parameters": d.parameters}})
        })
        .collect();
    let rt = hecate_runtime(&model.base, &tmp.path().join("bench.db"), tmp.path())?;
    let stop = CancellationToken::new();
    let workers = rt.start_workers(stop.clone());
    let (mut direct, mut hecate) = (Samples::default(), Samples::default());
    let result: anyhow::Result<()> = async {
        for i in 0..=loops {
            let (mut d, mut h) = (Samples::default(), Samples::default());
            reset_workspace(&ws)?;
            direct_loop(&http, &model.base, &ws, &tools, &mut d).await?;
            reset_workspace(&ws)?;
            hecate_loop(&rt, &ws, turns, &mut h).await?;
            if i > 0 {
                direct.absorb(d);
                hecate.absorb(h);
            }
        }
        Ok(())
    }
    .await;
    stop.cancel();
    for w in workers {
        let _ = w.await;
    }
    let mut model = model;
    let _ = model.child.kill().await;
    result?;
    // The floor: the loop's writes alone, on a fresh file, folded as the loop
    // writes them and unfolded (each step start its own transaction),
    // alternating loop by loop.
    let floor_store = SqliteStore::open(&tmp.path().join("floor.db"))?;
    let (mut floor_ms, mut unfolded_ms, mut writes, mut unfolded_writes) =
        (Vec::new(), Vec::new(), 0, 0);
    for i in 0..=loops {
        let f = floor_loop(&floor_store, turns, true).await?;
        let u = floor_loop(&floor_store, turns, false).await?;
        if i > 0 {
            floor_ms.push(f.ms);
            unfolded_ms.push(u.ms);
            (writes, unfolded_writes) = (f.writes, u.writes);
        }
    }
    let floor = summarize(floor_ms);
    let floor_median = num(&floor, "median");
    let unfolded = summarize(unfolded_ms);
    let unfolded_median = num(&unfolded, "median");
    let (d, h) = (report(direct), report(hecate));
    let median = |v: &Value, path: &[&str]| {
        let mut cur = v;
        for p in path {
            cur = &cur[*p];
        }
        num(cur, "median")
    };
    let llm_turns = (turns + 1) as f64;
    let added_per_turn = (median(&h, &["loop_ms"]) - median(&d, &["loop_ms"])) / llm_turns;
    let added = |tool: &str| median(&h, &["tool_ms", tool]) - median(&d, &["tool_ms", tool]);
    Ok(json!({
        "benchmark": "agent_loop",
        "turns": turns,
        "loops": loops,
        "direct": d,
        "hecate": h,
        "loop_ratio_hecate_vs_direct": median(&h, &["loop_ms"]) / median(&d, &["loop_ms"]).max(1e-9),
        "added_ms_per_llm_turn_whole_loop": added_per_turn,
        "added_ms_per_llm_turn_step": median(&h, &["llm_turn_ms"]) - median(&d, &["llm_turn_ms"]),
        "added_ms_per_read_file": added("read_file"),
        "added_ms_per_file_edit": added("file_edit"),
        "added_ms_per_shell_exec": added("shell_exec"),
        "store_floor": {
            "loop_ms": floor,
            "writes_per_loop": writes,
            "ms_per_llm_turn": floor_median / llm_turns,
            "ms_per_write": floor_median / (writes.max(1) as f64),
        },
        "store_floor_unfolded": {
            "loop_ms": unfolded,
            "writes_per_loop": unfolded_writes,
            "ms_per_llm_turn": unfolded_median / llm_turns,
            "ms_per_write": unfolded_median / (unfolded_writes.max(1) as f64),
        },
        "note": "Direct = a hand-written loop streaming the same Chat Completions requests (same tool catalog, growing history) and running each tool in-process or as one sh -c. Hecate = an agent_loop task run on the task runtime (SQLite file, in place, unconfined): claim, steps, run events, patches, conversation checkpoint per turn. Step figures run from a step's step.started to its step.finished event as the bench receives them (its work and the checkpoint storing its end); the whole-loop figure is (Hecate loop - direct loop) / LLM turns. Store floor = the loop's write transactions alone (task, run, claim, workspace, two checkpoints per turn with a tool call, answer, run end) on a fresh SQLite file; unfolded = the same with each step start a transaction of its own, as before starts were folded into checkpoints (four per turn).",
    }))
}

impl Samples {
    /// Adds another loop's samples.
    fn absorb(&mut self, other: Samples) {
        self.loops.extend(other.loops);
        self.llm.extend(other.llm);
        for (k, v) in other.tools {
            self.tools.entry(k).or_default().extend(v);
        }
    }
}
