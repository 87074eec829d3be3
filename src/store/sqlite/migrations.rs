//! Versioned schema migrations, applied in order and recorded in `user_version`.

/// Each entry upgrades the schema from version `index` to `index + 1`.
pub const MIGRATIONS: &[&str] = &[
    // v1: sessions with their two streams, messages and provider calls.
    r#"
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL,
        title TEXT NOT NULL,
        runtime_kind TEXT NOT NULL,
        provider TEXT,
        model TEXT,
        adapter_id TEXT,
        workspace TEXT,
        system_prompt TEXT,
        status TEXT NOT NULL,
        native_session_id TEXT,
        max_turns INTEGER,
        max_duration_ms INTEGER,
        idle_timeout_ms INTEGER,
        turns_used INTEGER NOT NULL DEFAULT 0,
        session_started_at TEXT,
        last_activity_at TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX sessions_by_namespace ON sessions(namespace, updated_at);
    CREATE TABLE provider_calls (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        run_id TEXT,
        request_id TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        total_tokens INTEGER NOT NULL,
        cost_micros_usd INTEGER,
        duration_ms INTEGER NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX provider_calls_by_session ON provider_calls(session_id, created_at);
    CREATE TABLE messages (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        sequence INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        produced_by_call_id TEXT REFERENCES provider_calls(id) ON DELETE SET NULL,
        run_id TEXT,
        status TEXT NOT NULL,
        is_summary INTEGER NOT NULL DEFAULT 0,
        body_json TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (session_id, sequence)
    );
    "#,
    // v2: runs, their event logs, and owner leases on sessions.
    r#"
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        status TEXT NOT NULL,
        error_type TEXT,
        error_message TEXT,
        request_id TEXT NOT NULL,
        trace_id TEXT,
        started_at TEXT NOT NULL,
        started_ms INTEGER NOT NULL,
        completed_at TEXT,
        duration_ms INTEGER
    );
    CREATE INDEX runs_by_session ON runs(session_id, started_ms);
    CREATE INDEX runs_by_status ON runs(status);
    CREATE TABLE run_events (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        sequence INTEGER NOT NULL,
        type TEXT NOT NULL,
        data_json TEXT NOT NULL,
        occurred_at TEXT NOT NULL,
        PRIMARY KEY (run_id, sequence)
    );
    ALTER TABLE sessions ADD COLUMN owner_id TEXT;
    ALTER TABLE sessions ADD COLUMN lease_expires_ms INTEGER;
    CREATE INDEX messages_summaries ON messages(session_id, sequence) WHERE is_summary = 1;
    "#,
    // v3: approvals, grants and message artifacts (diffs).
    r#"
    CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        run_id TEXT,
        status TEXT NOT NULL,
        tool_kind TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        options_json TEXT NOT NULL,
        decision TEXT,
        scope TEXT,
        path TEXT,
        selected_option TEXT,
        created_at TEXT NOT NULL,
        expires_at TEXT,
        resolved_at TEXT
    );
    CREATE INDEX approvals_by_session ON approvals(session_id, status);
    CREATE TABLE grants (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL,
        scope TEXT NOT NULL,
        session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE,
        adapter_id TEXT,
        workspace TEXT,
        tool_kind TEXT NOT NULL,
        decision TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT
    );
    CREATE INDEX grants_by_namespace ON grants(namespace);
    CREATE TABLE message_artifacts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        path TEXT NOT NULL,
        data TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX artifacts_by_message ON message_artifacts(message_id);
    "#,
    // v4: the audit log of upstream MCP tool calls proxied by the MCP bridge.
    r#"
    CREATE TABLE mcp_calls (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL,
        server TEXT NOT NULL,
        tool TEXT NOT NULL,
        exposed_name TEXT NOT NULL,
        client TEXT NOT NULL,
        policy TEXT NOT NULL,
        decision TEXT NOT NULL,
        approval_id TEXT,
        outcome TEXT NOT NULL,
        error_type TEXT,
        error_message TEXT,
        argument_keys_json TEXT NOT NULL,
        argument_bytes INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        duration_ms INTEGER NOT NULL
    );
    CREATE INDEX mcp_calls_by_namespace ON mcp_calls(namespace, started_at);
    "#,
    // v5: the durable task runtime: tasks, runs, steps, artifacts, approvals, the
    // process-wide event log (its sequence is the feeds' cursor) and the queue.
    r#"
    CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL,
        spec_json TEXT NOT NULL,
        latest_run_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX tasks_by_namespace ON tasks(namespace, created_at);
    CREATE TABLE task_runs (
        id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        number INTEGER NOT NULL,
        status TEXT NOT NULL,
        error_type TEXT,
        error_message TEXT,
        resumed_from_run_id TEXT,
        workspace TEXT,
        total_cost_micros_usd INTEGER NOT NULL DEFAULT 0,
        prior_cost_micros_usd INTEGER NOT NULL DEFAULT 0,
        model TEXT,
        provider TEXT,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        UNIQUE (task_id, number)
    );
    CREATE TABLE task_steps (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES task_runs(id) ON DELETE CASCADE,
        task_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        input_json TEXT NOT NULL,
        exit_code INTEGER,
        error_type TEXT,
        error_message TEXT,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        UNIQUE (run_id, idx)
    );
    CREATE TABLE task_artifacts (
        id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL,
        run_id TEXT NOT NULL REFERENCES task_runs(id) ON DELETE CASCADE,
        step_id TEXT,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        content TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        truncated INTEGER NOT NULL,
        status TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX task_artifacts_by_run ON task_artifacts(run_id, created_at);
    CREATE INDEX task_artifacts_by_task ON task_artifacts(task_id, created_at);
    CREATE TABLE task_approvals (
        id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL,
        run_id TEXT NOT NULL REFERENCES task_runs(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        reason TEXT NOT NULL,
        note TEXT,
        created_at TEXT NOT NULL,
        resolved_at TEXT
    );
    CREATE INDEX task_approvals_by_task ON task_approvals(task_id, created_at);
    CREATE TABLE task_events (
        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        type TEXT NOT NULL,
        data_json TEXT NOT NULL,
        occurred_at TEXT NOT NULL
    );
    CREATE INDEX task_events_by_run ON task_events(run_id, sequence);
    CREATE INDEX task_events_by_task ON task_events(task_id, sequence);
    CREATE TABLE task_queue (
        run_id TEXT PRIMARY KEY REFERENCES task_runs(id) ON DELETE CASCADE,
        task_id TEXT NOT NULL,
        priority INTEGER NOT NULL,
        enqueued_ms INTEGER NOT NULL,
        lease_owner TEXT,
        lease_expires_ms INTEGER,
        claims INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX task_queue_by_order ON task_queue(priority DESC, enqueued_ms);
    "#,
    // v6: gateway chat sessions (messages and provider calls, linked by
    // produced_by_call_id) and the per-request gateway traces.
    r#"
    CREATE TABLE chat_sessions (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL,
        title TEXT NOT NULL,
        system_prompt TEXT NOT NULL,
        user_name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX chat_sessions_by_namespace ON chat_sessions(namespace, updated_at);
    CREATE TABLE chat_session_provider_calls (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
        request_id TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        cost_micros_usd INTEGER,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        total_tokens INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        duration_ms INTEGER NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX chat_calls_by_session ON chat_session_provider_calls(session_id, created_at);
    CREATE TABLE chat_session_messages (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
        sequence INTEGER NOT NULL,
        produced_by_call_id TEXT
            REFERENCES chat_session_provider_calls(id) ON DELETE SET NULL,
        message_json TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (session_id, sequence)
    );
    CREATE TABLE gateway_traces (
        request_id TEXT PRIMARY KEY,
        trace_id TEXT NOT NULL,
        namespace TEXT NOT NULL,
        session_id TEXT,
        client_format TEXT NOT NULL,
        requested_model TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        status TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        total_tokens INTEGER NOT NULL,
        cost_micros_usd INTEGER,
        duration_ms INTEGER NOT NULL,
        error_type TEXT,
        error_message TEXT,
        started_at TEXT NOT NULL
    );
    CREATE INDEX gateway_traces_by_time ON gateway_traces(namespace, started_at);
    CREATE INDEX gateway_traces_by_session ON gateway_traces(session_id, started_at);
    "#,
    // v7: client-hosted chats (flows): headers, gap-free messages and the
    // per-owner memory of extracted data, every key led by the namespace.
    r#"
    CREATE TABLE flow_chats (
        namespace TEXT NOT NULL,
        id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        app_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        conversation TEXT NOT NULL,
        stage TEXT NOT NULL,
        ended INTEGER NOT NULL,
        on_track INTEGER NOT NULL,
        off_track_reason TEXT,
        route_json TEXT NOT NULL,
        version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (namespace, id)
    );
    CREATE TABLE flow_chat_messages (
        namespace TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        stage TEXT NOT NULL,
        data_json TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (namespace, chat_id, sequence),
        FOREIGN KEY (namespace, chat_id) REFERENCES flow_chats(namespace, id) ON DELETE CASCADE
    );
    CREATE TABLE flow_memory (
        namespace TEXT NOT NULL,
        app_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        field TEXT NOT NULL,
        value_json TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (namespace, app_id, user_id, agent_id, field)
    );
    "#,
    // v8: each session's working-memory strategy as JSON (NULL: the config's).
    r#"
    ALTER TABLE sessions ADD COLUMN history_json TEXT;
    "#,
    // v9: the id of each run's own span (`agent_chat.run`) in its trace.
    r#"
    ALTER TABLE runs ADD COLUMN span_id TEXT;
    "#,
    // v10: model capabilities (operator overrides and probe results) and the
    // route each gateway request took (its reason and candidates).
    r#"
    CREATE TABLE model_capabilities (
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        source TEXT NOT NULL,
        declared_json TEXT NOT NULL,
        note TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (provider, model, source)
    );
    ALTER TABLE gateway_traces ADD COLUMN route_reason TEXT NOT NULL DEFAULT '';
    ALTER TABLE gateway_traces ADD COLUMN route_candidates_json TEXT NOT NULL DEFAULT '[]';
    "#,
    // v11: long-term recall: each session's memory user and recall count as JSON,
    // and one vector (little-endian f32, read by sqlite-vec) per indexed message,
    // keyed by the namespace first and searched per (namespace, user, model).
    r#"
    ALTER TABLE sessions ADD COLUMN memory_json TEXT;
    CREATE TABLE memory_vectors (
        namespace TEXT NOT NULL,
        message_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        sequence INTEGER NOT NULL,
        role TEXT NOT NULL,
        text TEXT NOT NULL,
        model TEXT NOT NULL,
        dims INTEGER NOT NULL,
        embedding BLOB NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (namespace, message_id)
    );
    CREATE INDEX memory_vectors_by_scope ON memory_vectors(namespace, user_id, model, session_id);
    CREATE INDEX memory_vectors_by_session ON memory_vectors(session_id);
    "#,
    // v12: provider cooldowns every process on the store shares (one row per
    // provider, until when the gateway skips it).
    r#"
    CREATE TABLE provider_cooldowns (
        provider TEXT PRIMARY KEY,
        reason TEXT NOT NULL,
        until_ms INTEGER NOT NULL,
        owner TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    "#,
    // v13: a turn's messages and provider calls found by its run id, so a turn's
    // answer and a page of a transcript read only their own rows; a session's open
    // runs found without reading its ended ones (every turn checks).
    r#"
    CREATE INDEX messages_by_run ON messages(run_id) WHERE run_id IS NOT NULL;
    CREATE INDEX provider_calls_by_run ON provider_calls(run_id) WHERE run_id IS NOT NULL;
    CREATE INDEX runs_open_by_session ON runs(session_id)
        WHERE status IN ('running','awaiting_approval');
    "#,
    // v14: upstream MCP tool policies an operator set at runtime, over the
    // config's, per namespace; an agent's client-hosted chats, newest first.
    r#"
    CREATE TABLE mcp_tool_policies (
        namespace TEXT NOT NULL,
        server TEXT NOT NULL,
        tool TEXT NOT NULL,
        policy TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (namespace, server, tool)
    );
    CREATE INDEX flow_chats_by_agent ON flow_chats(namespace, agent_id, updated_at);
    "#,
    // v15: named API keys of a shared hub (the SHA-256 of each token, never the
    // token), one live key per name.
    r#"
    CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        scope TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT,
        revoked_at TEXT,
        last_used_at TEXT,
        token_hash TEXT NOT NULL
    );
    CREATE UNIQUE INDEX api_keys_live_name ON api_keys(name) WHERE revoked_at IS NULL;
    "#,
    // v16: who decided an approval and who made a grant (`admin`, `key:NAME`, `cli`).
    r#"
    ALTER TABLE approvals ADD COLUMN resolved_by TEXT;
    ALTER TABLE grants ADD COLUMN created_by TEXT;
    "#,
    // v17: OAuth sign-ins of upstream MCP servers, per (server, issuer), with a
    // refresh lock so one replica at a time spends a rotating refresh token.
    r#"
    CREATE TABLE mcp_oauth_tokens (
        server TEXT NOT NULL,
        issuer TEXT NOT NULL,
        client_id TEXT NOT NULL,
        credentials TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        refresh_owner TEXT,
        refresh_until_ms INTEGER,
        PRIMARY KEY (server, issuer)
    );
    "#,
    // v18: what editors chose for a session's options, per scope (`hecate`,
    // or `agent:ID` for an external agent's), applied again after a restart.
    r#"
    CREATE TABLE session_choices (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        scope TEXT NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        value_json TEXT NOT NULL,
        position INTEGER NOT NULL,
        chosen_at TEXT NOT NULL,
        PRIMARY KEY (session_id, scope, kind, name)
    );
    "#,
    // v19: what the A2A server keeps across restarts and replicas: each
    // (agent, contextId) conversation's session, the tasks (a header to filter
    // on, the record as JSON, a version so racing writes keep the newest) and
    // their push notification configs.
    r#"
    CREATE TABLE a2a_contexts (
        namespace TEXT NOT NULL,
        agent TEXT NOT NULL,
        context_id TEXT NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        PRIMARY KEY (namespace, agent, context_id)
    );
    CREATE TABLE a2a_tasks (
        namespace TEXT NOT NULL,
        id TEXT NOT NULL,
        agent TEXT NOT NULL,
        context_id TEXT NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        state TEXT NOT NULL,
        terminal INTEGER NOT NULL,
        record_json TEXT NOT NULL,
        version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (namespace, id)
    );
    CREATE INDEX a2a_tasks_by_agent ON a2a_tasks (namespace, agent, created_at, id);
    CREATE INDEX a2a_tasks_by_session ON a2a_tasks (session_id);
    CREATE TABLE a2a_push_configs (
        namespace TEXT NOT NULL,
        task_id TEXT NOT NULL,
        config_id TEXT NOT NULL,
        config_json TEXT NOT NULL,
        position INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (namespace, task_id, config_id),
        FOREIGN KEY (namespace, task_id) REFERENCES a2a_tasks(namespace, id) ON DELETE CASCADE
    );
    CREATE INDEX a2a_contexts_by_session ON a2a_contexts (session_id);
    "#,
    // v20: no query reads runs by status alone (the open runs are found through
    // `runs_open_by_session`, v13), and every turn paid for keeping this index:
    // an entry added when its run starts and moved when it ends.
    r#"
    DROP INDEX IF EXISTS runs_by_status;
    "#,
];

/// The schema version a fully migrated database has.
pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Applies every migration above the database's current version, each in its own
/// transaction; returns the version reached.
pub fn migrate(conn: &mut rusqlite::Connection) -> rusqlite::Result<i64> {
    migrate_to(conn, latest_version())
}

/// Applies migrations up to `target` (used by upgrade tests to build old schemas).
pub fn migrate_to(conn: &mut rusqlite::Connection, target: i64) -> rusqlite::Result<i64> {
    let mut version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    while version < target {
        let Some(sql) = MIGRATIONS.get(version as usize) else {
            break;
        };
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Another process may have migrated while we waited for the write lock.
        let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if current == version {
            tx.execute_batch(sql)?;
            tx.pragma_update(None, "user_version", version + 1)?;
        }
        tx.commit()?;
        version = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    }
    Ok(version)
}

/// The schema version of the database file at `path` without migrating it:
/// `None` when there is no file yet.
pub fn file_version(path: &std::path::Path) -> rusqlite::Result<Option<i64>> {
    if !path.exists() {
        return Ok(None);
    }
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
        .map(Some)
}
