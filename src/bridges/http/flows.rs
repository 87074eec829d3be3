//! The client-hosted agents for operators: the flow catalog as it loaded
//! (`GET /hecate/v1/flows`, broken files included) and an agent's chats
//! (`GET /hecate/v1/flows/{agent_id}/chats`), every caller's.

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::{ApiPath, ApiQuery};
use crate::bridges::resources::flow_chat::{
    FlowCatalogDto, FlowCatalogResponse, FlowChatListResponse, FlowChatSummaryDto, FlowChatsQuery,
};
use crate::bridges::resources::page_size;
use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;

/// The agents whose flow files loaded, and the files that did not (with the
/// field at fault).
#[utoipa::path(
    get,
    path = "/hecate/v1/flows",
    operation_id = "list_flow_agents",
    tag = "chats",
    responses((status = 200, description = "The flow catalog", body = FlowCatalogResponse))
)]
pub async fn catalog(State(state): State<HttpState>) -> Json<FlowCatalogResponse> {
    Json(FlowCatalogResponse {
        object: "flow_catalog".into(),
        data: FlowCatalogDto::from(state.engine.flows().catalog()),
    })
}

/// `{agent_id}` of a flow agent.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct FlowAgentPath {
    /// The agent id (its flow file's stem).
    pub agent_id: String,
}

/// The chats of one agent, every caller's, most recently updated first.
#[utoipa::path(
    get,
    path = "/hecate/v1/flows/{agent_id}/chats",
    operation_id = "list_flow_agent_chats",
    tag = "chats",
    params(FlowAgentPath, FlowChatsQuery),
    responses(
        (status = 200, description = "The chats", body = FlowChatListResponse),
        (status = 400, description = "A limit out of range", body = ErrorEnvelope),
        (status = 404, description = "No flow file names the agent (chat.agent_not_found)", body = ErrorEnvelope)
    )
)]
pub async fn chats(
    State(state): State<HttpState>,
    ApiPath(path): ApiPath<FlowAgentPath>,
    ApiQuery(q): ApiQuery<FlowChatsQuery>,
) -> Result<Json<FlowChatListResponse>, ApiError> {
    let limit = page_size(q.limit, 50)?;
    let chats = state
        .engine
        .flows()
        .agent_chats(&state.namespace, &path.agent_id, limit)
        .await?;
    Ok(Json(FlowChatListResponse {
        object: "flow_chats".into(),
        data: chats.iter().map(FlowChatSummaryDto::from).collect(),
    }))
}
