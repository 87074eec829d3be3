//! The PostgreSQL store's connection pool on a real server (a fresh database per
//! test): `[store] max_conns` and `max_idle` (and their `HECATE_STORE_*`
//! variables, which win) size it, `hecate store status` and `hecate doctor` show
//! it, a value out of range is refused naming the key; the pool never opens more
//! than `max_conns` and closes idle connections past `max_idle` by itself.

use crate::support::common::{Home, text};
use crate::support::postgres;
use hecate::store::postgres::{PoolSettings, PoolStatus};
use hecate::store::{PostgresStore, Store};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// A fresh database's URL (the server starts on first use, off the runtime).
async fn fresh_url() -> String {
    tokio::task::spawn_blocking(postgres::fresh_database_url)
        .await
        .expect("database")
}

/// Thirty-two store reads at once: more than one connection is needed.
async fn burst(store: &PostgresStore) {
    let reads = (0..32).map(|_| store.health());
    for r in futures::future::join_all(reads).await {
        r.expect("health");
    }
}

/// The pool's status once `done` holds, or its last status after five seconds.
async fn settle(store: &PostgresStore, done: impl Fn(&PoolStatus) -> bool) -> PoolStatus {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let s = store.pool_status();
        if done(&s) || Instant::now() > until {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_pool_stays_within_max_conns_and_closes_idle_connections_past_max_idle() {
    let url = fresh_url().await;
    let store = PostgresStore::connect_with(
        &url,
        PoolSettings {
            max_conns: 4,
            max_idle: 1,
        },
    )
    .await
    .expect("connects");
    burst(&store).await;
    let busy = store.pool_status();
    assert!(busy.open > 1 && busy.open <= 4, "{busy:?}");
    let calm = settle(&store, |s| s.idle <= 1).await;
    assert_eq!((calm.open, calm.idle), (1, 1), "{calm:?}");
    assert_eq!((calm.max_conns, calm.max_idle), (4, 1));
    // It still serves, opening connections again as needed.
    burst(&store).await;
    assert!(store.pool_status().open <= 4);

    // By default every connection may idle: the burst's connections stay open.
    let keeps = PostgresStore::connect(&url).await.expect("connects");
    burst(&keeps).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let kept = keeps.pool_status();
    assert!(kept.open > 1 && kept.idle == kept.open, "{kept:?}");
    assert_eq!((kept.max_conns, kept.max_idle), (16, 16));
}

#[tokio::test]
async fn store_status_and_doctor_show_the_pool_the_config_and_environment_name() {
    let url = fresh_url().await;
    let home = Home::empty();
    home.write_config(&format!(
        "[store]\nurl = \"{url}\"\nmax_conns = 5\nmax_idle = 2\n"
    ));
    let status = home.json(&["store", "status", "--format", "json"]);
    assert_eq!(
        status["data"]["pool"],
        json!({"max_conns": 5, "max_idle": 2})
    );
    let out = home.run(&["store", "status"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("pool:           at most 5 connections, 2 kept idle"),
        "{stdout}"
    );

    let mut env_home = Home::empty();
    env_home.write_config(&format!(
        "[store]\nurl = \"{url}\"\nmax_conns = 5\nmax_idle = 2\n"
    ));
    env_home.set("HECATE_STORE_MAX_CONNS", "3");
    env_home.set("HECATE_STORE_MAX_IDLE", "0");
    let status = env_home.json(&["store", "status", "--format", "json"]);
    assert_eq!(
        status["data"]["pool"],
        json!({"max_conns": 3, "max_idle": 0})
    );

    let out = home.run(&["doctor", "--timeout", "1", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor JSON ({e}): {:?}", text(&out)));
    let store = &doc["data"]["store"];
    assert_eq!(store["pool"]["max_conns"], 5, "{store}");
    assert_eq!(store["pool"]["max_idle"], 2, "{store}");
    let open = store["pool"]["open"].as_u64().expect("open");
    assert!((1..=5).contains(&open), "{store}");
    let line = doc["data"]["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "store")
        .expect("store line")
        .clone();
    assert_eq!(line["status"], "ok", "{line}");
    assert!(
        line["message"]
            .as_str()
            .is_some_and(|m| m.contains("pool of at most 5 connections (2 kept idle")),
        "{line}"
    );

    // SQLite has no such pool: nothing is shown.
    let sqlite = Home::empty().json(&["store", "status", "--format", "json"]);
    assert!(sqlite["data"].get("pool").is_none(), "{sqlite}");
}

#[tokio::test]
async fn a_pool_setting_out_of_range_is_refused_naming_the_key() {
    let url = fresh_url().await;
    for (config, env, named) in [
        (
            "max_conns = 0\n",
            None,
            "[store] max_conns = 0 is out of range",
        ),
        (
            "max_conns = 4\nmax_idle = 9\n",
            None,
            "[store] max_idle = 9 is more than max_conns (4)",
        ),
        (
            "",
            Some(("HECATE_STORE_MAX_CONNS", "lots")),
            "HECATE_STORE_MAX_CONNS=\"lots\" is not a whole number",
        ),
    ] {
        let mut home = Home::empty();
        home.write_config(&format!("[store]\nurl = \"{url}\"\n{config}"));
        if let Some((k, v)) = env {
            home.set(k, v);
        }
        let out = home.run(&["store", "status"]);
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "{named}: {stdout}");
        assert!(stderr.contains(named), "{named}: {stderr}");
        let out = home.run(&["doctor", "--timeout", "1"]);
        let (stdout, _) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{named}: {stdout}");
        assert!(stdout.contains(named), "{named}: {stdout}");
    }
}
