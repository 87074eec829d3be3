//! `memory`: what memory costs. Context loads per working-memory strategy on a
//! large session against a small one (ratio of medians); recall queries as the
//! vector table grows to `--vectors`, searching the whole table as one scope and
//! one user's scope inside it; and model turns with recall indexing on against
//! off, alternating on one fixture model server, with the batches indexed
//! counted. SQLite in a temporary file.

use crate::support::{TempDir, num, summarize};
use hecate::adapters::providers::pricing::Pricebook;
use hecate::adapters::providers::{Embedder, ProviderClient, ProviderConfig, ProviderKind};
use hecate::domain::ids::{MessageId, SegmentId, SessionId};
use hecate::domain::message::{NewMessage, Role, RuntimeSnapshot};
use hecate::domain::recall::{MemoryEntry, MemoryVector, RecallQuery};
use hecate::domain::session::{RuntimeKind, Session};
use hecate::engine::memory::RecallSettings;
use hecate::engine::{CreateSession, Engine, EngineConfig, SendMessage};
use hecate::runtimes::model::ModelRuntime;
use hecate::store::history::HistoryStrategy;
use hecate::store::{SqliteStore, Store, VectorSearch};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of the `memory` benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct MemoryArgs {
    /// Session sizes (messages) whose context loads are timed; the first is the
    /// baseline of the ratios.
    #[arg(long, value_delimiter = ',', default_value = "1000,100000")]
    pub sizes: Vec<usize>,
    /// Context loads timed per strategy and size.
    #[arg(long, default_value_t = 200)]
    pub loads: usize,
    /// Table sizes (vectors) at which recall queries are timed, ascending.
    #[arg(long, value_delimiter = ',', default_value = "10000,100000,1000000")]
    pub vectors: Vec<usize>,
    /// Vector length.
    #[arg(long, default_value_t = 256)]
    pub dims: usize,
    /// Queries timed per table size.
    #[arg(long, default_value_t = 30)]
    pub queries: usize,
    /// Vectors of the one user whose scope is also searched.
    #[arg(long, default_value_t = 1000)]
    pub user_vectors: usize,
    /// Candidates the binary-quantized index hands to the exact rerank (the
    /// alternatives measured at the largest table size).
    #[arg(long, default_value_t = 100)]
    pub rerank: usize,
    /// Base URL of an OpenAI-compatible server with chat and embeddings (the
    /// fixture model server's `/v1`); without it the turn figure is skipped.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Model turns per path (indexing on, indexing off).
    #[arg(long, default_value_t = 100)]
    pub turns: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs the benchmark and returns its report.
pub async fn bench(args: &MemoryArgs) -> anyhow::Result<Value> {
    let dir = TempDir::new("memory")?;
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join("bench.db"))?);
    let context = context_loads(store.as_ref(), args).await?;
    let recall = recall_queries(store.as_ref(), args).await?;
    let largest = args.vectors.iter().copied().max().unwrap_or(0);
    let alternatives = tokio::task::spawn_blocking({
        let (path, args) = (dir.path().join("alternatives.db"), args.clone());
        move || alternatives(&path, largest, &args)
    })
    .await??;
    let turns = match &args.base_url {
        Some(url) => turn_overhead(url, args.turns.max(1)).await?,
        None => Value::Null,
    };
    Ok(json!({
        "benchmark": "memory",
        "context_load": context,
        "recall_query": recall,
        "recall_alternatives": alternatives,
        "turn_with_indexing": turns,
        "note": "context_load: p50 of one strategy load as begin_turn reads it, in one store operation, the sizes taking turns (buffer_window 50, summary_buffer with the summary 30 messages from the end, token_budget 8192) per session size, ratio = largest / first size. recall_query: p50 of a k=5 search (sqlite-vec vec_distance_cosine over the scope's rows) as the table grows, all vectors in one scope, and of one user's scope of user_vectors inside the same table. recall_alternatives: at the largest size, what else sqlite-vec offers for one scope of that many vectors: its vec0 table with float[dims] cosine (exact KNN scan), and bit[dims] binary quantization whose `rerank` nearest candidates are reranked exactly; recall_at_5 is the share of the exact top 5 they find. turn_with_indexing: model turns on the fixture with [memory] indexing on vs off, alternating.",
    }))
}

fn snapshot() -> RuntimeSnapshot {
    RuntimeSnapshot {
        runtime_kind: RuntimeKind::Model,
        segment_id: SegmentId::from("seg_bench"),
        provider: Some("bench".into()),
        model: Some("bench".into()),
        adapter_id: None,
        task_id: None,
        task_run_id: None,
        capabilities: None,
    }
}

async fn new_session(store: &dyn Store, user: Option<&str>) -> anyhow::Result<Session> {
    let mut s = Session::new_idle("bench", SessionId::generate(), "bench", RuntimeKind::Model);
    s.memory.user = user.map(str::to_string);
    store.create_session(&s).await?;
    Ok(s)
}

/// A session of `size` messages, the 30th from the end a summary.
async fn filled_session(store: &dyn Store, size: usize) -> anyhow::Result<SessionId> {
    let s = new_session(store, None).await?;
    let mut written = 0;
    while written < size {
        let n = (size - written).min(1000);
        let batch = (written..written + n)
            .map(|i| {
                let role = if i.is_multiple_of(2) {
                    Role::User
                } else {
                    Role::Assistant
                };
                let mut m = NewMessage::text(
                    role,
                    format!("message {i}: a typical short chat line of about eighty bytes here."),
                    snapshot(),
                );
                m.is_summary = size >= 30 && i == size - 30;
                m
            })
            .collect();
        store.append_exchange(&s.id, batch, None).await?;
        written += n;
    }
    Ok(s.id)
}

async fn context_loads(store: &dyn Store, args: &MemoryArgs) -> anyhow::Result<Value> {
    let strategies = [
        HistoryStrategy::BufferWindow { window: 50 },
        HistoryStrategy::summary_buffer(),
        HistoryStrategy::TokenBudget { max_tokens: 8192 },
    ];
    let mut sessions = Vec::new();
    for &size in &args.sizes {
        sessions.push((size, filled_session(store, size).await?));
    }
    let mut out = serde_json::Map::new();
    for strategy in strategies {
        // The sizes take turns, so drift on a shared machine hits them alike.
        let mut loaded = vec![0; sessions.len()];
        let mut samples = vec![Vec::new(); sessions.len()];
        for _ in 0..args.loads.max(1) {
            for (i, (_, sid)) in sessions.iter().enumerate() {
                let t = Instant::now();
                loaded[i] = store.load_history(sid, strategy).await?.len();
                samples[i].push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        let per_size: Vec<Value> = sessions
            .iter()
            .zip(loaded)
            .zip(samples)
            .map(|(((size, _), loaded), samples)| {
                json!({"messages": size, "loaded": loaded, "ms": summarize(samples)})
            })
            .collect();
        let first = per_size.first().map_or(0.0, |v| num(&v["ms"], "median"));
        let last = per_size.last().map_or(0.0, |v| num(&v["ms"], "median"));
        out.insert(
            strategy.name().to_string(),
            json!({"sizes": per_size, "median_ratio_largest_vs_first": last / first.max(1e-9)}),
        );
    }
    Ok(Value::Object(out))
}

/// A deterministic pseudo-random unit vector (xorshift64*).
fn unit_vector(seed: u64, dims: usize) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v: Vec<f32> = (0..dims)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
            (r >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt().max(1e-9);
    v.iter_mut().for_each(|a| *a /= norm);
    v
}

fn memory_vector(s: &Session, i: usize, dims: usize) -> MemoryVector {
    MemoryVector {
        entry: MemoryEntry {
            namespace: s.namespace.clone(),
            user: s.memory.user_key().to_string(),
            session_id: s.id.clone(),
            message_id: MessageId::from(format!("msg_{}_{i}", s.memory.user_key()).as_str()),
            sequence: i as i64,
            role: Role::User,
            text: format!("message {i}"),
            created_at: "2026-11-27T00:00:00Z".into(),
        },
        model: "bench-embed".into(),
        embedding: unit_vector(i as u64 + 1, dims),
    }
}

/// p50 of `queries` k=5 searches of `user`'s scope.
async fn time_queries(
    store: &dyn Store,
    user: &str,
    dims: usize,
    queries: usize,
) -> anyhow::Result<(Value, usize)> {
    let mut samples = Vec::new();
    let mut found = 0;
    for q in 0..queries.max(1) {
        let query = RecallQuery {
            namespace: "bench".into(),
            user: user.into(),
            model: "bench-embed".into(),
            embedding: unit_vector(u64::MAX - q as u64, dims),
            session: None,
            exclude_session: None,
            k: 5,
        };
        let t = Instant::now();
        let VectorSearch::Hits(hits) = store.search_memory(&query).await? else {
            anyhow::bail!("vector search unavailable on SQLite");
        };
        samples.push(t.elapsed().as_secs_f64() * 1e3);
        found = hits.len();
    }
    Ok((summarize(samples), found))
}

async fn recall_queries(store: &dyn Store, args: &MemoryArgs) -> anyhow::Result<Value> {
    let shared = new_session(store, None).await?;
    let alice = new_session(store, Some("alice")).await?;
    let user_rows: Vec<MemoryVector> = (0..args.user_vectors)
        .map(|i| memory_vector(&alice, i, args.dims))
        .collect();
    for chunk in user_rows.chunks(5000) {
        store.put_memory_vectors(chunk).await?;
    }
    let mut stored = 0;
    let mut insert_ms = 0.0;
    let mut per_size = Vec::new();
    for &size in &args.vectors {
        let t = Instant::now();
        while stored < size {
            let n = (size - stored).min(5000);
            let rows: Vec<MemoryVector> = (stored..stored + n)
                .map(|i| memory_vector(&shared, i, args.dims))
                .collect();
            store.put_memory_vectors(&rows).await?;
            stored += n;
        }
        insert_ms += t.elapsed().as_secs_f64() * 1e3;
        let (whole, found) = time_queries(store, "", args.dims, args.queries).await?;
        let (scoped, _) = time_queries(store, "alice", args.dims, args.queries).await?;
        per_size.push(json!({
            "vectors": size,
            "results": found,
            "whole_table_scope_ms": whole,
            "user_scope_ms": scoped,
        }));
    }
    Ok(json!({
        "dims": args.dims,
        "user_vectors": args.user_vectors,
        "insert_vectors_per_s": stored as f64 / (insert_ms / 1e3).max(1e-9),
        "sizes": per_size,
    }))
}

/// An engine on a fresh SQLite store whose model provider (and, with
/// `indexing`, embeddings model) is the server at `base_url`.
async fn engine(base_url: &str, indexing: bool, dir: &TempDir) -> anyhow::Result<Engine> {
    let client = ProviderClient::new(
        ProviderClient::default_http()?,
        ProviderConfig {
            name: "bench".into(),
            kind: ProviderKind::Openai,
            base_url: base_url.to_string(),
            api_key: None,
            models: vec![],
        },
    );
    let memory = RecallSettings {
        embedder: indexing
            .then(|| Embedder::new(client.clone(), "bench-embed", Some(256)))
            .transpose()?,
        ..RecallSettings::default()
    };
    let name = if indexing { "on.db" } else { "off.db" };
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join(name))?);
    let runtime = ModelRuntime::new(vec![client], Pricebook::default());
    let config = EngineConfig {
        memory,
        ..EngineConfig::default()
    };
    Ok(Engine::start(store, runtime.into(), config).await?.0)
}

async fn timed_turn(engine: &Engine, sid: &SessionId, i: usize) -> anyhow::Result<f64> {
    let t = Instant::now();
    let mut turn = engine
        .send_message(
            "bench",
            sid,
            SendMessage {
                content: format!("benchmark prompt number {i} about lighthouses"),
                ..Default::default()
            },
        )
        .await?;
    let r = turn.wait().await;
    if let Some(e) = r.error {
        return Err(e.into());
    }
    Ok(t.elapsed().as_secs_f64() * 1e3)
}

async fn turn_overhead(base_url: &str, turns: usize) -> anyhow::Result<Value> {
    let dir = TempDir::new("memory-turns")?;
    let off = engine(base_url, false, &dir).await?;
    let on = engine(base_url, true, &dir).await?;
    let mut sessions = Vec::new();
    for e in [&off, &on] {
        let s = e
            .create_session(
                "bench",
                CreateSession {
                    model: Some("bench/fixture-model".into()),
                    ..Default::default()
                },
            )
            .await?;
        timed_turn(e, &s.id, 0).await?;
        sessions.push(s.id);
    }
    let (mut t_off, mut t_on) = (Vec::new(), Vec::new());
    for i in 1..=turns {
        t_off.push(timed_turn(&off, &sessions[0], i).await?);
        t_on.push(timed_turn(&on, &sessions[1], i).await?);
    }
    // Let the last batch go out, then read what was indexed.
    tokio::time::sleep(Duration::from_millis(500)).await;
    on.shutdown().await;
    let status = on.memory().status();
    let (off_s, on_s) = (summarize(t_off), summarize(t_on));
    Ok(json!({
        "turns": turns,
        "indexing_off_ms": off_s,
        "indexing_on_ms": on_s,
        "median_added_ms": num(&on_s, "median") - num(&off_s, "median"),
        "messages_indexed": status.indexed,
        "embedding_batches": status.batches,
    }))
}

/// The exact top 5 of `q` by cosine distance over the plain table.
fn exact_top(conn: &rusqlite::Connection, q: &[u8]) -> anyhow::Result<Vec<i64>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM plain ORDER BY vec_distance_cosine(embedding, ?1), id LIMIT 5",
    )?;
    let ids = stmt.query_map([q], |r| r.get(0))?;
    Ok(ids.collect::<rusqlite::Result<_>>()?)
}

/// Times `search` over `queries` query vectors and scores its top 5 against
/// the exact ones.
fn time_alternative(
    queries: &[(Vec<u8>, Vec<i64>)],
    mut search: impl FnMut(&[u8]) -> anyhow::Result<Vec<i64>>,
) -> anyhow::Result<Value> {
    let mut samples = Vec::new();
    let mut hits = 0;
    for (q, exact) in queries {
        let t = Instant::now();
        let found = search(q)?;
        samples.push(t.elapsed().as_secs_f64() * 1e3);
        hits += found.iter().filter(|id| exact.contains(id)).count();
    }
    Ok(json!({
        "ms": summarize(samples),
        "recall_at_5": hits as f64 / (queries.len() * 5).max(1) as f64,
    }))
}

/// sqlite-vec's other ways of searching `size` vectors of one scope, on a
/// database of their own: the exact scan of a plain table (as Hecate searches),
/// a vec0 float table, and a vec0 bit table with an exact rerank.
fn alternatives(path: &std::path::Path, size: usize, args: &MemoryArgs) -> anyhow::Result<Value> {
    let d = args.dims;
    // Opening a store registers sqlite-vec for every later connection.
    drop(SqliteStore::open_in_memory()?);
    let mut conn = rusqlite::Connection::open(path)?;
    conn.execute_batch(&format!(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;
         CREATE TABLE plain (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
         CREATE VIRTUAL TABLE floats USING vec0(embedding float[{d}] distance_metric=cosine);
         CREATE VIRTUAL TABLE bits USING vec0(embedding bit[{d}]);"
    ))?;
    let t = Instant::now();
    for start in (0..size).step_by(10_000) {
        let tx = conn.transaction()?;
        {
            let mut plain =
                tx.prepare_cached("INSERT INTO plain (id, embedding) VALUES (?1, ?2)")?;
            let mut floats =
                tx.prepare_cached("INSERT INTO floats (rowid, embedding) VALUES (?1, ?2)")?;
            let mut bits = tx.prepare_cached(
                "INSERT INTO bits (rowid, embedding) VALUES (?1, vec_quantize_binary(?2))",
            )?;
            for i in start..(start + 10_000).min(size) {
                let v = hecate::store::memory::vector_bytes(&unit_vector(i as u64 + 1, d));
                let id = i as i64 + 1;
                plain.execute(rusqlite::params![id, v])?;
                floats.execute(rusqlite::params![id, v])?;
                bits.execute(rusqlite::params![id, v])?;
            }
        }
        tx.commit()?;
    }
    let insert_s = t.elapsed().as_secs_f64();
    let queries: Vec<(Vec<u8>, Vec<i64>)> = (0..args.queries.max(1))
        .map(|q| {
            let v = hecate::store::memory::vector_bytes(&unit_vector(u64::MAX - q as u64, d));
            let exact = exact_top(&conn, &v)?;
            Ok((v, exact))
        })
        .collect::<anyhow::Result<_>>()?;
    let plain = time_alternative(&queries, |q| exact_top(&conn, q))?;
    let floats = time_alternative(&queries, |q| {
        let mut stmt = conn.prepare_cached(
            "SELECT rowid FROM floats WHERE embedding MATCH ?1 AND k = 5 ORDER BY distance",
        )?;
        let ids = stmt.query_map([q], |r| r.get(0))?;
        Ok(ids.collect::<rusqlite::Result<_>>()?)
    })?;
    let rerank = args.rerank.max(5) as i64;
    let bits = time_alternative(&queries, |q| {
        let mut stmt = conn.prepare_cached(
            "SELECT p.id FROM plain p JOIN (SELECT rowid FROM bits \
             WHERE embedding MATCH vec_quantize_binary(?1) AND k = ?2) b ON p.id = b.rowid \
             ORDER BY vec_distance_cosine(p.embedding, ?1), p.id LIMIT 5",
        )?;
        let ids = stmt.query_map(rusqlite::params![q, rerank], |r| r.get(0))?;
        Ok(ids.collect::<rusqlite::Result<_>>()?)
    })?;
    Ok(json!({
        "vectors": size,
        "insert_s_all_three": insert_s,
        "plain_table_exact_scan": plain,
        "vec0_float_cosine_knn": floats,
        "vec0_bit_knn_with_exact_rerank": bits,
        "rerank_candidates": rerank,
    }))
}
