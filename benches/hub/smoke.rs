//! The smoke set: every benchmark once with tiny counts, and what its report
//! must hold. No timing is asserted, only that each figure is there and is a
//! number (and a few counts the parameters fix).

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};
use std::path::Path;

/// One smoke step: a name and the benchmark's command line (after `hub`).
pub struct Step {
    /// The step's name, matched by filters.
    pub name: &'static str,
    /// The arguments, starting with the benchmark's subcommand.
    pub argv: Vec<String>,
}

fn step(name: &'static str, argv: &[&str]) -> Step {
    Step {
        name,
        argv: argv.iter().map(|a| a.to_string()).collect(),
    }
}

/// Calls, clients and starts of both `mcp` smoke steps.
const MCP_TINY: &[&str] = &["--calls", "20", "--clients", "2", "--starts", "2"];

/// The smoke steps; `model_v1` is the base URL of a running fixture model server.
pub fn plan(model_v1: &str) -> Vec<Step> {
    let mcp: Vec<&str> = std::iter::once("mcp")
        .chain(MCP_TINY.iter().copied())
        .collect();
    let mcp_ts: Vec<&str> = mcp.iter().copied().chain(["--ts"]).collect();
    vec![
        step(
            "store",
            &[
                "store",
                "--sizes",
                "10,100",
                "--single",
                "20",
                "--batch",
                "5",
                "--replicas",
                "3",
                "--concurrent",
                "20",
            ],
        ),
        step("model", &["model", "--base-url", model_v1, "--turns", "2"]),
        step(
            "gateway",
            &[
                "gateway",
                "--requests",
                "5",
                "--streams",
                "2",
                "--words",
                "8",
                "--clients",
                "2",
                "--concurrent-requests",
                "3",
                "--rounds",
                "1",
                "--litellm",
                "off",
            ],
        ),
        step("agent", &["agent", "--chunks", "10", "--repeats", "1"]),
        step("loop", &["agent-loop", "--turns", "3", "--loops", "1"]),
        step(
            "acp",
            &["acp", "--starts", "1", "--chunks", "10", "--repeats", "1"],
        ),
        step(
            "http",
            &[
                "http",
                "--messages",
                "10",
                "--duration-ms",
                "100",
                "--connections",
                "2",
                "--turns-per-session",
                "2",
                "--subscribers",
                "1,3",
            ],
        ),
        step(
            "a2a",
            &[
                "a2a",
                "--duration-ms",
                "100",
                "--connections",
                "2",
                "--turns-per-context",
                "2",
            ],
        ),
        step(
            "turns",
            &[
                "turns",
                "--messages",
                "20",
                "--duration-ms",
                "100",
                "--sessions",
                "3",
                "--soak-ms",
                "200",
            ],
        ),
        step("mcp", &mcp),
        step("mcp-ts", &mcp_ts),
        step(
            "tasks",
            &["tasks", "--runs", "6", "--single", "2", "--workers", "1,2"],
        ),
        step(
            "memory",
            &[
                "memory",
                "--sizes",
                "40,100",
                "--loads",
                "3",
                "--vectors",
                "50,200",
                "--dims",
                "16",
                "--queries",
                "2",
                "--user-vectors",
                "10",
                "--base-url",
                model_v1,
                "--turns",
                "2",
            ],
        ),
    ]
}

/// Fails a step whose peers are not installed.
pub fn ready(name: &str) -> anyhow::Result<()> {
    if name == "mcp-ts" {
        ensure!(
            Path::new("target/test-deps/mcp/.hecate-test-deps").exists(),
            "the MCP peers are not installed: run ./scripts/test-deps/mcp.sh first"
        );
    }
    Ok(())
}

/// Checks the report of step `name`: `envelope` is its JSON output, `text` its
/// text output.
pub fn check(name: &str, envelope: &Value, text: &str) -> anyhow::Result<()> {
    let data = &envelope["data"];
    ensure!(!text.trim().is_empty(), "empty text report");
    match name {
        "store" => store(data),
        "model" => model(data),
        "gateway" => gateway(data, text),
        "agent" => agent(data),
        "loop" => agent_loop(data),
        "acp" => acp(data),
        "http" => http(data),
        "a2a" => a2a(data),
        "turns" => turns(data, text),
        "tasks" => tasks(data),
        "memory" => memory(data),
        "mcp" => {
            ensure!(envelope["object"] == "mcp_bench", "object: {envelope}");
            mcp(data, "rmcp", RMCP_PATHS)?;
            mcp_table(text)
        }
        "mcp-ts" => {
            ensure!(envelope["object"] == "mcp_bench", "object: {envelope}");
            mcp(data, "typescript-sdk", TS_PATHS)?;
            ensure!(
                data["sdk_version"].as_str().is_some_and(|v| !v.is_empty()),
                "sdk_version: {data}"
            );
            ensure!(
                data["node"].as_str().is_some_and(|v| v.starts_with("v22")),
                "node: {data}"
            );
            Ok(())
        }
        other => bail!("no checks for {other}"),
    }
}

/// The value at a dotted `path` (array indices as numbers), which must be a
/// finite number.
fn number(v: &Value, path: &str) -> anyhow::Result<f64> {
    let found = path
        .split('.')
        .try_fold(v, |v, k| match k.parse::<usize>() {
            Ok(i) => v.get(i),
            Err(_) => v.get(k),
        })
        .with_context(|| format!("{path} missing in {v}"))?;
    let n = found
        .as_f64()
        .with_context(|| format!("{path} is not a number: {found}"))?;
    ensure!(n.is_finite(), "{path} = {n}");
    Ok(n)
}

/// Like [`number`], and at least 0.
fn non_negative(v: &Value, path: &str) -> anyhow::Result<f64> {
    let n = number(v, path)?;
    ensure!(n >= 0.0, "{path} = {n}");
    Ok(n)
}

fn store(r: &Value) -> anyhow::Result<()> {
    ensure!(r["benchmark"] == "store", "{r}");
    ensure!(number(r, "single_append_msgs_per_s")? > 0.0, "{r}");
    ensure!(number(r, "batched_append_msgs_per_s")? > 0.0, "{r}");
    number(r, "batched_vs_single_ratio")?;
    for (i, size) in [10.0, 100.0].into_iter().enumerate() {
        ensure!(
            number(r, &format!("load_last_50.{i}.session_messages"))? == size,
            "{r}"
        );
        non_negative(r, &format!("load_last_50.{i}.load_last_50_us.median"))?;
        non_negative(r, &format!("load_last_50.{i}.ratio_vs_smallest"))?;
    }
    ensure!(number(r, "database_bytes")? > 0.0, "{r}");
    ensure!(number(r, "concurrent_appends.appends")? == 60.0, "{r}");
    for zero in ["failed", "lost", "duplicated_sequences"] {
        ensure!(
            number(r, &format!("concurrent_appends.{zero}"))? == 0.0,
            "{zero}: {r}"
        );
    }
    ensure!(r["concurrent_appends"]["gap_free"] == true, "{r}");
    Ok(())
}

fn memory(r: &Value) -> anyhow::Result<()> {
    ensure!(r["benchmark"] == "memory", "{r}");
    for strategy in ["buffer_window", "summary_buffer", "token_budget"] {
        for i in 0..2 {
            non_negative(r, &format!("context_load.{strategy}.sizes.{i}.ms.median"))?;
            ensure!(
                number(r, &format!("context_load.{strategy}.sizes.{i}.loaded"))? > 0.0,
                "{r}"
            );
        }
        non_negative(
            r,
            &format!("context_load.{strategy}.median_ratio_largest_vs_first"),
        )?;
    }
    ensure!(
        number(r, "context_load.summary_buffer.sizes.1.loaded")? == 30.0,
        "loads from the summary: {r}"
    );
    for (i, size) in [50.0, 200.0].into_iter().enumerate() {
        ensure!(
            number(r, &format!("recall_query.sizes.{i}.vectors"))? == size,
            "{r}"
        );
        ensure!(
            number(r, &format!("recall_query.sizes.{i}.results"))? == 5.0,
            "{r}"
        );
        non_negative(
            r,
            &format!("recall_query.sizes.{i}.whole_table_scope_ms.median"),
        )?;
        non_negative(r, &format!("recall_query.sizes.{i}.user_scope_ms.median"))?;
    }
    for alt in [
        "plain_table_exact_scan",
        "vec0_float_cosine_knn",
        "vec0_bit_knn_with_exact_rerank",
    ] {
        non_negative(r, &format!("recall_alternatives.{alt}.ms.median"))?;
        let found = number(r, &format!("recall_alternatives.{alt}.recall_at_5"))?;
        ensure!((0.0..=1.0).contains(&found), "{alt}: {r}");
    }
    ensure!(
        number(r, "recall_alternatives.plain_table_exact_scan.recall_at_5")? == 1.0,
        "the exact scan is the reference: {r}"
    );
    ensure!(number(r, "turn_with_indexing.turns")? == 2.0, "{r}");
    number(r, "turn_with_indexing.median_added_ms")?;
    ensure!(
        number(r, "turn_with_indexing.messages_indexed")? == 6.0,
        "warm-up and two turns, two messages each: {r}"
    );
    Ok(())
}

fn tasks(r: &Value) -> anyhow::Result<()> {
    ensure!(r["benchmark"] == "tasks", "{r}");
    let by_workers = r["queue_by_workers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let workers: Vec<&Value> = by_workers.iter().map(|q| &q["workers"]).collect();
    ensure!(workers == [&json!(1), &json!(2)], "worker counts: {r}");
    for q in by_workers.iter().chain([&r["queue_two_pools"]]) {
        ensure!(q["runs"] == 6, "{r}");
        ensure!(q["exactly_once"] == true, "a run started twice: {q}");
        ensure!(q["failed"] == 0, "{q}");
        ensure!(q["runs_per_s"].as_f64().is_some_and(|v| v > 0.0), "{q}");
    }
    ensure!(number(r, "task_unconfined_ms.n")? == 2.0, "{r}");
    number(r, "median_added_ms_unconfined")?;
    Ok(())
}

fn model(r: &Value) -> anyhow::Result<()> {
    ensure!(r["benchmark"] == "model_turn", "{r}");
    ensure!(number(r, "turns")? == 2.0, "{r}");
    for side in ["direct_ms", "hecate_ms"] {
        ensure!(number(r, &format!("{side}.n"))? == 2.0, "{r}");
        ensure!(number(r, &format!("{side}.median"))? > 0.0, "{r}");
        non_negative(r, &format!("{side}.p99"))?;
    }
    ensure!(number(r, "median_ratio_hecate_vs_direct")? > 0.0, "{r}");
    number(r, "median_added_ms")?;
    Ok(())
}

fn gateway(r: &Value, text: &str) -> anyhow::Result<()> {
    ensure!(r["benchmark"] == "gateway", "{r}");
    // LiteLLM's proxy takes a minute to start on a loaded machine: the smoke
    // run leaves it out and says whether it is installed.
    ensure!(r["litellm"]["skipped"] == "--litellm off", "{r}");
    ensure!(r["litellm"]["installed"].is_boolean(), "{r}");
    ensure!(text.contains("litellm"), "{text}");
    for p in ["direct", "floor", "hecate", "hecate_session"] {
        for figure in ["p50_ms", "ttft_ms", "tokens_per_s", "concurrent_rps"] {
            ensure!(
                number(r, &format!("paths.{p}.{figure}"))? > 0.0,
                "{p}.{figure}: {r}"
            );
        }
        for figure in ["added_p50_ms", "added_ttft_ms", "throughput_vs_direct"] {
            number(r, &format!("paths.{p}.{figure}"))?;
        }
    }
    ensure!(r["paths"].get("litellm").is_none(), "{r}");
    ensure!(number(r, "paths.direct.added_p50_ms")? == 0.0, "{r}");
    ensure!(r["goals"].is_object(), "{r}");
    Ok(())
}

fn agent(r: &Value) -> anyhow::Result<()> {
    ensure!(r["benchmark"] == "agent_streaming", "{r}");
    ensure!(number(r, "results.0.chunks")? == 10.0, "{r}");
    for figure in [
        "direct_turn_ms_median",
        "hecate_turn_ms_median",
        "wall_ratio_hecate_vs_direct",
        "direct_first_chunk_ms_median",
        "hecate_first_chunk_ms_median",
    ] {
        ensure!(number(r, &format!("results.0.{figure}"))? > 0.0, "{r}");
    }
    number(r, "results.0.added_us_per_update")?;
    ensure!(r["probes"].as_array().is_some_and(Vec::is_empty), "{r}");
    Ok(())
}

fn agent_loop(r: &Value) -> anyhow::Result<()> {
    ensure!(r["benchmark"] == "agent_loop", "{r}");
    for side in ["direct", "hecate"] {
        ensure!(number(r, &format!("{side}.loop_ms.n"))? == 1.0, "{r}");
        ensure!(
            number(r, &format!("{side}.llm_turn_ms.n"))? == 4.0,
            "3 tool turns and an answer: {r}"
        );
        for tool in ["read_file", "file_edit", "shell_exec"] {
            ensure!(
                number(r, &format!("{side}.tool_ms.{tool}.n"))? == 1.0,
                "{r}"
            );
        }
    }
    ensure!(number(r, "loop_ratio_hecate_vs_direct")? > 0.0, "{r}");
    ensure!(
        number(r, "store_floor.writes_per_loop")? == 13.0,
        "4 per run, 2 per tool turn, the answer and the run's end: {r}"
    );
    ensure!(number(r, "store_floor.ms_per_write")? > 0.0, "{r}");
    ensure!(
        number(r, "store_floor_unfolded.writes_per_loop")? == 19.0,
        "each step start its own write: 5 per run, 4 per tool turn, 2 for the answer: {r}"
    );
    for figure in [
        "added_ms_per_llm_turn_whole_loop",
        "added_ms_per_llm_turn_step",
        "added_ms_per_read_file",
    ] {
        number(r, figure)?;
    }
    Ok(())
}

fn acp(r: &Value) -> anyhow::Result<()> {
    ensure!(r["benchmark"] == "acp_bridge", "{r}");
    for who in ["hecate_acp", "fixture_agent"] {
        ensure!(
            number(r, &format!("cold_start_to_initialize.{who}.median_ms"))? > 0.0,
            "{r}"
        );
    }
    ensure!(
        number(r, "cold_start_to_initialize.ratio_hecate_vs_fixture")? > 0.0,
        "{r}"
    );
    ensure!(number(r, "streamed_turn.chunks")? == 10.0, "{r}");
    for figure in ["direct_ms_median", "through_hecate_ms_median", "wall_ratio"] {
        ensure!(number(r, &format!("streamed_turn.{figure}"))? > 0.0, "{r}");
    }
    number(r, "streamed_turn.added_us_per_update")?;
    Ok(())
}

fn turns(r: &Value, text: &str) -> anyhow::Result<()> {
    ensure!(r["benchmark"] == "turns", "{r}");
    ensure!(r["store"] == "sqlite", "{r}");
    ensure!(number(r, "parameters.messages")? == 20.0, "{r}");
    for loop_name in [
        "direct",
        "fresh_session",
        "long_session",
        "failover",
        "soak.direct",
    ] {
        for figure in ["requests_per_s", "p50_ms", "p99_ms"] {
            non_negative(r, &format!("{loop_name}.{figure}"))?;
        }
        ensure!(number(r, &format!("{loop_name}.requests"))? >= 1.0, "{r}");
    }
    for figure in [
        "added_p50_ms.fresh_session",
        "added_p50_ms.long_session",
        "added_p50_ms.failover_over_fresh",
        "soak.added_p99_ms",
    ] {
        number(r, figure)?;
    }
    for figure in ["answer_bytes.fresh_session", "answer_bytes.long_session"] {
        ensure!(number(r, figure)? > 0.0, "{r}");
    }
    ensure!(number(r, "soak.sessions")? == 3.0, "{r}");
    ensure!(number(r, "soak.errors")? == 0.0, "soak errors: {r}");
    ensure!(number(r, "soak.turns")? >= 3.0, "{r}");
    for figure in [
        "p50_ms",
        "p99_ms",
        "turns_per_s",
        "serve_rss_kib_start",
        "serve_rss_kib_peak",
    ] {
        non_negative(r, &format!("soak.{figure}"))?;
    }
    ensure!(text.contains("soak: 3 sessions"), "{text}");
    // The floor answered every turn, on one connection and in its soak.
    for figure in ["one_connection.p50_ms", "soak.p50_ms", "soak.p99_ms"] {
        non_negative(r, &format!("floor.{figure}"))?;
    }
    number(r, "floor.added_p50_ms")?;
    number(r, "floor.soak.added_p99_ms")?;
    ensure!(number(r, "floor.one_connection.requests")? >= 1.0, "{r}");
    ensure!(number(r, "floor.soak.errors")? == 0.0, "floor errors: {r}");
    ensure!(number(r, "floor.soak.turns")? >= 3.0, "{r}");
    ensure!(
        text.contains("floor (a minimal durable turn server)"),
        "{text}"
    );
    Ok(())
}

fn a2a(r: &Value) -> anyhow::Result<()> {
    ensure!(r["benchmark"] == "a2a", "{r}");
    for loop_name in ["a2a_send", "agent_chat_message"] {
        for figure in ["requests", "requests_per_s", "p50_ms", "p99_ms"] {
            non_negative(r, &format!("{loop_name}.{figure}"))?;
        }
        ensure!(number(r, &format!("{loop_name}.requests"))? >= 1.0, "{r}");
    }
    for figure in ["requests_per_s", "p50", "p99"] {
        number(r, &format!("ratio_a2a_vs_agent_chat.{figure}"))?;
    }
    Ok(())
}

fn http(r: &Value) -> anyhow::Result<()> {
    ensure!(r["benchmark"] == "http", "{r}");
    ensure!(number(r, "get_session.messages")? == 10.0, "{r}");
    ensure!(number(r, "get_session.body_bytes")? > 0.0, "{r}");
    for loop_name in [
        "get_session.target",
        "get_session.baseline_healthz",
        "post_message.target",
        "post_message.baseline_direct",
        "named_key.target",
        "named_key.baseline_no_credential",
    ] {
        for figure in ["requests", "requests_per_s", "p50_ms", "p99_ms"] {
            non_negative(r, &format!("{loop_name}.{figure}"))?;
        }
        ensure!(number(r, &format!("{loop_name}.requests"))? >= 1.0, "{r}");
    }
    for ratios in ["get_session", "post_message", "named_key"] {
        for figure in ["requests_per_s", "p50", "p99"] {
            number(r, &format!("{ratios}.ratio_vs_baseline.{figure}"))?;
        }
    }
    let fanout = r["sse_fanout"].as_array().context("sse_fanout")?;
    ensure!(fanout.len() == 2, "{r}");
    for (i, subscribers) in [1.0, 3.0].into_iter().enumerate() {
        ensure!(
            number(r, &format!("sse_fanout.{i}.subscribers"))? == subscribers,
            "{r}"
        );
        for figure in [
            "first_update_all_ms",
            "first_update_median_ms",
            "done_all_ms",
            "done_median_ms",
            "serve_rss_kib_connected",
        ] {
            number(r, &format!("sse_fanout.{i}.{figure}"))?;
        }
    }
    for figure in [
        "serve_rss_kib_start",
        "serve_rss_kib_idle",
        "serve_rss_kib_connected",
    ] {
        ensure!(number(r, &format!("memory.{figure}"))? > 0.0, "{r}");
    }
    ensure!(number(r, "memory.subscribers")? == 3.0, "{r}");
    number(r, "memory.per_subscriber_kib")?;
    Ok(())
}

/// The paths of the rmcp client's report.
const RMCP_PATHS: &[&str] = &[
    "direct_stdio",
    "hecate_stdio",
    "hecate_http",
    "hecate_http_passthrough",
    "pipe_relay_stdio",
    "rmcp_proxy_stdio",
    "rmcp_proxy_http",
    "rmcp_server_http",
];

/// The paths of the TypeScript SDK client's report.
const TS_PATHS: &[&str] = &[
    "direct_stdio",
    "hecate_stdio",
    "hecate_http",
    "hecate_http_passthrough",
    "supergateway_stateful",
    "everything_http",
    "pipe_relay_stdio",
    "rmcp_proxy_stdio",
    "rmcp_proxy_http",
    "rmcp_server_http",
];

fn mcp(data: &Value, client: &str, paths: &[&str]) -> anyhow::Result<()> {
    ensure!(data["client"] == client, "{data}");
    ensure!(data["calls"] == 20, "{data}");
    ensure!(data["clients"] == 2, "{data}");
    let got = data["paths"].as_object().context("paths object")?;
    for path in paths {
        let p = got
            .get(*path)
            .with_context(|| format!("path {path} missing: {data}"))?;
        for figure in [
            "median_us",
            "p99_us",
            "calls_per_s",
            "concurrent_calls_per_s",
            "median_vs_direct",
            "scaling",
        ] {
            non_negative(p, figure).with_context(|| format!("path {path}"))?;
        }
        ensure!(number(p, "calls_per_s")? > 0.0, "{p}");
        ensure!(number(p, "concurrent_calls_per_s")? > 0.0, "{p}");
    }
    ensure!(got.len() == paths.len(), "unexpected paths: {data}");
    for path in ["hecate_stdio", "hecate_http", "hecate_http_passthrough"] {
        non_negative(&got[path], "median_vs_rmcp_floor").with_context(|| format!("path {path}"))?;
    }
    ensure!(
        number(&got["direct_stdio"], "median_vs_direct")? == 1.0,
        "direct ratio: {data}"
    );
    let cold = &data["cold_start"];
    ensure!(cold["starts"] == 2, "{cold}");
    for who in ["hecate_mcp", "direct"] {
        for figure in ["median_ms", "min_ms", "max_ms"] {
            non_negative(&cold[who], figure).with_context(|| format!("cold_start.{who}"))?;
        }
        ensure!(number(&cold[who], "median_ms")? > 0.0, "{cold}");
    }
    Ok(())
}

fn mcp_table(text: &str) -> anyhow::Result<()> {
    for needle in [
        "direct_stdio",
        "hecate_stdio",
        "hecate_http",
        "hecate_http_passthrough",
        "rmcp_proxy_stdio",
        "vs direct",
        "vs floor",
        "cold start",
    ] {
        ensure!(text.contains(needle), "{needle} missing from:\n{text}");
    }
    Ok(())
}
