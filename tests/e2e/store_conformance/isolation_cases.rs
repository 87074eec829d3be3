//! Namespace isolation, table by table: one namespace is given rows in every
//! table of the schema (the catalog `hecate store copy` moves, so a new table
//! fails this case until it is covered), then every read the store offers is
//! made from another namespace and finds nothing. Tables whose rows are only
//! reached through a parent (a session's messages, a task's runs) are checked
//! through that parent's namespace gate, which every engine read goes through
//! first. The task queue is process-wide by design (any worker claims any
//! namespace's runs, which then run in their task's namespace); its case checks
//! that a claim answers the run's own task and namespace. Model capabilities and
//! provider cooldowns are process-wide too: they describe the configured
//! providers, which every namespace of a process shares, so the case only gives
//! their tables a row; so are API keys, whose namespaces are part of their scope,
//! and the OAuth sign-ins of upstream MCP servers. The choices of a session's
//! options are reached through their session, like its messages. The A2A
//! server's conversations, tasks and push notification configs are keyed by
//! namespace.

use super::{Backend, backends};
use hecate::domain::ErrorType;
use hecate::domain::approval::Grant;
use hecate::domain::capability::{CapabilityDeclaration, CapabilityRecord, CapabilitySource};
use hecate::domain::flow::{FlowChat, FlowChatWrite, FlowRole, MemoryOwner, NewFlowChatMessage};
use hecate::domain::gateway_conversation::{
    GatewayCall, GatewayTrace, RecordedExchange, TraceFilter,
};
use hecate::domain::ids::{
    CallId, GrantId, MessageId, RunId, SessionId, TaskApprovalId, TaskArtifactId, TaskId,
    TaskRunId, TaskStepId,
};
use hecate::domain::message::{NewMessage, Role, RuntimeSnapshot};
use hecate::domain::provider_call::{ProviderCall, Usage};
use hecate::domain::recall::{MemoryEntry, MemoryVector, RecallQuery};
use hecate::domain::run::{Run, RunStatus};
use hecate::domain::session::{RuntimeKind, Session};
use hecate::domain::task::{
    ExecutionKind, Task, TaskApproval, TaskApprovalKind, TaskApprovalStatus, TaskArtifact,
    TaskEventFilter, TaskListFilter, TaskRun, TaskRunStatus, TaskSpec, TaskStep, TaskStepStatus,
};
use hecate::domain::time::now_rfc3339;
use hecate::store::tasks::{FinishedStep, NewTaskEvent, NewTaskRun};
use hecate::store::transfer::catalog::TABLES;
use hecate::store::{ApprovalQuery, McpCallRecord, NewArtifact, NewRunEvent, Store, VectorSearch};
use serde_json::{Map, json};
use std::collections::BTreeSet;

/// The namespace that owns every row.
const OWNER: &str = "ns-owner";
/// The namespace that must see none of them.
const OTHER: &str = "ns-other";

/// The tables this case checks; it must be the whole catalog.
const CHECKED: &[&str] = &[
    "sessions",
    "provider_calls",
    "messages",
    "runs",
    "run_events",
    "approvals",
    "grants",
    "message_artifacts",
    "mcp_calls",
    "mcp_tool_policies",
    "tasks",
    "task_runs",
    "task_steps",
    "task_artifacts",
    "task_approvals",
    "task_events",
    "task_queue",
    "chat_sessions",
    "chat_session_provider_calls",
    "chat_session_messages",
    "gateway_traces",
    "flow_chats",
    "flow_chat_messages",
    "flow_memory",
    "memory_vectors",
    "model_capabilities",
    "provider_cooldowns",
    "api_keys",
    "mcp_oauth_tokens",
    "session_choices",
    "a2a_contexts",
    "a2a_tasks",
    "a2a_push_configs",
];

fn usage() -> Usage {
    Usage {
        prompt_tokens: 1,
        completion_tokens: 1,
        total_tokens: 2,
    }
}

fn snapshot() -> RuntimeSnapshot {
    RuntimeSnapshot {
        runtime_kind: RuntimeKind::Model,
        segment_id: hecate::domain::ids::SegmentId::from("seg_iso"),
        provider: Some("p".into()),
        model: Some("m".into()),
        adapter_id: None,
        task_id: None,
        task_run_id: None,
        capabilities: None,
    }
}

fn task(ns: &str) -> Task {
    let now = now_rfc3339();
    Task {
        id: TaskId::generate(),
        namespace: ns.into(),
        spec: TaskSpec {
            execution_kind: Some(ExecutionKind::Shell),
            shell_command: "true".into(),
            ..Default::default()
        },
        latest_run_id: None,
        latest_run_status: None,
        created_at: now.clone(),
        updated_at: now,
    }
}

fn task_run(t: &Task, status: TaskRunStatus) -> TaskRun {
    TaskRun {
        id: TaskRunId::generate(),
        task_id: t.id.clone(),
        number: 0,
        status,
        error_type: None,
        error_message: None,
        resumed_from_run_id: None,
        workspace: None,
        total_cost_micros_usd: 0,
        prior_cost_micros_usd: 0,
        model: None,
        provider: None,
        cancel_requested: false,
        created_at: now_rfc3339(),
        started_at: None,
        finished_at: None,
    }
}

/// Writes rows into every table, all of them in [`OWNER`].
async fn populate(store: &dyn Store) -> (Session, Task, FlowChat) {
    // Sessions and what hangs off them.
    let s = Session {
        provider: Some("p".into()),
        model: Some("m".into()),
        ..Session::new_idle(OWNER, SessionId::generate(), "t", RuntimeKind::Model)
    };
    store.create_session(&s).await.expect("session");
    let run = Run {
        id: RunId::generate(),
        session_id: s.id.clone(),
        status: RunStatus::Running,
        error_type: None,
        error_message: None,
        request_id: "req_iso".into(),
        trace_id: None,
        started_at: now_rfc3339(),
        completed_at: None,
        duration_ms: None,
        span_id: None,
    };
    store.create_run(&run).await.expect("run");
    let call = ProviderCall {
        id: CallId::generate(),
        session_id: s.id.clone(),
        run_id: Some(run.id.clone()),
        request_id: "req_iso".into(),
        provider: "p".into(),
        model: "m".into(),
        usage: usage(),
        cost_micros_usd: None,
        duration_ms: 1,
        created_at: now_rfc3339(),
    };
    let stored = store
        .append_exchange(
            &s.id,
            vec![NewMessage::text(
                Role::Assistant,
                "secret answer",
                snapshot(),
            )],
            Some(&call),
        )
        .await
        .expect("messages and call");
    store
        .append_run_events(
            &run.id,
            &[NewRunEvent {
                sequence: 1,
                event_type: "text_delta".into(),
                data: json!({"text": "secret"}),
                occurred_at: now_rfc3339(),
            }],
        )
        .await
        .expect("run events");
    store
        .add_artifact(
            &stored[0].id,
            NewArtifact {
                kind: "turn_diff".into(),
                path: "a.txt".into(),
                data: "diff".into(),
            },
        )
        .await
        .expect("artifact");
    store
        .create_approval(&super::cases::pending_approval(&s.id, &run.id))
        .await
        .expect("approval");
    store
        .put_session_choice(&hecate::store::SessionChoice {
            session_id: s.id.clone(),
            scope: "hecate".into(),
            kind: hecate::store::ChoiceKind::Option,
            name: "tools".into(),
            value: json!("read_only"),
            chosen_at: now_rfc3339(),
        })
        .await
        .expect("choice");
    store
        .bind_a2a_context(&hecate::domain::a2a_task::A2aContext {
            namespace: OWNER.into(),
            agent: "hecate".into(),
            context_id: "iso-ctx".into(),
            session_id: s.id.clone(),
            created_at: now_rfc3339(),
        })
        .await
        .expect("context");
    store
        .put_a2a_task(&hecate::domain::a2a_task::A2aTaskRow {
            namespace: OWNER.into(),
            id: "iso-task".into(),
            agent: "hecate".into(),
            context_id: "iso-ctx".into(),
            session_id: s.id.clone(),
            state: "TASK_STATE_WORKING".into(),
            terminal: false,
            record: json!({}),
            version: 1,
            created_at: now_rfc3339(),
            updated_at: now_rfc3339(),
        })
        .await
        .expect("a2a task");
    store
        .put_a2a_push_config(&hecate::domain::a2a_task::A2aPushConfigRow {
            namespace: OWNER.into(),
            task_id: "iso-task".into(),
            config_id: "c".into(),
            config: json!({"url": "http://127.0.0.1:1/"}),
            created_at: now_rfc3339(),
        })
        .await
        .expect("push config");
    store
        .create_grant(&Grant {
            id: GrantId::generate(),
            namespace: OWNER.into(),
            scope: "adapter_tool".into(),
            session_id: None,
            adapter_id: Some("a".into()),
            workspace: None,
            tool_kind: "edit".into(),
            decision: "approve".into(),
            created_at: now_rfc3339(),
            expires_at: None,
            created_by: Some("admin".into()),
        })
        .await
        .expect("grant");
    store
        .record_mcp_calls(&[McpCallRecord {
            id: "call_iso".into(),
            namespace: OWNER.into(),
            server: "fx".into(),
            tool: "echo".into(),
            exposed_name: "fx__echo".into(),
            client: "test (stdio)".into(),
            policy: "auto".into(),
            decision: "allowed".into(),
            approval_id: None,
            outcome: "ok".into(),
            error_type: None,
            error_message: None,
            argument_keys: vec![],
            argument_bytes: 0,
            started_at: now_rfc3339(),
            duration_ms: 1,
        }])
        .await
        .expect("mcp call");
    store
        .set_mcp_tool_policy(&hecate::store::McpToolPolicy {
            namespace: OWNER.into(),
            server: "fx".into(),
            tool: "echo".into(),
            policy: "block".into(),
            updated_at: now_rfc3339(),
        })
        .await
        .expect("mcp tool policy");

    // Tasks: a queued run claimed with a finished step and its artifact, and a
    // run waiting on an approval.
    let t = task(OWNER);
    store.create_task(&t).await.expect("task");
    store
        .create_task_run(NewTaskRun {
            run: task_run(&t, TaskRunStatus::Queued),
            priority: 0,
            approval: None,
            events: vec![NewTaskEvent::new("run.queued", json!({}))],
        })
        .await
        .expect("queued run");
    let claimed = store
        .claim_task_run("iso-worker", 60_000)
        .await
        .expect("claims")
        .expect("the queued run");
    let step = TaskStep {
        id: TaskStepId::generate(),
        run_id: claimed.run.id.clone(),
        task_id: t.id.clone(),
        index: 1,
        kind: "shell".into(),
        status: TaskStepStatus::Running,
        input: json!({}),
        exit_code: None,
        error_type: None,
        error_message: None,
        started_at: now_rfc3339(),
        finished_at: None,
    };
    store.start_task_step(&step, vec![]).await.expect("step");
    store
        .finish_task_step(FinishedStep {
            step: TaskStep {
                status: TaskStepStatus::Completed,
                exit_code: Some(0),
                finished_at: Some(now_rfc3339()),
                ..step.clone()
            },
            artifacts: vec![TaskArtifact {
                id: TaskArtifactId::generate(),
                task_id: t.id.clone(),
                run_id: claimed.run.id.clone(),
                step_id: Some(step.id.clone()),
                kind: "stdout".into(),
                name: "stdout".into(),
                content: "secret output".into(),
                size_bytes: 13,
                truncated: false,
                status: None,
                created_at: now_rfc3339(),
            }],
            events: vec![],
        })
        .await
        .expect("step end");
    let gated = task(OWNER);
    store.create_task(&gated).await.expect("gated task");
    let gated_run = task_run(&gated, TaskRunStatus::AwaitingApproval);
    store
        .create_task_run(NewTaskRun {
            approval: Some(TaskApproval {
                id: TaskApprovalId::generate(),
                task_id: gated.id.clone(),
                run_id: gated_run.id.clone(),
                kind: TaskApprovalKind::ShellCommand,
                status: TaskApprovalStatus::Pending,
                reason: "run true".into(),
                note: None,
                created_at: now_rfc3339(),
                resolved_at: None,
            }),
            run: gated_run,
            priority: 0,
            events: vec![NewTaskEvent::new("approval.requested", json!({}))],
        })
        .await
        .expect("gated run");

    // Model capabilities (process-wide: keyed by provider and model only).
    store
        .put_capability(&CapabilityRecord {
            provider: "p".into(),
            model: "m".into(),
            source: CapabilitySource::OperatorOverride,
            declared: CapabilityDeclaration::default(),
            note: None,
            updated_at: now_rfc3339(),
        })
        .await
        .expect("capability");
    // Provider cooldowns (process-wide like capabilities: keyed by provider).
    store
        .put_cooldown(&hecate::store::ProviderCooldown {
            provider: "p".into(),
            reason: "provider_rate_limited".into(),
            until_ms: i64::MAX,
            owner: "replica".into(),
            updated_at: now_rfc3339(),
        })
        .await
        .expect("cooldown");
    // API keys (process-wide: a key's namespaces are part of its scope).
    let key_id = hecate::domain::ids::ApiKeyId::generate();
    store
        .insert_key(&hecate::store::StoredKey {
            key: hecate::domain::api_key::ApiKey {
                id: key_id,
                name: "iso".into(),
                scope: hecate::domain::api_key::KeyScope::parse(&["read", "namespace:ns-owner"])
                    .expect("scope"),
                created_by: "admin".into(),
                created_at: now_rfc3339(),
                expires_at: None,
                revoked_at: None,
                last_used_at: None,
            },
            token_hash: "0".repeat(64),
        })
        .await
        .expect("key");
    // OAuth sign-ins of upstream MCP servers (process-wide: they belong to the
    // configured servers, which every namespace of a process shares).
    store
        .save_mcp_token(&hecate::store::McpTokenRecord {
            server: "iso".into(),
            issuer: "http://127.0.0.1:1".into(),
            client_id: "client".into(),
            credentials: "{}".into(),
            updated_at: now_rfc3339(),
        })
        .await
        .expect("mcp token");

    // The gateway's chat sessions and traces.
    let trace = |request_id: &str, session: Option<&str>| GatewayTrace {
        namespace: OWNER.into(),
        ..super::chat_cases::trace(request_id, session, &now_rfc3339())
    };
    store
        .append_recorded_exchange(RecordedExchange {
            namespace: OWNER.into(),
            session_id: "chat_iso".into(),
            expected_count: 0,
            new_messages: vec![json!({"role": "user", "content": "secret"})],
            answer: json!({"role": "assistant", "content": "secret reply"}),
            call: GatewayCall {
                id: CallId::generate().0,
                request_id: "req_chat_iso".into(),
                provider: "p".into(),
                model: "m".into(),
                usage: usage(),
                cost_micros_usd: None,
                outcome: "completed".into(),
                duration_ms: 1,
                created_at: now_rfc3339(),
            },
            trace: trace("req_chat_iso", Some("chat_iso")),
        })
        .await
        .expect("chat exchange");

    // Client-hosted chats and their memory.
    let flow = super::flow_chat_cases::flow_chat(OWNER, "flow_iso");
    store.create_flow_chat(&flow).await.expect("flow chat");
    let data: Map<String, serde_json::Value> = json!({"name": "Secret"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    store
        .write_flow_chat(FlowChatWrite {
            namespace: OWNER.into(),
            chat_id: flow.id.clone(),
            expected_version: 1,
            message: NewFlowChatMessage {
                role: FlowRole::Assistant,
                content: "secret".into(),
                stage: "greet".into(),
                data: Some(data.clone()),
            },
            memory: Some((flow.memory_owner(), data)),
            position: None,
        })
        .await
        .expect("flow write");

    // Long-term memory.
    store
        .put_memory_vectors(&[MemoryVector {
            entry: MemoryEntry {
                namespace: OWNER.into(),
                user: String::new(),
                session_id: s.id.clone(),
                message_id: MessageId::from("msg_iso"),
                sequence: 0,
                role: Role::User,
                text: "secret".into(),
                created_at: now_rfc3339(),
            },
            model: "embed".into(),
            embedding: vec![1.0, 0.0],
        }])
        .await
        .expect("vector");
    (s, t, flow)
}

/// Reads every table from [`OTHER`] and checks that nothing of [`OWNER`]'s shows.
async fn nothing_crosses(store: &dyn Store, s: &Session, t: &Task, flow: &FlowChat) {
    let not_found = |e: hecate::domain::HecateError, what: &str| {
        assert_eq!(e.error_type, ErrorType::NotFound, "{what}: {e}");
    };
    // sessions, and through their gate provider_calls, messages, runs,
    // run_events, message_artifacts, session_choices.
    not_found(
        store.get_session(OTHER, &s.id).await.expect_err("session"),
        "get_session",
    );
    assert!(
        store
            .list_sessions(OTHER, 100)
            .await
            .expect("list")
            .is_empty()
    );
    assert!(store.delete_session(OTHER, &s.id).await.is_err());
    // approvals, grants, mcp_calls.
    assert!(
        store
            .list_approvals(ApprovalQuery {
                namespace: OTHER,
                session_id: None,
                status: None,
            })
            .await
            .expect("approvals")
            .is_empty()
    );
    assert!(
        store
            .list_approvals(ApprovalQuery {
                namespace: OTHER,
                session_id: Some(&s.id),
                status: None,
            })
            .await
            .expect("approvals of the session")
            .is_empty()
    );
    let grants = store.list_grants(OWNER).await.expect("grants");
    assert_eq!(grants.len(), 1);
    assert!(store.list_grants(OTHER).await.expect("grants").is_empty());
    assert!(store.revoke_grant(OTHER, &grants[0].id).await.is_err());
    assert!(
        store
            .list_mcp_calls(OTHER, 100)
            .await
            .expect("calls")
            .is_empty()
    );
    assert!(
        store
            .list_mcp_tool_policies(OTHER)
            .await
            .expect("policies")
            .is_empty()
    );
    // tasks, and through their gate task_runs, task_steps, task_artifacts;
    // task_approvals and task_events by namespace.
    not_found(
        store.get_task(OTHER, &t.id).await.expect_err("task"),
        "get_task",
    );
    assert!(
        store
            .list_tasks(TaskListFilter {
                namespace: OTHER.into(),
                limit: 100,
                ..TaskListFilter::default()
            })
            .await
            .expect("tasks")
            .is_empty()
    );
    assert!(store.delete_task(OTHER, &t.id).await.is_err());
    assert_eq!(
        store
            .list_namespace_task_approvals(OWNER, false)
            .await
            .expect("approvals")
            .len(),
        1
    );
    assert!(
        store
            .list_namespace_task_approvals(OTHER, false)
            .await
            .expect("approvals")
            .is_empty()
    );
    let events = |ns: &str| TaskEventFilter {
        namespace: ns.into(),
        task_id: None,
        run_id: None,
        event_types: vec![],
        after_sequence: 0,
        limit: 1000,
        newest_first: false,
    };
    assert!(
        !store
            .list_task_events(events(OWNER))
            .await
            .expect("events")
            .is_empty()
    );
    assert!(
        store
            .list_task_events(events(OTHER))
            .await
            .expect("events")
            .is_empty()
    );
    // chat_sessions, and through their gate chat_session_messages and
    // chat_session_provider_calls; gateway_traces by namespace.
    not_found(
        store
            .get_conversation(OTHER, "chat_iso")
            .await
            .expect_err("chat session"),
        "get_chat_session",
    );
    assert!(
        store
            .list_conversations(OTHER, 100, 0)
            .await
            .expect("chats")
            .is_empty()
    );
    assert!(store.delete_conversation(OTHER, "chat_iso").await.is_err());
    let traces = TraceFilter {
        request_id: None,
        session_id: None,
        since: None,
        until: None,
        model: None,
        provider: None,
        status: None,
        except_client_format: None,
        limit: 100,
        offset: 0,
    };
    assert!(
        store
            .list_traces(OTHER, &traces)
            .await
            .expect("traces")
            .is_empty()
    );
    // flow_chats, flow_chat_messages, flow_memory.
    not_found(
        store
            .get_flow_chat(OTHER, &flow.id)
            .await
            .expect_err("flow chat"),
        "get_flow_chat",
    );
    assert!(
        store
            .list_flow_chat_messages(OTHER, &flow.id)
            .await
            .expect("messages")
            .is_empty()
    );
    let owner: MemoryOwner = flow.memory_owner();
    assert!(
        !store
            .flow_memory(OWNER, &owner)
            .await
            .expect("memory")
            .is_empty()
    );
    assert!(
        store
            .flow_memory(OTHER, &owner)
            .await
            .expect("memory")
            .is_empty()
    );
    // memory_vectors.
    assert_eq!(store.count_memory_vectors(OTHER).await.expect("count"), 0);
    let search = RecallQuery {
        namespace: OTHER.into(),
        user: String::new(),
        model: "embed".into(),
        embedding: vec![1.0, 0.0],
        session: None,
        exclude_session: None,
        k: 10,
    };
    match store.search_memory(&search).await.expect("search") {
        VectorSearch::Hits(h) => assert!(h.is_empty(), "{h:?}"),
        // Without pgvector nothing is searched at all.
        VectorSearch::Unavailable(_) => {}
    }
    // a2a_contexts, a2a_tasks, a2a_push_configs: keyed by namespace.
    assert_eq!(
        store
            .get_a2a_context(OTHER, "hecate", "iso-ctx")
            .await
            .expect("context"),
        None
    );
    assert_eq!(
        store.get_a2a_task(OTHER, "iso-task").await.expect("task"),
        None
    );
    let listed = store
        .list_a2a_tasks(&hecate::domain::a2a_task::A2aTaskQuery {
            namespace: OTHER.into(),
            agent: "hecate".into(),
            context_id: None,
            state: None,
            offset: 0,
            limit: 10,
        })
        .await
        .expect("tasks");
    assert_eq!(listed.total, 0);
    assert!(
        store
            .list_a2a_push_configs(OTHER, "iso-task")
            .await
            .expect("configs")
            .is_empty()
    );
}

/// The case: every catalog table is covered, populated in one namespace and
/// invisible from another; a claimed queue item answers its own task.
pub async fn no_read_crosses_a_namespace_in_any_table(b: Backend, db: Option<&std::path::Path>) {
    let catalog: BTreeSet<&str> = TABLES.iter().map(|t| t.name).collect();
    let checked: BTreeSet<&str> = CHECKED.iter().copied().collect();
    assert_eq!(
        catalog, checked,
        "a table was added or removed: give it an isolation check here"
    );
    let store = b.store.as_ref();
    let (s, t, flow) = populate(store).await;
    if let Some(path) = db {
        let conn = rusqlite::Connection::open(path).expect("open the database");
        for table in CHECKED {
            let n: i64 = conn
                .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
                .expect("count");
            assert!(n > 0, "{table} got no row: the case does not exercise it");
        }
    }
    nothing_crosses(store, &s, &t, &flow).await;
    // The queue is process-wide: a claim hands out a run with its own task,
    // which keeps its namespace.
    let other_task = task(OTHER);
    store.create_task(&other_task).await.expect("task");
    store
        .create_task_run(NewTaskRun {
            run: task_run(&other_task, TaskRunStatus::Queued),
            priority: 0,
            approval: None,
            events: vec![],
        })
        .await
        .expect("queued");
    let claimed = store
        .claim_task_run("other-worker", 60_000)
        .await
        .expect("claims")
        .expect("a run");
    assert_eq!(claimed.task.id, other_task.id);
    assert_eq!(claimed.task.namespace, OTHER);
    assert!(store.get_task(OWNER, &other_task.id).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("hecate.db");
    let store = hecate::store::SqliteStore::open(&path).expect("opens");
    let b = Backend {
        store: std::sync::Arc::new(store),
        _dir: None,
    };
    no_read_crosses_a_namespace_in_any_table(b, Some(&path)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres() {
    no_read_crosses_a_namespace_in_any_table(backends::postgres().await, None).await;
}
