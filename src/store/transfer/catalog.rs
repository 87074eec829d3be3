//! The tables `hecate store copy` moves, in dependency order (a table after every
//! table its foreign keys name), with their columns as both backends declare
//! them and the order their rows are read in. Unit tests hold this list to the
//! SQLite migrations; an e2e test holds it to the PostgreSQL ones.

/// How a column's values are typed on PostgreSQL (SQLite stores every integer,
/// flag included, as `INTEGER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `TEXT`.
    Text,
    /// `BIGINT` (`INTEGER` on SQLite).
    Int,
    /// `INTEGER`, 32 bits, on PostgreSQL.
    Int4,
    /// `BOOLEAN` on PostgreSQL, 0 or 1 on SQLite.
    Bool,
    /// A vector: `REAL[]` on PostgreSQL, a BLOB of little-endian `f32` on SQLite.
    Vector,
}

/// One column of a copied table.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Its name.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
}

/// One copied table.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    /// Its name.
    pub name: &'static str,
    /// Its columns in declaration order.
    pub columns: &'static [Column],
    /// The key its rows are read and checksummed in: the primary key, or `None`
    /// for the tables whose insertion order breaks ties in reads (SQLite's
    /// `rowid`, PostgreSQL's `seq`), read in that order so the target, which
    /// numbers them afresh as they arrive, keeps it.
    pub key: Option<&'static [&'static str]>,
    /// The column a database sequence numbers (`AUTOINCREMENT` / `BIGSERIAL`),
    /// moved past the copied values on the target.
    pub serial: Option<&'static str>,
}

impl Table {
    /// The `ORDER BY` list on SQLite.
    pub fn sqlite_order(&self) -> String {
        self.key
            .map_or_else(|| "rowid".to_string(), |k| k.join(", "))
    }

    /// The `ORDER BY` list on PostgreSQL.
    pub fn postgres_order(&self) -> String {
        self.key.map_or_else(|| "seq".to_string(), |k| k.join(", "))
    }

    /// The column names, comma separated.
    pub fn column_list(&self) -> String {
        self.columns
            .iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

const fn t(name: &'static str) -> Column {
    Column {
        name,
        kind: Kind::Text,
    }
}

const fn i(name: &'static str) -> Column {
    Column {
        name,
        kind: Kind::Int,
    }
}

const fn b(name: &'static str) -> Column {
    Column {
        name,
        kind: Kind::Bool,
    }
}

const fn v(name: &'static str) -> Column {
    Column {
        name,
        kind: Kind::Vector,
    }
}

const ID: Option<&[&str]> = Some(&["id"]);

/// Every table of the schema, parents first.
pub const TABLES: &[Table] = &[
    Table {
        name: "sessions",
        columns: &[
            t("id"),
            t("namespace"),
            t("title"),
            t("runtime_kind"),
            t("provider"),
            t("model"),
            t("adapter_id"),
            t("workspace"),
            t("system_prompt"),
            t("status"),
            t("native_session_id"),
            i("max_turns"),
            i("max_duration_ms"),
            i("idle_timeout_ms"),
            i("turns_used"),
            t("session_started_at"),
            t("last_activity_at"),
            t("created_at"),
            t("updated_at"),
            t("owner_id"),
            i("lease_expires_ms"),
            t("history_json"),
            t("memory_json"),
        ],
        key: ID,
        serial: None,
    },
    Table {
        name: "provider_calls",
        columns: &[
            t("id"),
            t("session_id"),
            t("run_id"),
            t("request_id"),
            t("provider"),
            t("model"),
            i("prompt_tokens"),
            i("completion_tokens"),
            i("total_tokens"),
            i("cost_micros_usd"),
            i("duration_ms"),
            t("created_at"),
        ],
        key: None,
        serial: None,
    },
    Table {
        name: "messages",
        columns: &[
            t("id"),
            t("session_id"),
            i("sequence"),
            t("role"),
            t("content"),
            t("produced_by_call_id"),
            t("run_id"),
            t("status"),
            b("is_summary"),
            t("body_json"),
            t("created_at"),
        ],
        key: ID,
        serial: None,
    },
    Table {
        name: "runs",
        columns: &[
            t("id"),
            t("session_id"),
            t("status"),
            t("error_type"),
            t("error_message"),
            t("request_id"),
            t("trace_id"),
            t("started_at"),
            i("started_ms"),
            t("completed_at"),
            i("duration_ms"),
            t("span_id"),
        ],
        key: None,
        serial: None,
    },
    Table {
        name: "run_events",
        columns: &[
            t("run_id"),
            i("sequence"),
            t("type"),
            t("data_json"),
            t("occurred_at"),
        ],
        key: Some(&["run_id", "sequence"]),
        serial: None,
    },
    Table {
        name: "approvals",
        columns: &[
            t("id"),
            t("session_id"),
            t("run_id"),
            t("status"),
            t("tool_kind"),
            t("tool_name"),
            t("options_json"),
            t("decision"),
            t("scope"),
            t("path"),
            t("selected_option"),
            t("created_at"),
            t("expires_at"),
            t("resolved_at"),
            t("resolved_by"),
        ],
        key: ID,
        serial: None,
    },
    Table {
        name: "grants",
        columns: &[
            t("id"),
            t("namespace"),
            t("scope"),
            t("session_id"),
            t("adapter_id"),
            t("workspace"),
            t("tool_kind"),
            t("decision"),
            t("created_at"),
            t("expires_at"),
            t("created_by"),
        ],
        key: ID,
        serial: None,
    },
    Table {
        name: "message_artifacts",
        columns: &[
            i("id"),
            t("message_id"),
            t("kind"),
            t("path"),
            t("data"),
            t("created_at"),
        ],
        key: ID,
        serial: Some("id"),
    },
    Table {
        name: "mcp_calls",
        columns: &[
            t("id"),
            t("namespace"),
            t("server"),
            t("tool"),
            t("exposed_name"),
            t("client"),
            t("policy"),
            t("decision"),
            t("approval_id"),
            t("outcome"),
            t("error_type"),
            t("error_message"),
            t("argument_keys_json"),
            i("argument_bytes"),
            t("started_at"),
            i("duration_ms"),
        ],
        key: ID,
        serial: None,
    },
    Table {
        name: "tasks",
        columns: &[
            t("id"),
            t("namespace"),
            t("spec_json"),
            t("latest_run_id"),
            t("created_at"),
            t("updated_at"),
        ],
        key: ID,
        serial: None,
    },
    Table {
        name: "task_runs",
        columns: &[
            t("id"),
            t("task_id"),
            i("number"),
            t("status"),
            t("error_type"),
            t("error_message"),
            t("resumed_from_run_id"),
            t("workspace"),
            i("total_cost_micros_usd"),
            i("prior_cost_micros_usd"),
            t("model"),
            t("provider"),
            b("cancel_requested"),
            t("created_at"),
            t("started_at"),
            t("finished_at"),
        ],
        key: ID,
        serial: None,
    },
    Table {
        name: "task_steps",
        columns: &[
            t("id"),
            t("run_id"),
            t("task_id"),
            i("idx"),
            t("kind"),
            t("status"),
            t("input_json"),
            Column {
                name: "exit_code",
                kind: Kind::Int4,
            },
            t("error_type"),
            t("error_message"),
            t("started_at"),
            t("finished_at"),
        ],
        key: ID,
        serial: None,
    },
    Table {
        name: "task_artifacts",
        columns: &[
            t("id"),
            t("task_id"),
            t("run_id"),
            t("step_id"),
            t("kind"),
            t("name"),
            t("content"),
            i("size_bytes"),
            b("truncated"),
            t("status"),
            t("created_at"),
        ],
        key: ID,
        serial: None,
    },
    Table {
        name: "task_approvals",
        columns: &[
            t("id"),
            t("task_id"),
            t("run_id"),
            t("kind"),
            t("status"),
            t("reason"),
            t("note"),
            t("created_at"),
            t("resolved_at"),
        ],
        key: ID,
        serial: None,
    },
    Table {
        name: "task_events",
        columns: &[
            i("sequence"),
            t("task_id"),
            t("run_id"),
            t("type"),
            t("data_json"),
            t("occurred_at"),
        ],
        key: Some(&["sequence"]),
        serial: Some("sequence"),
    },
    Table {
        name: "task_queue",
        columns: &[
            t("run_id"),
            t("task_id"),
            i("priority"),
            i("enqueued_ms"),
            t("lease_owner"),
            i("lease_expires_ms"),
            i("claims"),
        ],
        key: Some(&["run_id"]),
        serial: None,
    },
    Table {
        name: "chat_sessions",
        columns: &[
            t("id"),
            t("namespace"),
            t("title"),
            t("system_prompt"),
            t("user_name"),
            t("created_at"),
            t("updated_at"),
        ],
        key: ID,
        serial: None,
    },
    Table {
        name: "chat_session_provider_calls",
        columns: &[
            t("id"),
            t("session_id"),
            t("request_id"),
            t("provider"),
            t("model"),
            i("cost_micros_usd"),
            i("prompt_tokens"),
            i("completion_tokens"),
            i("total_tokens"),
            t("outcome"),
            i("duration_ms"),
            t("created_at"),
        ],
        key: None,
        serial: None,
    },
    Table {
        name: "chat_session_messages",
        columns: &[
            t("id"),
            t("session_id"),
            i("sequence"),
            t("produced_by_call_id"),
            t("message_json"),
            t("created_at"),
        ],
        key: ID,
        serial: None,
    },
    Table {
        name: "gateway_traces",
        columns: &[
            t("request_id"),
            t("trace_id"),
            t("namespace"),
            t("session_id"),
            t("client_format"),
            t("requested_model"),
            t("provider"),
            t("model"),
            t("status"),
            i("prompt_tokens"),
            i("completion_tokens"),
            i("total_tokens"),
            i("cost_micros_usd"),
            i("duration_ms"),
            t("error_type"),
            t("error_message"),
            t("started_at"),
            t("route_reason"),
            t("route_candidates_json"),
        ],
        key: Some(&["request_id"]),
        serial: None,
    },
    Table {
        name: "flow_chats",
        columns: &[
            t("namespace"),
            t("id"),
            t("agent_id"),
            t("app_id"),
            t("user_id"),
            t("conversation"),
            t("stage"),
            b("ended"),
            b("on_track"),
            t("off_track_reason"),
            t("route_json"),
            i("version"),
            t("created_at"),
            t("updated_at"),
        ],
        key: Some(&["namespace", "id"]),
        serial: None,
    },
    Table {
        name: "flow_chat_messages",
        columns: &[
            t("namespace"),
            t("chat_id"),
            i("sequence"),
            t("role"),
            t("content"),
            t("stage"),
            t("data_json"),
            t("created_at"),
        ],
        key: Some(&["namespace", "chat_id", "sequence"]),
        serial: None,
    },
    Table {
        name: "flow_memory",
        columns: &[
            t("namespace"),
            t("app_id"),
            t("user_id"),
            t("agent_id"),
            t("field"),
            t("value_json"),
            t("chat_id"),
            t("updated_at"),
        ],
        key: Some(&["namespace", "app_id", "user_id", "agent_id", "field"]),
        serial: None,
    },
    Table {
        name: "model_capabilities",
        columns: &[
            t("provider"),
            t("model"),
            t("source"),
            t("declared_json"),
            t("note"),
            t("updated_at"),
        ],
        key: Some(&["provider", "model", "source"]),
        serial: None,
    },
    Table {
        name: "memory_vectors",
        columns: &[
            t("namespace"),
            t("message_id"),
            t("user_id"),
            t("session_id"),
            i("sequence"),
            t("role"),
            t("text"),
            t("model"),
            i("dims"),
            v("embedding"),
            t("created_at"),
        ],
        key: Some(&["namespace", "message_id"]),
        serial: None,
    },
    Table {
        name: "provider_cooldowns",
        columns: &[
            t("provider"),
            t("reason"),
            i("until_ms"),
            t("owner"),
            t("updated_at"),
        ],
        key: Some(&["provider"]),
        serial: None,
    },
    Table {
        name: "mcp_tool_policies",
        columns: &[
            t("namespace"),
            t("server"),
            t("tool"),
            t("policy"),
            t("updated_at"),
        ],
        key: Some(&["namespace", "server", "tool"]),
        serial: None,
    },
    Table {
        name: "api_keys",
        columns: &[
            t("id"),
            t("name"),
            t("scope"),
            t("created_by"),
            t("created_at"),
            t("expires_at"),
            t("revoked_at"),
            t("last_used_at"),
            t("token_hash"),
        ],
        key: Some(&["id"]),
        serial: None,
    },
    Table {
        name: "mcp_oauth_tokens",
        columns: &[
            t("server"),
            t("issuer"),
            t("client_id"),
            t("credentials"),
            t("updated_at"),
            t("refresh_owner"),
            i("refresh_until_ms"),
        ],
        key: Some(&["server", "issuer"]),
        serial: None,
    },
    Table {
        name: "session_choices",
        columns: &[
            t("session_id"),
            t("scope"),
            t("kind"),
            t("name"),
            t("value_json"),
            i("position"),
            t("chosen_at"),
        ],
        key: Some(&["session_id", "scope", "kind", "name"]),
        serial: None,
    },
    Table {
        name: "a2a_contexts",
        columns: &[
            t("namespace"),
            t("agent"),
            t("context_id"),
            t("session_id"),
            t("created_at"),
        ],
        key: Some(&["namespace", "agent", "context_id"]),
        serial: None,
    },
    Table {
        name: "a2a_tasks",
        columns: &[
            t("namespace"),
            t("id"),
            t("agent"),
            t("context_id"),
            t("session_id"),
            t("state"),
            b("terminal"),
            t("record_json"),
            i("version"),
            t("created_at"),
            t("updated_at"),
        ],
        key: Some(&["namespace", "id"]),
        serial: None,
    },
    Table {
        name: "a2a_push_configs",
        columns: &[
            t("namespace"),
            t("task_id"),
            t("config_id"),
            t("config_json"),
            i("position"),
            t("created_at"),
        ],
        key: Some(&["namespace", "task_id", "config_id"]),
        serial: None,
    },
];

#[cfg(test)]
mod tests;
