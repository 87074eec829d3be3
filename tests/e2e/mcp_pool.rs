//! The MCP client pool against the fixture MCP server: one entry per resolved
//! transport shared by refcounted leases, idle TTL, LRU cap over idle entries,
//! eviction of a dead upstream by the idle ping sweep, and start-up failures
//! carrying the upstream's stderr, after one retry.

use crate::support::mcp;
use hecate::adapters::mcp::{McpClientError, Pool, PoolOptions, ServerSpec};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn spec(args: &[&str]) -> ServerSpec {
    let mut all = vec!["mcp-server".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    ServerSpec::Stdio {
        command: mcp::fixtures_bin(),
        args: all,
        env: BTreeMap::new(),
        cwd: None,
    }
}

fn pool(opts: PoolOptions) -> Pool {
    let env: HashMap<String, String> = std::env::vars().collect();
    Pool::new(opts, hecate::adapters::mcp::base_env(&env), env)
}

fn quiet() -> PoolOptions {
    PoolOptions {
        idle_ttl: Duration::from_secs(3600),
        ping_interval: Duration::ZERO,
        ..PoolOptions::default()
    }
}

#[tokio::test]
async fn leases_share_one_entry_per_transport_and_count_as_in_use() {
    let pool = pool(quiet());
    let a = pool.acquire(&spec(&[]), None).await.expect("a");
    let b = pool.acquire(&spec(&[]), None).await.expect("b");
    assert_eq!(a.pid(), b.pid(), "one process for one resolved transport");
    let stats = pool.stats();
    assert_eq!((stats.entries, stats.in_use, stats.idle), (1, 2, 0));
    let echoed = a
        .call_tool(
            "echo",
            serde_json::json!({"message": "x"}).as_object().cloned(),
            None,
            &CancellationToken::new(),
            Duration::from_secs(30),
        )
        .await
        .expect("echo");
    assert_eq!(echoed["content"][0]["text"], "x");
    drop(a);
    drop(b);
    let stats = pool.stats();
    assert_eq!((stats.entries, stats.in_use, stats.idle), (1, 0, 1));
}

#[tokio::test]
async fn idle_entries_close_after_the_ttl_and_the_cap_evicts_the_least_recent() {
    let pool = pool(PoolOptions {
        max_entries: 2,
        ..quiet()
    });
    let first = pool
        .acquire(&spec(&["--name", "one"]), None)
        .await
        .expect("one");
    let first_pid = first.pid().expect("pid");
    drop(first);
    drop(
        pool.acquire(&spec(&["--name", "two"]), None)
            .await
            .expect("two"),
    );
    drop(
        pool.acquire(&spec(&["--name", "three"]), None)
            .await
            .expect("three"),
    );
    assert_eq!(pool.stats().entries, 2, "the cap holds");
    assert!(
        mcp::wait_gone(first_pid, Duration::from_secs(10)),
        "the LRU entry was closed"
    );

    let short = self::pool(PoolOptions {
        idle_ttl: Duration::from_millis(1),
        ..quiet()
    });
    let lease = short.acquire(&spec(&[]), None).await.expect("lease");
    let pid = lease.pid().expect("pid");
    short.sweep().await;
    assert_eq!(short.stats().entries, 1, "an entry in use is never closed");
    drop(lease);
    tokio::time::sleep(Duration::from_millis(5)).await;
    short.sweep().await;
    assert_eq!(short.stats().entries, 0);
    assert!(mcp::wait_gone(pid, Duration::from_secs(10)));
}

#[tokio::test]
async fn the_ping_sweep_evicts_an_upstream_that_died_while_idle() {
    let pool = pool(PoolOptions {
        ping_interval: Duration::from_millis(1),
        ping_timeout: Duration::from_secs(2),
        idle_ttl: Duration::from_secs(3600),
        ..PoolOptions::default()
    });
    let lease = pool.acquire(&spec(&[]), None).await.expect("lease");
    let pid = lease.pid().expect("pid");
    drop(lease);
    // SAFETY: kill(2) with a pid we spawned; no memory is involved.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
    assert!(mcp::wait_gone(pid, Duration::from_secs(10)));
    tokio::time::sleep(Duration::from_millis(5)).await;
    pool.sweep().await;
    assert_eq!(pool.stats().entries, 0, "the dead upstream was evicted");
    let again = pool.acquire(&spec(&[]), None).await.expect("respawned");
    assert_ne!(again.pid(), Some(pid));
}

/// `ping_timeout` (`[mcp_pool] ping_timeout_secs`) bounds the sweep's ping of
/// an idle upstream that is alive but answers nothing (stopped with SIGSTOP):
/// the sweep returns and evicts it instead of waiting on it. The outer timeout
/// is a hang guard far above the configured bound, not a timing assertion.
#[tokio::test]
async fn the_ping_timeout_bounds_the_sweep_of_an_idle_upstream_that_stopped_answering() {
    let pool = pool(PoolOptions {
        ping_interval: Duration::from_millis(1),
        ping_timeout: Duration::from_millis(200),
        idle_ttl: Duration::from_secs(3600),
        ..PoolOptions::default()
    });
    let lease = pool.acquire(&spec(&[]), None).await.expect("lease");
    let pid = lease.pid().expect("pid");
    drop(lease);
    // SAFETY: kill(2) with a pid we spawned; no memory is involved.
    unsafe {
        libc::kill(pid as i32, libc::SIGSTOP);
    }
    tokio::time::sleep(Duration::from_millis(5)).await;
    let swept = tokio::time::timeout(Duration::from_secs(60), pool.sweep()).await;
    // SAFETY: as above; the stopped child is let go and ended.
    unsafe {
        libc::kill(pid as i32, libc::SIGCONT);
        libc::kill(pid as i32, libc::SIGKILL);
    }
    assert!(swept.is_ok(), "the sweep waited on the silent upstream");
    assert_eq!(pool.stats().entries, 0, "the silent upstream was evicted");
}

#[tokio::test]
async fn start_up_failures_carry_stderr_and_hung_handshakes_time_out() {
    let pool = pool(quiet());
    match pool.acquire(&spec(&["--exit-at-start", "5"]), None).await {
        Err(McpClientError::Initialize { stderr_tail, .. }) => {
            assert!(stderr_tail.contains("failing at start-up"), "{stderr_tail}")
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(pool.stats().entries, 0, "failed bring-ups are not cached");
    match pool
        .acquire(
            &spec(&["--hang-initialize"]),
            Some(Duration::from_millis(500)),
        )
        .await
    {
        Err(McpClientError::Initialize {
            message,
            stderr_tail,
        }) => {
            assert!(message.contains("500"), "{message}");
            assert!(stderr_tail.contains("ignoring initialize"), "{stderr_tail}");
        }
        other => panic!("unexpected {other:?}"),
    }
    match pool
        .acquire(
            &ServerSpec::Stdio {
                command: "/nonexistent/mcp-server".into(),
                args: vec![],
                env: BTreeMap::new(),
                cwd: None,
            },
            None,
        )
        .await
    {
        Err(McpClientError::Spawn(e)) => assert!(e.program.contains("nonexistent")),
        other => panic!("unexpected {other:?}"),
    }
}
