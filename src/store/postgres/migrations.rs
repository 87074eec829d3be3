//! Versioned schema migrations of the PostgreSQL backend, recorded one row per
//! version in `schema_migrations`. Each is applied in its own transaction under
//! an advisory lock, so replicas starting together migrate once. A database
//! holding a version this build does not know is refused: an older replica
//! must not write to a newer schema. Every text column sorts bytewise
//! (`COLLATE "C"`), as SQLite's do, whatever the database's locale.

use super::{OpError, OpResult};
use crate::domain::error::HecateError;
use crate::domain::time::now_rfc3339;
use deadpool_postgres::GenericClient;
use serde::Serialize;

/// The advisory lock key migrations hold (any fixed number; "hecate" in ASCII).
const MIGRATION_LOCK: i64 = 0x6865_6361_7465;

/// One migration: its name and SQL (every `TEXT` is made `TEXT COLLATE "C"`).
pub struct Migration {
    /// Short description, shown by `hecate store status`.
    pub name: &'static str,
    /// The statements.
    pub sql: &'static str,
}

/// Each entry upgrades the schema from version `index` to `index + 1`.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        name: "sessions, messages, runs, approvals, audit, tasks, queue, chat sessions, traces",
        sql: r#"
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
        max_turns BIGINT,
        max_duration_ms BIGINT,
        idle_timeout_ms BIGINT,
        turns_used BIGINT NOT NULL DEFAULT 0,
        session_started_at TEXT,
        last_activity_at TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        owner_id TEXT,
        lease_expires_ms BIGINT
    );
    CREATE INDEX sessions_by_namespace ON sessions(namespace, updated_at);
    CREATE TABLE provider_calls (
        seq BIGSERIAL UNIQUE,
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        run_id TEXT,
        request_id TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_tokens BIGINT NOT NULL,
        completion_tokens BIGINT NOT NULL,
        total_tokens BIGINT NOT NULL,
        cost_micros_usd BIGINT,
        duration_ms BIGINT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX provider_calls_by_session ON provider_calls(session_id, created_at);
    CREATE TABLE messages (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        sequence BIGINT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        produced_by_call_id TEXT REFERENCES provider_calls(id) ON DELETE SET NULL,
        run_id TEXT,
        status TEXT NOT NULL,
        is_summary BOOLEAN NOT NULL DEFAULT FALSE,
        body_json TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (session_id, sequence)
    );
    CREATE INDEX messages_summaries ON messages(session_id, sequence) WHERE is_summary;
    CREATE INDEX messages_by_run ON messages(run_id);
    CREATE TABLE runs (
        seq BIGSERIAL UNIQUE,
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        status TEXT NOT NULL,
        error_type TEXT,
        error_message TEXT,
        request_id TEXT NOT NULL,
        trace_id TEXT,
        started_at TEXT NOT NULL,
        started_ms BIGINT NOT NULL,
        completed_at TEXT,
        duration_ms BIGINT
    );
    CREATE INDEX runs_by_session ON runs(session_id, started_ms);
    CREATE INDEX runs_by_status ON runs(status);
    CREATE TABLE run_events (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        sequence BIGINT NOT NULL,
        type TEXT NOT NULL,
        data_json TEXT NOT NULL,
        occurred_at TEXT NOT NULL,
        PRIMARY KEY (run_id, sequence)
    );
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
        id BIGSERIAL PRIMARY KEY,
        message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        path TEXT NOT NULL,
        data TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX artifacts_by_message ON message_artifacts(message_id);
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
        argument_bytes BIGINT NOT NULL,
        started_at TEXT NOT NULL,
        duration_ms BIGINT NOT NULL
    );
    CREATE INDEX mcp_calls_by_namespace ON mcp_calls(namespace, started_at);
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
        number BIGINT NOT NULL,
        status TEXT NOT NULL,
        error_type TEXT,
        error_message TEXT,
        resumed_from_run_id TEXT,
        workspace TEXT,
        total_cost_micros_usd BIGINT NOT NULL DEFAULT 0,
        prior_cost_micros_usd BIGINT NOT NULL DEFAULT 0,
        model TEXT,
        provider TEXT,
        cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        UNIQUE (task_id, number)
    );
    CREATE TABLE task_steps (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES task_runs(id) ON DELETE CASCADE,
        task_id TEXT NOT NULL,
        idx BIGINT NOT NULL,
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
        size_bytes BIGINT NOT NULL,
        truncated BOOLEAN NOT NULL,
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
        sequence BIGSERIAL PRIMARY KEY,
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
        priority BIGINT NOT NULL,
        enqueued_ms BIGINT NOT NULL,
        lease_owner TEXT,
        lease_expires_ms BIGINT,
        claims BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX task_queue_by_order ON task_queue(priority DESC, enqueued_ms);
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
        seq BIGSERIAL UNIQUE,
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
        request_id TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        cost_micros_usd BIGINT,
        prompt_tokens BIGINT NOT NULL,
        completion_tokens BIGINT NOT NULL,
        total_tokens BIGINT NOT NULL,
        outcome TEXT NOT NULL,
        duration_ms BIGINT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX chat_calls_by_session ON chat_session_provider_calls(session_id, created_at);
    CREATE TABLE chat_session_messages (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
        sequence BIGINT NOT NULL,
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
        prompt_tokens BIGINT NOT NULL,
        completion_tokens BIGINT NOT NULL,
        total_tokens BIGINT NOT NULL,
        cost_micros_usd BIGINT,
        duration_ms BIGINT NOT NULL,
        error_type TEXT,
        error_message TEXT,
        started_at TEXT NOT NULL
    );
    CREATE INDEX gateway_traces_by_time ON gateway_traces(namespace, started_at);
    CREATE INDEX gateway_traces_by_session ON gateway_traces(session_id, started_at);
    "#,
    },
    Migration {
        name: "client-hosted chats (flows): headers, messages, per-owner memory",
        sql: r#"
    CREATE TABLE flow_chats (
        namespace TEXT NOT NULL,
        id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        app_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        conversation TEXT NOT NULL,
        stage TEXT NOT NULL,
        ended BOOLEAN NOT NULL,
        on_track BOOLEAN NOT NULL,
        off_track_reason TEXT,
        route_json TEXT NOT NULL,
        version BIGINT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (namespace, id)
    );
    CREATE TABLE flow_chat_messages (
        namespace TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        sequence BIGINT NOT NULL,
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
    },
    Migration {
        name: "each session's working-memory strategy",
        sql: "ALTER TABLE sessions ADD COLUMN history_json TEXT;",
    },
    Migration {
        name: "each run's span id",
        sql: "ALTER TABLE runs ADD COLUMN span_id TEXT;",
    },
    Migration {
        name: "model capabilities, and the route of each gateway request",
        sql: r#"
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
    },
    Migration {
        name: "long-term recall: session memory settings and message vectors",
        sql: r#"
    ALTER TABLE sessions ADD COLUMN memory_json TEXT;
    CREATE TABLE memory_vectors (
        namespace TEXT NOT NULL,
        message_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        sequence BIGINT NOT NULL,
        role TEXT NOT NULL,
        text TEXT NOT NULL,
        model TEXT NOT NULL,
        dims BIGINT NOT NULL,
        embedding REAL[] NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (namespace, message_id)
    );
    CREATE INDEX memory_vectors_by_scope ON memory_vectors(namespace, user_id, model, session_id);
    CREATE INDEX memory_vectors_by_session ON memory_vectors(session_id);
    "#,
    },
    Migration {
        name: "provider cooldowns shared by every replica",
        sql: r#"
    CREATE TABLE provider_cooldowns (
        provider TEXT PRIMARY KEY,
        reason TEXT NOT NULL,
        until_ms BIGINT NOT NULL,
        owner TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    "#,
    },
    Migration {
        name: "provider calls by run, open runs by session (messages have had a run index since v1)",
        sql: r#"
    CREATE INDEX provider_calls_by_run ON provider_calls(run_id) WHERE run_id IS NOT NULL;
    CREATE INDEX runs_open_by_session ON runs(session_id)
        WHERE status IN ('running','awaiting_approval');
    "#,
    },
    Migration {
        name: "upstream MCP tool policies set at runtime; flow chats by agent",
        sql: r#"
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
    },
    Migration {
        name: "named API keys of a shared hub, one live key per name",
        sql: r#"
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
    },
    Migration {
        name: "who decided an approval and who made a grant",
        sql: r#"
    ALTER TABLE approvals ADD COLUMN resolved_by TEXT;
    ALTER TABLE grants ADD COLUMN created_by TEXT;
    "#,
    },
    Migration {
        name: "OAuth sign-ins of upstream MCP servers",
        sql: r#"
    CREATE TABLE mcp_oauth_tokens (
        server TEXT NOT NULL,
        issuer TEXT NOT NULL,
        client_id TEXT NOT NULL,
        credentials TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        refresh_owner TEXT,
        refresh_until_ms BIGINT,
        PRIMARY KEY (server, issuer)
    );
    "#,
    },
    Migration {
        name: "choices of sessions' options",
        sql: r#"
    CREATE TABLE session_choices (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        scope TEXT NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        value_json TEXT NOT NULL,
        position BIGINT NOT NULL,
        chosen_at TEXT NOT NULL,
        PRIMARY KEY (session_id, scope, kind, name)
    );
    "#,
    },
    Migration {
        name: "A2A contexts, tasks and push notification configs",
        sql: r#"
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
        terminal BOOLEAN NOT NULL,
        record_json TEXT NOT NULL,
        version BIGINT NOT NULL,
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
        position BIGINT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (namespace, task_id, config_id),
        FOREIGN KEY (namespace, task_id) REFERENCES a2a_tasks(namespace, id) ON DELETE CASCADE
    );
    CREATE INDEX a2a_contexts_by_session ON a2a_contexts (session_id);
    "#,
    },
    Migration {
        name: "no index of runs by status (the open runs have their own)",
        sql: r#"
    DROP INDEX IF EXISTS runs_by_status;
    "#,
    },
];

/// The schema version a fully migrated database has.
pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// One applied migration, as `schema_migrations` records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// Its version.
    pub version: i64,
    /// Its name.
    pub name: String,
    /// When it was applied (RFC 3339).
    pub applied_at: String,
}

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (\
     version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)";

/// The highest applied version (0 for an empty database).
pub(super) async fn current_version<C: GenericClient>(c: &C) -> OpResult<i64> {
    let exists: bool = c
        .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
        .await?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let v: Option<i64> = c
        .query_one("SELECT MAX(version) FROM schema_migrations", &[])
        .await?
        .get(0);
    Ok(v.unwrap_or(0))
}

/// The applied migrations, oldest first (none for an empty database).
pub(super) async fn applied<C: GenericClient>(c: &C) -> OpResult<Vec<Applied>> {
    if current_version(c).await? == 0 {
        return Ok(Vec::new());
    }
    let rows = c
        .query(
            "SELECT version, name, applied_at FROM schema_migrations ORDER BY version",
            &[],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Applied {
            version: r.get(0),
            name: r.get(1),
            applied_at: r.get(2),
        })
        .collect())
}

/// The refusal of a database migrated by a newer build.
fn too_new(version: i64) -> OpError {
    HecateError::store(format!(
        "the PostgreSQL store has schema version {version}, newer than this Hecate \
         knows ({}): a newer Hecate migrated it; upgrade this replica before starting it",
        latest_version()
    ))
    .with_detail("schema_version", version)
    .with_detail("known_version", latest_version())
    .into()
}

/// Applies every migration above the database's version, each in its own
/// transaction under the migration lock; answers the version reached.
pub(super) async fn migrate(c: &mut deadpool_postgres::Object) -> OpResult<i64> {
    loop {
        let tx = c.transaction().await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await?;
        tx.batch_execute(CREATE_TABLE).await?;
        let version = current_version(&tx).await?;
        if version > latest_version() {
            return Err(too_new(version));
        }
        let Some(m) = MIGRATIONS.get(version as usize) else {
            tx.commit().await?;
            return Ok(version);
        };
        tx.batch_execute(&m.sql.replace(" TEXT", " TEXT COLLATE \"C\""))
            .await?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
            &[&(version + 1), &m.name, &now_rfc3339()],
        )
        .await?;
        tx.commit().await?;
    }
}
