//! The MCP `ServerHandler` of a connection: capabilities and instructions, then
//! each request handed to the tools, resources, prompts and upstream files.
//! rmcp answers `server/discover` from the same capabilities and serves a
//! request carrying its revision, capabilities and client in `_meta`
//! (2026-07-28) without `initialize`; such a `tools/call` runs in rounds
//! (`modern::rounds`) and `subscriptions/listen` streams updates
//! (`modern::listen`). A `traceparent` in a call's `_meta` parents its span.

use super::access::{call_refusal, identity_of, is_read_only};
use super::errors::{protocol_error, resource_not_found};
use super::modern::is_modern;
use super::modern::progress::ProgressRoute;
use super::modern::trace::adopt_caller;
use super::server::HecateMcp;
use super::watch;
use crate::domain::api_key::{Identity, OWN_TOOLS_SERVER};
use crate::engine::ToolLoading;
use crate::telemetry::spans::{mcp_server_call, mcp_server_end};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ResultType, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
// Logging is SEP-2577-deprecated in rmcp but still part of protocol 2025-11-25.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::time::Duration;
use tracing::Instrument as _;

/// How much longer than an approval may wait a parked call waits for the
/// client's next round.
const ROUND_GRACE: Duration = Duration::from_secs(60);

/// Instructions sent to clients in `initialize` and `server/discover`.
const INSTRUCTIONS: &str = "Hecate is a local hub for coding agents and models. Use list_sessions / \
get_transcript to read conversations shared with the CLI and HTTP API, ask_agent to delegate a task \
to another agent (agent:ID from list_adapters) or a model (model:PROVIDER/MODEL), and \
list_approvals / resolve_approval for pending permission requests. create_task / start_task run \
durable shell, git and file tasks (with wait, their approval gates are asked by elicitation when \
you support it). Tools named SERVER__tool are \
upstream MCP servers proxied under Hecate's policy. Resources hecate://sessions/{id} are live \
transcripts you can subscribe to (subscriptions/listen on protocol 2026-07-28).";

impl HecateMcp {
    /// Calls Hecate's own tool or an upstream one, as `identity` may.
    async fn dispatch(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let identity = identity_of(&context.extensions);
        if self.is_hub() && self.own.has_route(&request.name) {
            let read_only = self.own.get(&request.name).is_some_and(is_read_only);
            if let Some(refusal) =
                call_refusal(&identity, OWN_TOOLS_SERVER, &request.name, read_only)
            {
                return Err(refusal);
            }
            // Hecate's own tools read it as `Extension<Identity>`.
            context.extensions.insert(identity);
            return self
                .own
                .call(ToolCallContext::new(self, request, context))
                .await;
        }
        self.call_upstream(request, context).await
    }

    /// A call of a 2026-07-28 client: a first round starts it in a task of its
    /// own, a round carrying `requestState` resumes it with the client's
    /// `inputResponses`; either ends with the result or the next questions.
    async fn call_in_rounds(
        &self,
        mut request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = match identity_of(&context.extensions) {
            Identity::Key(k) => format!("key:{}", k.id),
            other => other.label(),
        };
        let owner = format!("{caller}/{}", request.name);
        let ttl = self.engine.config().approval_timeout + ROUND_GRACE;
        let ct = context.ct.clone();
        let answer = if let Some(state) = request.request_state.take() {
            let responses = request.input_responses.take();
            self.rounds
                .resume(&state, owner, responses, ttl, &ct, Some(&context))
                .await
        } else {
            let this = self.clone();
            let span = tracing::Span::current();
            let route = ProgressRoute::default();
            route.follow(&context);
            self.rounds
                .start(owner, ttl, &ct, route.clone(), move |asker, cancel| {
                    context.extensions.insert(asker);
                    // Its progress follows the round the client waits on.
                    context.extensions.insert(route);
                    // The call outlives this request: only dropping it cancels it.
                    context.ct = cancel;
                    async move { this.dispatch(request, context).await }.instrument(span)
                })
                .await
        };
        // 2026-07-28 results name their type; an upstream's relayed result
        // (from an older revision) does not.
        answer.map(|response| match response {
            CallToolResponse::Complete(mut r) => {
                r.result_type.get_or_insert(ResultType::COMPLETE);
                CallToolResponse::Complete(r)
            }
            other => other,
        })
    }
}

impl ServerHandler for HecateMcp {
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(caps)
            .with_server_info(
                Implementation::new("hecate", env!("CARGO_PKG_VERSION")).with_title("Hecate"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.conn.peer.set(context.peer.clone()).is_ok() {
            watch::start(self, context.peer);
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let identity = identity_of(&context.extensions);
        let mut tools = self.own_tools_for(&identity);
        // In search mode a hub lists its own tools only; upstream tools are
        // found with `search_tools` and still called by name.
        if !(self.is_hub() && self.opts.tool_loading == ToolLoading::Search) {
            tools.extend(self.upstream_tools(&identity).await);
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        if self.is_hub() {
            self.own.get(name).cloned()
        } else {
            None
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let span = mcp_server_call(&request.name);
        adopt_caller(&span, &context.meta);
        let answer = if is_modern(&context) {
            self.call_in_rounds(request, context)
                .instrument(span.clone())
                .await
        } else {
            self.dispatch(request, context)
                .instrument(span.clone())
                .await
        };
        match &answer {
            Err(e) => mcp_server_end(&span, Some(("error", &e.message))),
            Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => {
                mcp_server_end(&span, Some(("tool_error", "the tool answered an error")))
            }
            Ok(_) => mcp_server_end(&span, None),
        }
        answer
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let identity = identity_of(&context.extensions);
        Ok(ListResourcesResult::with_all_items(
            self.resources(&identity).await,
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let identity = identity_of(&context.extensions);
        Ok(ListResourceTemplatesResult::with_all_items(
            self.resource_templates(&identity).await,
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let identity = identity_of(&context.extensions);
        self.read(&request.uri, &identity).await.map(Into::into)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(self.honoured(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.serve_listen(context).await
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !self.may_see_resource(&identity_of(&context.extensions), &request.uri) {
            return Err(resource_not_found(&request.uri));
        }
        self.subscribe_uri(&request.uri).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.unsubscribe_uri(&request.uri).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let identity = identity_of(&context.extensions);
        Ok(ListPromptsResult::with_all_items(
            self.prompts(&identity).await,
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let identity = identity_of(&context.extensions);
        self.prompt(&request.name, request.arguments, &identity)
            .await
            .map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let Some(server) = &self.opts.upstream else {
            return Ok(CompleteResult::default());
        };
        let params = serde_json::to_value(&request).unwrap_or_default();
        match self.engine.mcp().complete(server, params).await {
            Ok(v) => serde_json::from_value(v)
                .map_err(|e| ErrorData::internal_error(format!("upstream completion: {e}"), None)),
            Err(e) => Err(protocol_error(&e)),
        }
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }
}
