//! The stored OAuth sign-ins of upstream MCP servers on every backend: one row
//! per (server, issuer), the newest one loaded, the refresh lock held by one
//! owner at a time until it is released or expires, logout deleting every row
//! of a server; and two replicas on one PostgreSQL database, where a refresh
//! stored by one is what the other loads next and only one holds the lock.

use hecate::store::{McpTokenRecord, PostgresStore, SqliteStore, Store};
use std::sync::Arc;

fn record(server: &str, issuer: &str, credentials: &str, at: &str) -> McpTokenRecord {
    McpTokenRecord {
        server: server.into(),
        issuer: issuer.into(),
        client_id: "client-1".into(),
        credentials: credentials.into(),
        updated_at: at.into(),
    }
}

async fn contract(store: &dyn Store) {
    assert_eq!(store.load_mcp_token("gh").await.expect("load"), None);
    store
        .save_mcp_token(&record(
            "gh",
            "https://a",
            "{\"v\":1}",
            "2026-01-01T00:00:00Z",
        ))
        .await
        .expect("save");
    store
        .save_mcp_token(&record(
            "gh",
            "https://a",
            "{\"v\":2}",
            "2026-01-01T00:00:01Z",
        ))
        .await
        .expect("upsert");
    store
        .save_mcp_token(&record(
            "other",
            "https://a",
            "{\"v\":9}",
            "2026-01-01T00:00:05Z",
        ))
        .await
        .expect("another server");
    let got = store
        .load_mcp_token("gh")
        .await
        .expect("load")
        .expect("row");
    assert_eq!(got.credentials, "{\"v\":2}", "the upsert replaced the row");
    store
        .save_mcp_token(&record(
            "gh",
            "https://b",
            "{\"v\":3}",
            "2026-01-01T00:00:02Z",
        ))
        .await
        .expect("second issuer");
    let got = store
        .load_mcp_token("gh")
        .await
        .expect("load")
        .expect("row");
    assert_eq!(
        (got.issuer.as_str(), got.credentials.as_str()),
        ("https://b", "{\"v\":3}")
    );
    assert!(
        !format!("{got:?}").contains("v\\\":3"),
        "Debug hides the credentials"
    );

    assert!(
        store
            .lock_mcp_token_refresh("gh", "one", 1_000, 31_000)
            .await
            .expect("lock")
    );
    assert!(
        !store
            .lock_mcp_token_refresh("gh", "two", 2_000, 32_000)
            .await
            .expect("held")
    );
    assert!(
        store
            .lock_mcp_token_refresh("gh", "two", 40_000, 70_000)
            .await
            .expect("expired")
    );
    store
        .unlock_mcp_token_refresh("gh", "one")
        .await
        .expect("not the owner");
    assert!(
        !store
            .lock_mcp_token_refresh("gh", "one", 41_000, 71_000)
            .await
            .expect("still two's")
    );
    store
        .unlock_mcp_token_refresh("gh", "two")
        .await
        .expect("unlock");
    assert!(
        store
            .lock_mcp_token_refresh("gh", "one", 42_000, 72_000)
            .await
            .expect("free")
    );
    assert!(
        store
            .lock_mcp_token_refresh("nobody", "one", 0, 1)
            .await
            .expect("no rows"),
        "a server without a sign-in has nothing to guard"
    );

    assert_eq!(store.delete_mcp_tokens("gh").await.expect("delete"), 2);
    assert_eq!(store.load_mcp_token("gh").await.expect("load"), None);
    assert!(store.load_mcp_token("other").await.expect("load").is_some());
}

#[tokio::test]
async fn sign_ins_on_sqlite_file_and_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = SqliteStore::open(&dir.path().join("hecate.db")).expect("opens");
    contract(&file).await;
    contract(&SqliteStore::open_in_memory().expect("opens")).await;
}

#[tokio::test]
async fn sign_ins_on_postgres_are_shared_by_replicas() {
    let url = tokio::task::spawn_blocking(crate::support::postgres::fresh_database_url)
        .await
        .expect("database");
    let a: Arc<dyn Store> = Arc::new(PostgresStore::connect(&url).await.expect("replica a"));
    let b: Arc<dyn Store> = Arc::new(PostgresStore::connect(&url).await.expect("replica b"));
    contract(a.as_ref()).await;

    a.save_mcp_token(&record(
        "gh",
        "https://a",
        "{\"t\":\"old\"}",
        "2026-01-01T00:00:00Z",
    ))
    .await
    .expect("sign-in");
    assert!(
        a.lock_mcp_token_refresh("gh", "a", 0, i64::MAX)
            .await
            .expect("a refreshes")
    );
    assert!(
        !b.lock_mcp_token_refresh("gh", "b", 1, i64::MAX)
            .await
            .expect("b waits"),
        "one replica refreshes at a time"
    );
    a.save_mcp_token(&record(
        "gh",
        "https://a",
        "{\"t\":\"new\"}",
        "2026-01-01T00:01:00Z",
    ))
    .await
    .expect("refreshed");
    a.unlock_mcp_token_refresh("gh", "a").await.expect("unlock");
    let seen = b.load_mcp_token("gh").await.expect("load").expect("row");
    assert_eq!(seen.credentials, "{\"t\":\"new\"}", "b loads a's refresh");
    assert!(
        b.lock_mcp_token_refresh("gh", "b", 2, 3)
            .await
            .expect("free again")
    );
}
