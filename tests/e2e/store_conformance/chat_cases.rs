//! The gateway chat-session and trace cases of the store suite.

use super::Backend;
use hecate::domain::ErrorType;
use hecate::domain::capability::{
    CapabilityDeclaration, CapabilityRecord, CapabilitySource, ToolCalling,
};
use hecate::domain::gateway_conversation::{
    GatewayCall, GatewayConversation, GatewayConversationPatch, GatewayTrace, RecordedExchange,
    RouteCandidate, TraceCostBy, TraceCostGroup, TraceFilter,
};
use hecate::domain::ids::CallId;
use hecate::domain::time::now_rfc3339;
use hecate::store::gateway_conversations::ConversationUpdate;
use hecate::store::{CapabilityKey, ProviderCooldown};
use serde_json::json;

/// A completed, priced trace of `request_id` in namespace `default`, started at
/// `started_at`, with a failed and a selected route candidate.
pub(super) fn trace(request_id: &str, session: Option<&str>, started_at: &str) -> GatewayTrace {
    GatewayTrace {
        request_id: request_id.into(),
        trace_id: format!("trace-{request_id}"),
        namespace: "default".into(),
        session_id: session.map(str::to_string),
        client_format: "openai".into(),
        requested_model: "m".into(),
        provider: "p".into(),
        model: "m".into(),
        status: "completed".into(),
        usage: super::USAGE,
        cost_micros_usd: Some(7),
        duration_ms: 4,
        error_type: None,
        error_message: None,
        started_at: started_at.into(),
        route_reason: "requested_model".into(),
        route_candidates: vec![
            RouteCandidate {
                provider: "q".into(),
                model: "m".into(),
                outcome: "failed".into(),
                skip_reason: Some("provider_rate_limited".into()),
                detail: Some("upstream answered 429".into()),
            },
            RouteCandidate {
                provider: "p".into(),
                model: "m".into(),
                outcome: "selected".into(),
                skip_reason: None,
                detail: None,
            },
        ],
    }
}

fn exchange(session: &str, expected: u64, request_id: &str, user: &str) -> RecordedExchange {
    RecordedExchange {
        namespace: "default".into(),
        session_id: session.into(),
        expected_count: expected,
        new_messages: vec![json!({"role": "user", "content": user})],
        answer: json!({"role": "assistant", "content": format!("re: {user}")}),
        call: GatewayCall {
            id: CallId::generate().0,
            request_id: request_id.into(),
            provider: "p".into(),
            model: "m".into(),
            usage: super::USAGE,
            cost_micros_usd: Some(7),
            outcome: "completed".into(),
            duration_ms: 4,
            created_at: now_rfc3339(),
        },
        trace: trace(request_id, Some(session), &now_rfc3339()),
    }
}

pub async fn a_chat_exchange_creates_the_session_and_links_answer_to_call(b: Backend) {
    let s = &b.store;
    let first = s
        .append_recorded_exchange(exchange("chat_a", 0, "req_1", "hi"))
        .await
        .expect("first exchange");
    assert_eq!(first.len(), 2);
    let second = exchange("chat_a", 2, "req_2", "again");
    let call_id = second.call.id.clone();
    s.append_recorded_exchange(second).await.expect("second");
    let messages = s
        .list_conversation_messages("chat_a")
        .await
        .expect("messages");
    assert_eq!(
        messages.iter().map(|m| m.sequence).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    assert_eq!(messages[2].produced_by_call_id, None);
    assert_eq!(messages[3].produced_by_call_id.as_deref(), Some(&*call_id));
    assert_eq!(messages[3].message["content"], "re: again");
    let calls = s.list_conversation_calls("chat_a").await.expect("calls");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].id, call_id);
    let list = s.list_conversations("default", 10, 0).await.expect("list");
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].message_count, list[0].provider_call_count), (4, 2));
    assert_eq!(list[0].last_call.as_ref().map(|c| &c.id), Some(&call_id));
    let traced = s
        .list_traces(
            "default",
            &TraceFilter {
                session_id: Some("chat_a".into()),
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .expect("traces");
    assert_eq!(traced.len(), 2, "each exchange wrote its trace");
}

pub async fn a_stale_chat_exchange_writes_nothing(b: Backend) {
    let s = &b.store;
    let err = s
        .append_recorded_exchange(exchange("chat_b", 1, "req_x", "hi"))
        .await
        .expect_err("a new session holds no message");
    assert_eq!(err.error_type, ErrorType::Conflict);
    let missing = s
        .get_conversation("default", "chat_b")
        .await
        .expect_err("absent");
    assert_eq!(missing.error_type, ErrorType::NotFound);
    let traces = s
        .list_traces(
            "default",
            &TraceFilter {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .expect("traces");
    assert!(traces.is_empty(), "not even the trace was written");
}

pub async fn chat_sessions_list_newest_first_per_namespace_and_delete_both_streams(b: Backend) {
    let s = &b.store;
    for id in ["chat_1", "chat_2", "chat_3"] {
        s.append_recorded_exchange(exchange(id, 0, &format!("req_{id}"), "hi"))
            .await
            .expect("append");
    }
    let page = s.list_conversations("default", 2, 0).await.expect("page");
    assert_eq!(
        page.iter()
            .map(|x| x.session.id.as_str())
            .collect::<Vec<_>>(),
        ["chat_3", "chat_2"]
    );
    let rest = s.list_conversations("default", 2, 2).await.expect("rest");
    assert_eq!(rest.len(), 1);
    assert!(
        s.list_conversations("other", 10, 0)
            .await
            .expect("other")
            .is_empty()
    );
    let other = s.get_conversation("other", "chat_1").await.expect_err("ns");
    assert_eq!(other.error_type, ErrorType::NotFound);
    s.delete_conversation("default", "chat_1")
        .await
        .expect("delete");
    assert!(
        s.list_conversation_messages("chat_1")
            .await
            .expect("m")
            .is_empty()
    );
    assert!(
        s.list_conversation_calls("chat_1")
            .await
            .expect("c")
            .is_empty()
    );
    let again = s
        .delete_conversation("default", "chat_1")
        .await
        .expect_err("gone");
    assert_eq!(again.error_type, ErrorType::NotFound);
    let kept = s
        .list_traces(
            "default",
            &TraceFilter {
                request_id: Some("req_chat_1".into()),
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .expect("traces");
    assert_eq!(kept.len(), 1, "traces outlive the session");
}

pub async fn traces_filter_by_request_session_and_time_newest_first(b: Backend) {
    let s = &b.store;
    s.record_traces(&[trace("r1", None, "2026-01-01T00:00:00.000Z")])
        .await
        .expect("r1");
    s.record_traces(&[trace("r2", Some("chat_t"), "2026-01-02T00:00:00.000Z")])
        .await
        .expect("r2");
    let mut foreign = trace("r3", None, "2026-01-03T00:00:00.000Z");
    foreign.namespace = "other".into();
    s.record_traces(std::slice::from_ref(&foreign))
        .await
        .expect("r3");
    let list = |f: TraceFilter| async move {
        s.list_traces("default", &TraceFilter { limit: 10, ..f })
            .await
            .expect("list")
            .into_iter()
            .map(|t| t.request_id)
            .collect::<Vec<_>>()
    };
    assert_eq!(list(TraceFilter::default()).await, ["r2", "r1"]);
    assert_eq!(
        list(TraceFilter {
            request_id: Some("r1".into()),
            ..Default::default()
        })
        .await,
        ["r1"]
    );
    assert_eq!(
        list(TraceFilter {
            session_id: Some("chat_t".into()),
            ..Default::default()
        })
        .await,
        ["r2"]
    );
    // A client format can be left out (an agent session's own model turns).
    assert_eq!(
        list(TraceFilter {
            except_client_format: Some(trace("x", None, "").client_format),
            ..Default::default()
        })
        .await,
        Vec::<String>::new()
    );
    assert_eq!(
        list(TraceFilter {
            except_client_format: Some("agent_chat".into()),
            ..Default::default()
        })
        .await,
        ["r2", "r1"]
    );
    assert_eq!(
        list(TraceFilter {
            since: Some("2026-01-01T12:00:00.000Z".into()),
            ..Default::default()
        })
        .await,
        ["r2"]
    );
    assert_eq!(
        list(TraceFilter {
            until: Some("2026-01-01T12:00:00.000Z".into()),
            ..Default::default()
        })
        .await,
        ["r1"]
    );
    assert_eq!(
        list(TraceFilter {
            offset: 1,
            ..Default::default()
        })
        .await,
        ["r1"]
    );
}

pub async fn traces_filter_by_model_provider_and_status(b: Backend) {
    let s = &b.store;
    let mut routed = trace("f1", None, "2026-03-01T00:00:00.000Z");
    routed.requested_model = "alias".into();
    routed.model = "big".into();
    routed.provider = "p1".into();
    let mut failed = trace("f2", None, "2026-03-02T00:00:00.000Z");
    failed.provider = "p2".into();
    failed.status = "failed".into();
    let mut cancelled = trace("f3", None, "2026-03-03T00:00:00.000Z");
    cancelled.status = "cancelled".into();
    cancelled.provider = "p1".into();
    let mut foreign = trace("f4", None, "2026-03-04T00:00:00.000Z");
    foreign.namespace = "other".into();
    foreign.provider = "p1".into();
    s.record_traces(&[routed, failed, cancelled, foreign])
        .await
        .expect("recorded");
    let list = |f: TraceFilter| async move {
        s.list_traces("default", &TraceFilter { limit: 10, ..f })
            .await
            .expect("list")
            .into_iter()
            .map(|t| t.request_id)
            .collect::<Vec<_>>()
    };
    // The model matches the model sent or the one the client named.
    for m in ["big", "alias"] {
        assert_eq!(
            list(TraceFilter {
                model: Some(m.into()),
                ..Default::default()
            })
            .await,
            ["f1"],
            "model {m}"
        );
    }
    assert_eq!(
        list(TraceFilter {
            model: Some("m".into()),
            ..Default::default()
        })
        .await,
        ["f3", "f2"]
    );
    assert_eq!(
        list(TraceFilter {
            provider: Some("p1".into()),
            ..Default::default()
        })
        .await,
        ["f3", "f1"],
        "newest first, not the other namespace's"
    );
    assert_eq!(
        list(TraceFilter {
            status: Some("failed".into()),
            ..Default::default()
        })
        .await,
        ["f2"]
    );
    assert_eq!(
        list(TraceFilter {
            status: Some("completed".into()),
            ..Default::default()
        })
        .await,
        ["f1"]
    );
    // Filters combine, with the time bounds and the page too.
    assert_eq!(
        list(TraceFilter {
            provider: Some("p1".into()),
            model: Some("m".into()),
            status: Some("cancelled".into()),
            since: Some("2026-03-01T12:00:00.000Z".into()),
            ..Default::default()
        })
        .await,
        ["f3"]
    );
    assert_eq!(
        list(TraceFilter {
            provider: Some("p1".into()),
            offset: 1,
            ..Default::default()
        })
        .await,
        ["f1"]
    );
    assert!(
        list(TraceFilter {
            provider: Some("p1".into()),
            status: Some("failed".into()),
            ..Default::default()
        })
        .await
        .is_empty()
    );
}

pub async fn a_traces_route_round_trips_and_spend_sums_its_costs(b: Backend) {
    let s = &b.store;
    let t = trace("r-route", None, "2026-02-01T00:00:00.000Z");
    s.record_traces(std::slice::from_ref(&t))
        .await
        .expect("recorded");
    let mut unpriced = trace("r-free", None, "2026-02-01T00:00:01.000Z");
    unpriced.cost_micros_usd = None;
    s.record_traces(std::slice::from_ref(&unpriced))
        .await
        .expect("recorded");
    s.record_traces(&[trace("r-old", None, "2026-01-01T00:00:00.000Z")])
        .await
        .expect("recorded");
    let got = s
        .list_traces(
            "default",
            &TraceFilter {
                request_id: Some("r-route".into()),
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .expect("listed");
    assert_eq!(got, vec![t], "the route reason and candidates round trip");
    assert_eq!(
        s.trace_spend_since("default", "2026-02-01T00:00:00.000Z")
            .await
            .expect("spend"),
        7,
        "the priced trace since the bound, not the older one nor the unpriced one"
    );
    assert_eq!(
        s.trace_spend_since("other", "2026-01-01T00:00:00.000Z")
            .await
            .expect("spend"),
        0
    );
}

pub async fn capability_records_are_replaced_per_source_and_deleted(b: Backend) {
    let s = &b.store;
    let record = |source, tools, note: &str| CapabilityRecord {
        provider: "ollama".into(),
        model: "qwen".into(),
        source,
        declared: CapabilityDeclaration {
            tool_calling: Some(tools),
            max_context_tokens: Some(32768),
            ..Default::default()
        },
        note: Some(note.into()),
        updated_at: now_rfc3339(),
    };
    let probe = record(CapabilitySource::Probe, ToolCalling::Basic, "probe");
    s.put_capability(&record(
        CapabilitySource::OperatorOverride,
        ToolCalling::Basic,
        "first",
    ))
    .await
    .expect("put");
    let over = record(
        CapabilitySource::OperatorOverride,
        ToolCalling::None,
        "second",
    );
    s.put_capability(&over).await.expect("replaced");
    s.put_capability(&probe).await.expect("probe");
    assert_eq!(
        s.list_capabilities().await.expect("list"),
        vec![over, probe.clone()],
        "one record per source, the override replaced, ordered by source"
    );
    assert!(
        s.delete_capability(CapabilityKey {
            provider: "ollama",
            model: "qwen",
            source: CapabilitySource::OperatorOverride,
        })
        .await
        .expect("deleted")
    );
    assert!(
        !s.delete_capability(CapabilityKey {
            provider: "ollama",
            model: "qwen",
            source: CapabilitySource::OperatorOverride,
        })
        .await
        .expect("nothing left")
    );
    assert_eq!(s.list_capabilities().await.expect("list"), vec![probe]);
}

pub async fn provider_cooldowns_keep_the_latest_end_and_expire(b: Backend) {
    let s = &b.store;
    let cooldown = |provider: &str, reason: &str, until_ms: i64, owner: &str| ProviderCooldown {
        provider: provider.into(),
        reason: reason.into(),
        until_ms,
        owner: owner.into(),
        updated_at: now_rfc3339(),
    };
    let a = cooldown("a", "provider_rate_limited", 2_000, "one");
    s.put_cooldown(&a).await.expect("put");
    s.put_cooldown(&cooldown("a", "circuit_open", 1_500, "two"))
        .await
        .expect("an earlier end");
    assert_eq!(
        s.list_cooldowns(1_000).await.expect("list"),
        vec![a],
        "a cooldown that ends earlier does not replace a later one"
    );
    let later = cooldown("a", "circuit_open", 3_000, "two");
    let b2 = cooldown("b", "provider_rate_limited", 1_200, "one");
    s.put_cooldown(&later).await.expect("a later end");
    s.put_cooldown(&b2).await.expect("another provider");
    assert_eq!(
        s.list_cooldowns(1_000).await.expect("list"),
        vec![later.clone(), b2],
        "one per provider, by provider"
    );
    assert_eq!(
        s.list_cooldowns(1_200).await.expect("list"),
        vec![later],
        "an ended cooldown is not listed"
    );
    assert!(s.list_cooldowns(3_000).await.expect("list").is_empty());
}

/// Traces are stored a batch per transaction, and a batch stored again (a
/// journal replayed after a crash) leaves one row per trace.
pub async fn a_replayed_batch_of_traces_is_stored_once(b: Backend) {
    let s = &b.store;
    let batch = [
        trace("batch-1", None, "2026-01-01T00:00:00.000Z"),
        trace("batch-2", None, "2026-01-01T00:00:01.000Z"),
    ];
    s.record_traces(&batch).await.expect("batch");
    s.record_traces(&batch).await.expect("replayed");
    let stored = s
        .list_traces(
            "default",
            &TraceFilter {
                limit: 10,
                ..TraceFilter::default()
            },
        )
        .await
        .expect("list");
    let ids: Vec<&str> = stored.iter().map(|t| t.request_id.as_str()).collect();
    assert_eq!(ids, ["batch-2", "batch-1"]);
    assert_eq!(stored[1], batch[0]);
}

/// A session made ahead keeps its header; a second one with the id (from any
/// namespace) is a conflict; a patch changes only what it names, and only in
/// the session's namespace.
pub async fn a_chat_session_made_ahead_keeps_its_header_and_a_patch_changes_what_it_names(
    b: Backend,
) {
    let s = &b.store;
    let header = GatewayConversation {
        id: "chat_ahead".into(),
        namespace: "default".into(),
        title: "Support".into(),
        system_prompt: "Be brief.".into(),
        user: "ana".into(),
        created_at: "2026-01-01T00:00:00.000Z".into(),
        updated_at: "2026-01-01T00:00:00.000Z".into(),
    };
    s.create_conversation(&header).await.expect("created");
    assert_eq!(
        s.get_conversation("default", "chat_ahead")
            .await
            .expect("read"),
        header
    );
    for namespace in ["default", "other"] {
        let taken = GatewayConversation {
            namespace: namespace.into(),
            title: "again".into(),
            ..header.clone()
        };
        let e = s.create_conversation(&taken).await.expect_err("taken");
        assert_eq!(e.error_type, ErrorType::Conflict, "{namespace}");
    }
    assert_eq!(
        s.get_conversation("default", "chat_ahead")
            .await
            .expect("read")
            .title,
        "Support"
    );
    let patched = s
        .update_conversation(ConversationUpdate {
            namespace: "default",
            id: "chat_ahead",
            patch: &GatewayConversationPatch {
                system_prompt: Some("Be thorough.".into()),
                ..GatewayConversationPatch::default()
            },
        })
        .await
        .expect("patched");
    assert_eq!(patched.title, "Support", "kept");
    assert_eq!(patched.system_prompt, "Be thorough.");
    assert!(patched.updated_at > header.updated_at);
    assert_eq!(
        s.get_conversation("default", "chat_ahead")
            .await
            .expect("read"),
        patched
    );
    let foreign = s
        .update_conversation(ConversationUpdate {
            namespace: "other",
            id: "chat_ahead",
            patch: &GatewayConversationPatch {
                title: Some("stolen".into()),
                ..GatewayConversationPatch::default()
            },
        })
        .await
        .expect_err("another namespace");
    assert_eq!(foreign.error_type, ErrorType::NotFound);
    assert!(
        s.list_conversation_messages("chat_ahead")
            .await
            .expect("messages")
            .is_empty()
    );
}

pub async fn trace_costs_sum_per_day_provider_and_model_under_the_filter(b: Backend) {
    let s = &b.store;
    let at = |day: u32, hour: u32| format!("2026-04-{day:02}T{hour:02}:00:00.000Z");
    let mut rows = Vec::new();
    for (i, (day, provider, model, cost)) in [
        (1, "p1", "big", Some(100)),
        (1, "p2", "small", Some(5)),
        (1, "p1", "big", None),
        (3, "p2", "", Some(40)),
        (3, "", "small", Some(1)),
    ]
    .into_iter()
    .enumerate()
    {
        let mut t = trace(&format!("c{i}"), None, &at(day, i as u32));
        (t.provider, t.model, t.cost_micros_usd) = (provider.into(), model.into(), cost);
        if model.is_empty() {
            t.requested_model = "asked".into();
        }
        rows.push(t);
    }
    let mut foreign = trace("c9", None, &at(1, 9));
    foreign.namespace = "other".into();
    rows.push(foreign);
    s.record_traces(&rows).await.expect("recorded");
    let tokens = super::USAGE.total_tokens;
    let g = |key: &str, requests: u64, unpriced: u64, micros: i64| TraceCostGroup {
        key: key.into(),
        requests,
        unpriced,
        tokens: requests * tokens,
        cost_micros_usd: micros,
    };
    let costs = |f: TraceFilter, by: TraceCostBy| async move {
        s.trace_costs("default", &f, by).await.expect("costs")
    };
    // Days oldest first; days without traces are not groups.
    assert_eq!(
        costs(TraceFilter::default(), TraceCostBy::Day).await,
        [g("2026-04-01", 3, 1, 105), g("2026-04-03", 2, 0, 41)]
    );
    // Providers and models dearest first; a blank one has a name.
    assert_eq!(
        costs(TraceFilter::default(), TraceCostBy::Provider).await,
        [
            g("p1", 2, 1, 100),
            g("p2", 2, 0, 45),
            g("(no provider)", 1, 0, 1)
        ]
    );
    assert_eq!(
        costs(TraceFilter::default(), TraceCostBy::Model).await,
        [
            g("big", 2, 1, 100),
            g("asked", 1, 0, 40),
            g("small", 2, 0, 6)
        ]
    );
    // The list's filters narrow the sums; its page does not.
    assert_eq!(
        costs(
            TraceFilter {
                provider: Some("p2".into()),
                since: Some(at(2, 0)),
                limit: 1,
                offset: 7,
                ..Default::default()
            },
            TraceCostBy::Model
        )
        .await,
        [g("asked", 1, 0, 40)]
    );
    assert!(
        costs(
            TraceFilter {
                until: Some(at(1, 0)),
                ..Default::default()
            },
            TraceCostBy::Day
        )
        .await
        .is_empty()
    );
}

/// API keys: one live key per name (a revoked key frees its name), found by id
/// with their hash, listed newest first, revoked once, their use recorded.
pub async fn api_keys_keep_one_live_name_and_revoke_once(b: Backend) {
    use hecate::domain::api_key::{ApiKey, KeyScope};
    use hecate::domain::ids::ApiKeyId;
    use hecate::store::StoredKey;
    let s = &b.store;
    let key = |name: &str, at: &str| StoredKey {
        key: ApiKey {
            id: ApiKeyId::generate(),
            name: name.into(),
            scope: KeyScope::parse(&["operator", "server:github", "namespace:team-a"])
                .expect("scope"),
            created_by: "admin".into(),
            created_at: at.into(),
            expires_at: Some("2030-01-01T00:00:00.000Z".into()),
            revoked_at: None,
            last_used_at: None,
        },
        token_hash: format!("{:0>64}", name.len()),
    };
    let first = key("ci", "2026-01-01T00:00:00.000Z");
    s.insert_key(&first).await.expect("insert");
    assert_eq!(
        s.get_key(&first.key.id).await.expect("get"),
        Some(first.clone())
    );
    let dup = s
        .insert_key(&key("ci", "2026-01-01T00:00:01.000Z"))
        .await
        .expect_err("a live key has this name");
    assert_eq!(dup.error_type, ErrorType::Conflict, "{dup:?}");
    let revoked = s
        .revoke_key(&first.key.id, "2026-01-02T00:00:00.000Z")
        .await
        .expect("revoke")
        .expect("the key");
    assert_eq!(
        revoked.revoked_at.as_deref(),
        Some("2026-01-02T00:00:00.000Z")
    );
    let again = s
        .revoke_key(&first.key.id, "2026-01-03T00:00:00.000Z")
        .await
        .expect("revoke again")
        .expect("the key");
    assert_eq!(again.revoked_at, revoked.revoked_at, "revoked once");
    let second = key("ci", "2026-01-04T00:00:00.000Z");
    s.insert_key(&second).await.expect("the name is free again");
    s.touch_key(&second.key.id, "2026-01-05T00:00:00.000Z")
        .await
        .expect("touch");
    let listed = s.list_keys().await.expect("list");
    assert_eq!(
        listed.iter().map(|k| &k.id).collect::<Vec<_>>(),
        vec![&second.key.id, &first.key.id],
        "newest first"
    );
    assert_eq!(
        listed[0].last_used_at.as_deref(),
        Some("2026-01-05T00:00:00.000Z")
    );
    assert_eq!(listed[0].scope, second.key.scope);
    assert!(
        s.revoke_key(&ApiKeyId::generate(), "2026-01-06T00:00:00.000Z")
            .await
            .expect("revoke unknown")
            .is_none()
    );
    assert!(
        s.get_key(&ApiKeyId::generate())
            .await
            .expect("get unknown")
            .is_none()
    );
}
