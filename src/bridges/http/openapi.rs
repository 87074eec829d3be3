//! The OpenAPI 3.1 document, generated from the handlers' annotations and wire
//! types, served at `GET /hecate/v1/openapi.json`: the `/hecate/v1` API and the
//! model gateway's `/v1`. A test checks that it names exactly the routes the
//! router serves. The binary serves the generated document as committed in
//! `openapi.json` beside this file, so the code that builds it (about 2 MB of
//! the release binary) is linked into the tests only; a test fails, naming the
//! command that rewrites the file, when the two differ.

use super::envelope::{ErrorBody, ErrorEnvelope};
use super::gateway::handlers as gateway;
use super::gateway::schema::{
    AnthropicBlock, AnthropicContent, AnthropicMessage, ChatCompletion, ChatCompletionChoice,
    ChatCompletionRequest, GatewayErrorDto, GatewayErrorObject, ListedModelDto, MessagesRequest,
    MessagesResponse, ModelListDto, OpenAiContent, OpenAiMessage, OpenAiPart, ResponseObject,
    ResponsesInput, ResponsesItem, ResponsesRequest,
};
use super::{
    adapters, approval_inbox, approvals, capabilities, chat_sessions, chats, files, flows, keys,
    mcp, memory, messages, providers, sessions, stream, system, tasks, traces,
};
use crate::bridges::resources::agent::{
    AdapterDto, AdapterHealthResponse, AdapterListResponse, AdapterProbeDto, AdapterProbeResponse,
    AdapterResponse, ApprovalDto, ApprovalListResponse, ApprovalResponse, ChangedFileDiffDto,
    ChangedFileDiffResponse, ChangedFileDto, ChangedFilesResponse, CreateGrantRequest,
    DecisionName, GrantDeletedDto, GrantDeletedResponse, GrantDto, GrantListResponse,
    GrantResponse, InboxApprovalDto, InboxResponse, ProbeDto, ResolveApprovalRequest, RevertDto,
    RevertRequest, RevertResponse, ScopeName,
};
use crate::bridges::resources::agent_ops::{
    AdapterManifestErrorDto, AgentProcessDto, AgentProcessListResponse, AgentProcessResponse,
    InstallErrorDto, InstallJobDto, InstallJobResponse, InstallStageDto,
};
use crate::bridges::resources::capability::{
    CapabilitiesDto, CapabilityOverrideDeletedDto, CapabilityOverrideDeletedResponse,
    CapabilityOverrideRequest, CapabilityProbeRequest, ModelCapabilityDto, ModelCapabilityResponse,
};
use crate::bridges::resources::chat::{
    ChatDeletedResponse, ChatMessageDto, ChatProviderCallDto, ChatReplayDto, ChatReplayResponse,
    ChatSessionDto, ChatSessionListResponse, ChatSessionResponse, ChatSessionSummaryDto,
    RouteCandidateDto, TraceDto, TraceListResponse,
};
use crate::bridges::resources::events::{ApprovalRequestedDto, ApprovalResolvedDto};
use crate::bridges::resources::flow_chat::{
    ChatDto, ChatHistoryMessageDto, ChatProcessedDto, ChatProcessedResponse, ChatRerouteDto,
    ChatResponse, ChatStartedDto, ChatStartedResponse, ChatStoredMessageDto, ChatSummaryResponse,
    ChatSummarySavedDto, ChatTurnDto, ChatTurnResponse, FlowAgentDto, FlowCatalogDto,
    FlowCatalogResponse, FlowChatListResponse, FlowChatSummaryDto, FlowConversationDto,
    FlowLoadErrorDto, ProcessChatResponseRequest, SaveChatSummaryRequest, SendChatMessageRequest,
    StartChatRequest, SummarizationNeededDto,
};
use crate::bridges::resources::keys::{
    CreateKeyRequest, CreatedKeyResponse, KeyDto, KeyListResponse, KeyResponse,
};
use crate::bridges::resources::mcp::{
    McpCacheDto, McpCacheEntryDto, McpCacheResponse, McpCallDto, McpCallListResponse, McpProbeDto,
    McpProbeResponse, McpProbeToolDto, McpServerDto, McpServerListResponse, McpServerToolDto,
    McpSignInDto, McpSignOutResponse, McpToolPolicyDto, McpToolPolicyRequest,
    McpToolPolicyResponse,
};
use crate::bridges::resources::memory::{
    MemoryHitDto, MemorySearchDto, MemorySearchResponse, RecallStatusDto, RecallStatusResponse,
};
use crate::bridges::resources::tasks::{
    AppendTaskEventsRequest, ClientEventRequest, ContinueRunRequest, CreateTaskRequest,
    ResolveTaskApprovalRequest, RetryFromTurnRequest, RunActionRequest, TaskApprovalDto,
    TaskApprovalListResponse, TaskApprovalResponse, TaskArtifactDto, TaskArtifactListResponse,
    TaskArtifactResponse, TaskDeletedDto, TaskDeletedResponse, TaskDto, TaskEventDto,
    TaskEventListResponse, TaskListResponse, TaskPatchDto, TaskPatchListResponse,
    TaskPatchResponse, TaskResponse, TaskRunDto, TaskRunListResponse, TaskRunResponse,
    TaskRunStateDto, TaskRunStreamEventData, TaskStepDto, TaskStepListResponse, TaskStepResponse,
};
use crate::bridges::resources::trace_costs::{
    TraceCostGroupDto, TraceCostGrouping, TraceCostsResponse,
};
use crate::bridges::resources::{
    ActivityDto, CancelDto, CancelResponse, CreateSessionRequest, DeletedDto, DeletedResponse,
    GatewayStatsDto, HealthDto, HistoryDto, McpPoolDto, MessageDto, MessageListResponse,
    ProviderCallDto, RunDto, RuntimeKindName, SegmentDto, SendMessageRequest, SessionDto,
    SessionListResponse, SessionResponse, SessionSummaryDto, StatsDto, StatsResponse, StoreDto,
    ToolCallDto, TranscriptDto, TranscriptPageDto, UsageDto,
};
use crate::domain::task::TaskActivityItem;
use axum::Json;
use serde_json::Value;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, Response, ResponseBuilder};
use utoipa::{Modify, OpenApi};

/// The API description.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Hecate HTTP API",
        description = "Agent chat sessions over the Hecate session engine, with SSE streaming. \
                       Every /hecate/v1 error uses the error envelope; with a configured token \
                       every /hecate/v1 request needs `Authorization: Bearer <token>`."
    ),
    paths(
        system::healthz,
        system::stats,
        providers::list_presets,
        providers::status,
        providers::local_discovery,
        capabilities::put_override,
        capabilities::delete_override,
        capabilities::probe,
        gateway::models,
        gateway::chat_completions,
        gateway::messages,
        gateway::responses,
        openapi_json,
        memory::search,
        memory::status,
        sessions::list,
        sessions::create,
        sessions::get,
        sessions::delete,
        sessions::cancel,
        sessions::close,
        messages::send,
        messages::list,
        stream::sse::stream,
        files::list,
        files::diff,
        files::revert,
        approval_inbox::list,
        approvals::list,
        approvals::get,
        approvals::resolve,
        approvals::cancel,
        approvals::list_grants,
        approvals::create_grant,
        approvals::revoke_grant,
        keys::list,
        keys::create,
        keys::revoke,
        adapters::list,
        adapters::probe,
        adapters::health,
        adapters::refresh_launcher,
        adapters::start_install,
        adapters::get_install,
        adapters::processes,
        adapters::kill_process,
        tasks::crud::list,
        tasks::crud::create,
        tasks::crud::get,
        tasks::crud::delete,
        tasks::crud::start,
        tasks::runs::list,
        tasks::runs::get,
        tasks::runs::cancel,
        tasks::runs::retry,
        tasks::runs::resume,
        tasks::runs::steps,
        tasks::runs::step,
        tasks::runs::artifacts,
        tasks::runs::artifact,
        tasks::runs::task_artifacts,
        tasks::patches::list,
        tasks::patches::get,
        tasks::patches::apply,
        tasks::patches::revert,
        tasks::events::run_events,
        tasks::events::append_run_events,
        tasks::events::run_stream,
        tasks::events::feed,
        tasks::events::feed_stream,
        tasks::approvals::list,
        tasks::approvals::get,
        tasks::approvals::resolve,
        tasks::chain::continue_run,
        tasks::chain::retry_from_turn,
        mcp::probe,
        mcp::cache,
        mcp::servers,
        mcp::sign_out,
        mcp::set_tool_policy,
        mcp::calls,
        chat_sessions::list,
        chat_sessions::create,
        chat_sessions::get,
        chat_sessions::update,
        chat_sessions::delete,
        chat_sessions::replay,
        traces::list,
        traces::costs,
        flows::catalog,
        flows::chats,
        chats::start,
        chats::send,
        chats::process,
        chats::summary,
        chats::get,
    ),
    components(schemas(
        StartChatRequest, SendChatMessageRequest, ProcessChatResponseRequest,
        SaveChatSummaryRequest, ChatStartedResponse, ChatStartedDto, ChatTurnResponse, ChatTurnDto,
        ChatRerouteDto,
        FlowCatalogResponse, FlowCatalogDto, FlowAgentDto, FlowConversationDto, FlowLoadErrorDto,
        FlowChatListResponse, FlowChatSummaryDto,
        ChatHistoryMessageDto, SummarizationNeededDto, ChatProcessedResponse, ChatProcessedDto,
        ChatSummaryResponse, ChatSummarySavedDto, ChatResponse, ChatDto, ChatStoredMessageDto,
        ErrorEnvelope, ErrorBody, HealthDto, StatsResponse, StatsDto, GatewayStatsDto, McpPoolDto, StoreDto,
        SessionListResponse, SessionSummaryDto, SessionResponse, TranscriptDto, TranscriptPageDto, MessageListResponse, SessionDto,
        MessageDto, ToolCallDto, UsageDto, ActivityDto, ProviderCallDto, RunDto, SegmentDto,
        CreateSessionRequest, HistoryDto, SendMessageRequest, RuntimeKindName, CancelResponse, CancelDto,
        DeletedResponse, DeletedDto, ApprovalRequestedDto, ApprovalResolvedDto,
        AdapterListResponse, AdapterDto, AdapterProbeResponse, AdapterProbeDto, ProbeDto,
        AdapterHealthResponse, AdapterResponse, ApprovalListResponse, ApprovalResponse,
        AdapterManifestErrorDto, InstallJobResponse, InstallJobDto, InstallStageDto, InstallErrorDto,
        AgentProcessListResponse, AgentProcessResponse, AgentProcessDto,
        ApprovalDto, ResolveApprovalRequest, DecisionName, ScopeName, GrantListResponse,
        GrantDto, GrantDeletedResponse, GrantDeletedDto, CreateGrantRequest, GrantResponse,
        ChangedFilesResponse, ChangedFileDto, InboxResponse, InboxApprovalDto,
        ChangedFileDiffResponse, ChangedFileDiffDto, RevertRequest, RevertResponse, RevertDto,
        CreateTaskRequest, TaskResponse, TaskListResponse, TaskDto, TaskDeletedResponse,
        TaskDeletedDto, TaskRunResponse, TaskRunListResponse, TaskRunDto, RunActionRequest,
        TaskStepResponse, TaskStepListResponse, TaskStepDto, TaskArtifactResponse,
        TaskArtifactListResponse, TaskArtifactDto, TaskApprovalResponse, TaskApprovalListResponse,
        TaskApprovalDto, ResolveTaskApprovalRequest, TaskEventListResponse, TaskEventDto,
        TaskPatchResponse, TaskPatchListResponse, TaskPatchDto,
        TaskRunStreamEventData, TaskRunStateDto, TaskActivityItem,
        McpProbeResponse, McpProbeDto, McpProbeToolDto, McpCacheResponse, McpCacheDto,
        McpServerListResponse, McpServerDto, McpServerToolDto, McpSignInDto,
        McpSignOutResponse, McpToolPolicyRequest,
        McpToolPolicyResponse, McpToolPolicyDto, McpCallListResponse, McpCallDto,
        McpCacheEntryDto, ContinueRunRequest, AppendTaskEventsRequest, ClientEventRequest, RetryFromTurnRequest,
        ChatSessionListResponse, ChatSessionSummaryDto, ChatSessionResponse, ChatSessionDto,
        ChatMessageDto, ChatProviderCallDto, ChatReplayResponse, ChatReplayDto,
        ChatDeletedResponse, TraceListResponse, TraceDto, RouteCandidateDto,
        TraceCostsResponse, TraceCostGroupDto, TraceCostGrouping,
        CapabilitiesDto, CapabilityOverrideRequest, CapabilityProbeRequest, ModelCapabilityDto,
        ModelCapabilityResponse, CapabilityOverrideDeletedDto, CapabilityOverrideDeletedResponse,
        ChatCompletionRequest, OpenAiMessage, OpenAiContent, OpenAiPart, ChatCompletion,
        ChatCompletionChoice, MessagesRequest, AnthropicMessage, AnthropicContent, AnthropicBlock,
        MessagesResponse, ModelListDto, ListedModelDto, GatewayErrorDto, GatewayErrorObject,
        ResponsesRequest, ResponsesInput, ResponsesItem, ResponseObject,
        MemorySearchResponse, MemorySearchDto, MemoryHitDto, RecallStatusResponse, RecallStatusDto,
        KeyDto, KeyListResponse, KeyResponse, CreateKeyRequest, CreatedKeyResponse
    )),
    modifiers(&BearerToken, &ErrorEnvelopeDefault),
    security(("bearer_token" = []), ()),
    tags(
        (name = "system", description = "Liveness, stats and this document"),
        (name = "providers", description = "Provider presets, readiness and local discovery; model capabilities (overrides and probes)"),
        (name = "agent-chat", description = "Agent Chat sessions, messages, streams and changed files"),
        (name = "approvals", description = "Permission requests of external agents, and standing grants"),
        (name = "keys", description = "Named API keys of a shared hub: role (read, operator, admin), namespaces, MCP servers and tools; admin only"),
        (name = "agent-adapters", description = "External coding-agent adapters: catalog, availability and probes"),
        (name = "mcp", description = "Hecate as an MCP client: server probes and the client pool"),
        (name = "chat", description = "Chat sessions recorded by the model gateway (/v1) from requests carrying a session id"),
        (name = "observability", description = "Per-request traces of the model gateway, with each request's route candidates"),
        (name = "model-gateway", description = "OpenAI- and Anthropic-compatible ingress (/v1): any SDK pointed at Hecate reaches every configured provider in either format. Errors come in the client's shape with Hecate's envelope fields inside the error object; the token, when configured, is accepted as Bearer or x-api-key"),
        (name = "memory", description = "Long-term recall: messages embedded per namespace and user, searched by meaning across sessions; degraded (not failed) when embeddings or vector search are unavailable"),
        (name = "chats", description = "Client-hosted chats: the caller runs the model; Hecate compiles the system message and the respond schema, stores history and extracted data, routes stages and asks for summaries. Identify with X-Hecate-App-Key, X-Hecate-User-Token, or not at all (anonymous)")
    )
)]
// Built by the tests only (the binary serves `openapi.json`).
#[cfg_attr(not(test), allow(dead_code))]
pub struct ApiDoc;

/// Declares the optional bearer-token scheme.
#[cfg_attr(not(test), allow(dead_code))]
struct BearerToken;

impl Modify for BearerToken {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer_token",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// Gives every `/hecate/v1` operation that names no `default` response the
/// error envelope as its default, so a handler lists only its own statuses.
#[cfg_attr(not(test), allow(dead_code))]
struct ErrorEnvelopeDefault;

impl Modify for ErrorEnvelopeDefault {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let items = openapi
            .paths
            .paths
            .iter_mut()
            .filter(|(path, _)| path.starts_with("/hecate/v1/"))
            .map(|(_, item)| item);
        for item in items {
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.options,
                &mut item.head,
                &mut item.patch,
                &mut item.trace,
            ];
            for operation in operations.into_iter().flatten() {
                operation
                    .responses
                    .responses
                    .entry("default".to_string())
                    .or_insert_with(|| error_envelope_response().into());
            }
        }
    }
}

/// `default`: the error envelope as JSON.
#[cfg_attr(not(test), allow(dead_code))]
fn error_envelope_response() -> Response {
    ResponseBuilder::new()
        .description("Error envelope")
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorEnvelope")))
                .build(),
        )
        .build()
}

/// The generated document as committed beside this file.
const COMMITTED: &str = include_str!("openapi.json");

/// The document as served: the committed generated document with the crate
/// version filled in.
pub fn document() -> Value {
    static PARSED: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    let mut doc = PARSED
        .get_or_init(|| serde_json::from_str(COMMITTED).unwrap_or(Value::Null))
        .clone();
    if let Some(info) = doc.get_mut("info").and_then(Value::as_object_mut) {
        info.insert(
            "version".to_string(),
            Value::String(env!("CARGO_PKG_VERSION").to_string()),
        );
    }
    doc
}

/// The document the annotations describe, with link objects spelled the way
/// OpenAPI names their fields (utoipa 5 writes them in snake case) and no
/// version (the served document carries the crate's).
#[cfg(test)]
fn generated() -> Value {
    let mut doc = ApiDoc::openapi();
    doc.info.version = String::new();
    let mut v = serde_json::to_value(&doc).unwrap_or(Value::Null);
    if let Some(paths) = v.get_mut("paths").and_then(Value::as_object_mut) {
        for operation in paths.values_mut().filter_map(Value::as_object_mut) {
            for op in operation.values_mut() {
                let links = op
                    .get_mut("responses")
                    .and_then(Value::as_object_mut)
                    .into_iter()
                    .flat_map(|r| r.values_mut())
                    .filter_map(|r| r.get_mut("links").and_then(Value::as_object_mut));
                for link in links
                    .flat_map(|l| l.values_mut())
                    .filter_map(Value::as_object_mut)
                {
                    for (from, to) in [
                        ("operation_id", "operationId"),
                        ("operation_ref", "operationRef"),
                        ("request_body", "requestBody"),
                    ] {
                        if let Some(x) = link.remove(from) {
                            link.insert(to.to_string(), x);
                        }
                    }
                }
            }
        }
    }
    v
}

/// This OpenAPI document.
#[utoipa::path(
    get,
    path = "/hecate/v1/openapi.json",
    operation_id = "openapi_document",
    tag = "system",
    responses((status = 200, description = "The OpenAPI 3.1 document", body = Object))
)]
pub async fn openapi_json() -> Json<Value> {
    Json(document())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn documented() -> BTreeSet<(String, String)> {
        let doc = document();
        let mut out = BTreeSet::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for method in item.as_object().expect("item").keys() {
                if ["get", "post", "put", "patch", "delete"].contains(&method.as_str()) {
                    out.insert((method.clone(), path.clone()));
                }
            }
        }
        out
    }

    #[test]
    fn the_served_document_is_the_one_the_annotations_describe() {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/src/bridges/http/openapi.json");
        let committed: Value = serde_json::from_str(COMMITTED).expect("openapi.json is JSON");
        let generated = generated();
        if committed == generated {
            return;
        }
        if std::env::var_os("HECATE_WRITE_OPENAPI").is_some() {
            let mut text = serde_json::to_string_pretty(&generated).expect("a document");
            text.push('\n');
            std::fs::write(file, text).expect("writing openapi.json");
            return;
        }
        panic!(
            "{file} differs from the annotations: rewrite it with \
             `HECATE_WRITE_OPENAPI=1 cargo test --lib openapi` and commit it"
        );
    }

    #[test]
    fn every_route_is_documented_and_every_documented_operation_is_routed() {
        let routed: BTreeSet<(String, String)> = super::super::routes()
            .iter()
            .chain(super::super::gateway::routes().iter())
            .map(|r| (r.method.to_string(), r.path.to_string()))
            .collect();
        assert_eq!(routed, documented());
    }

    #[test]
    fn every_hecate_operation_answers_the_error_envelope_by_default() {
        let doc = document();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, operation) in item.as_object().expect("item") {
                let default = &operation["responses"]["default"];
                let schema = &default["content"]["application/json"]["schema"]["$ref"];
                if path.starts_with("/hecate/v1/") {
                    assert_eq!(
                        schema, "#/components/schemas/ErrorEnvelope",
                        "{method} {path}"
                    );
                } else if path.starts_with("/v1/") {
                    assert_eq!(
                        schema, "#/components/schemas/GatewayErrorDto",
                        "{method} {path}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_document_is_openapi_3_1_with_spec_spelled_links() {
        let doc = document();
        assert!(
            doc["openapi"]
                .as_str()
                .is_some_and(|v| v.starts_with("3.1"))
        );
        assert!(doc["components"]["schemas"]["ErrorEnvelope"].is_object());
        let link = &doc["paths"]["/hecate/v1/agent-chat/sessions"]["post"]["responses"]["200"]["links"]
            ["GetSession"];
        assert_eq!(link["operationId"], "get_session");
        assert!(link.get("operation_id").is_none());
    }
}
