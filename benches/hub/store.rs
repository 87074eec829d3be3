//! `store`: SQLite append throughput (single messages and batches) and the time
//! to load a session's last 50 messages across session sizes, as ratios against
//! the smallest session in the same run.

use crate::support::{TempDir, num, summarize};
use hecate::domain::ids::{SegmentId, SessionId};
use hecate::domain::message::{NewMessage, Role, RuntimeSnapshot};
use hecate::domain::session::{RuntimeKind, Session};
use hecate::store::{MessageStore, SessionStore, SqliteStore, Store};
use serde_json::{Value, json};
use std::time::Instant;

/// Arguments of the `store` benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreArgs {
    /// Session sizes to load from (messages).
    #[arg(long, value_delimiter = ',', default_value = "1000,100000,1000000")]
    pub sizes: Vec<usize>,
    /// Single-message appends to time.
    #[arg(long, default_value_t = 2000)]
    pub single: usize,
    /// Messages per batch for the batched-append figure.
    #[arg(long, default_value_t = 100)]
    pub batch: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Loads of the last 50 messages timed per session size.
const LOADS: usize = 200;

async fn new_session(store: &SqliteStore) -> anyhow::Result<Session> {
    let s = Session {
        provider: Some("bench".into()),
        model: Some("bench".into()),
        ..Session::new_idle("bench", SessionId::generate(), "bench", RuntimeKind::Model)
    };
    store.create_session(&s).await?;
    Ok(s)
}

fn message(i: usize) -> NewMessage {
    let role = if i.is_multiple_of(2) {
        Role::User
    } else {
        Role::Assistant
    };
    NewMessage::text(
        role,
        format!("message {i}: a typical short chat line of about eighty bytes for the benchmark."),
        RuntimeSnapshot {
            runtime_kind: RuntimeKind::Model,
            segment_id: SegmentId::from("seg_bench"),
            provider: Some("bench".into()),
            model: Some("bench".into()),
            adapter_id: None,
            task_id: None,
            task_run_id: None,
        },
    )
}

/// Runs the benchmark and returns its report.
pub async fn bench(args: &StoreArgs) -> anyhow::Result<Value> {
    let (single, batch) = (args.single, args.batch.max(1));
    let dir = TempDir::new("store")?;
    let store = SqliteStore::open(&dir.path().join("bench.db"))?;
    let s = new_session(&store).await?;
    let started = Instant::now();
    for i in 0..single {
        store.append_exchange(&s.id, vec![message(i)], None).await?;
    }
    let single_rate = single as f64 / started.elapsed().as_secs_f64();
    let batched_total = (single * 10).max(batch);
    let started = Instant::now();
    let mut i = 0;
    while i < batched_total {
        let n = batch.min(batched_total - i);
        store
            .append_exchange(&s.id, (i..i + n).map(message).collect(), None)
            .await?;
        i += n;
    }
    let batched_rate = batched_total as f64 / started.elapsed().as_secs_f64();

    let mut loads = Vec::new();
    let mut base_median = None;
    for &size in &args.sizes {
        let s = new_session(&store).await?;
        let fill = Instant::now();
        let mut i = 0;
        while i < size {
            let n = 10_000.min(size - i);
            store
                .append_exchange(&s.id, (i..i + n).map(message).collect(), None)
                .await?;
            i += n;
        }
        let fill_s = fill.elapsed().as_secs_f64();
        let mut samples = Vec::new();
        for _ in 0..LOADS {
            let t = Instant::now();
            let got = store.last_messages(&s.id, 50).await?;
            samples.push(t.elapsed().as_secs_f64() * 1e6);
            anyhow::ensure!(got.len() == 50.min(size), "loaded {} messages", got.len());
        }
        let summary = summarize(samples);
        let median = num(&summary, "median");
        let base = *base_median.get_or_insert(median);
        loads.push(json!({
            "session_messages": size,
            "fill_seconds": fill_s,
            "load_last_50_us": summary,
            "ratio_vs_smallest": if base > 0.0 { median / base } else { 0.0 },
        }));
    }
    let health = store.health().await?;
    Ok(json!({
        "benchmark": "store",
        "single_append_msgs_per_s": single_rate,
        "batched_append_msgs_per_s": batched_rate,
        "batch_size": batch,
        "batched_vs_single_ratio": batched_rate / single_rate,
        "load_last_50": loads,
        "database_bytes": health.size_bytes,
    }))
}
