//! Approvals of a session (list, read, resolve, cancel) and the namespace's
//! standing grants (create, list, revoke).

use super::HttpState;
use super::auth::Actor;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::path_params::{GrantPath, SessionApprovalPath, SessionPath};
use crate::bridges::resources::agent::{
    ApprovalDto, ApprovalListResponse, ApprovalResponse, ApprovalsQuery, CreateGrantRequest,
    GrantDeletedDto, GrantDeletedResponse, GrantDto, GrantListResponse, GrantResponse,
    ResolveApprovalRequest,
};
use crate::domain::HecateError;
use crate::domain::approval::{Approval, ApprovalStatus, Scope};
use crate::domain::ids::{ApprovalId, GrantId, SessionId};
use crate::engine::grants::GrantRequest;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;

const STATUSES: [ApprovalStatus; 5] = [
    ApprovalStatus::Pending,
    ApprovalStatus::Approved,
    ApprovalStatus::Rejected,
    ApprovalStatus::TimedOut,
    ApprovalStatus::Cancelled,
];

fn approval_response(a: &Approval) -> Json<ApprovalResponse> {
    Json(ApprovalResponse {
        object: "agent_chat_approval".to_string(),
        data: ApprovalDto::from(a),
    })
}

/// The approval `approval_id` of session `id`; 404 when either is unknown or the
/// approval belongs to another session.
async fn of_session(
    state: &HttpState,
    id: &str,
    approval_id: &str,
) -> Result<(SessionId, ApprovalId, Approval), ApiError> {
    let sid = SessionId::from(id);
    let aid = ApprovalId::from(approval_id);
    state.engine.get_session(&state.namespace, &sid).await?;
    let approval = state.engine.approvals().get(&state.namespace, &aid).await?;
    if approval.session_id != sid {
        return Err(HecateError::not_found("approval", approval_id).into());
    }
    Ok((sid, aid, approval))
}

/// The session's approvals, optionally of one status (`?status=pending` after a
/// stream reconnect).
#[utoipa::path(
    get,
    path = "/hecate/v1/agent-chat/sessions/{id}/approvals",
    operation_id = "list_approvals",
    tag = "approvals",
    params(SessionPath, ApprovalsQuery),
    responses(
        (status = 200, description = "The session's approvals", body = ApprovalListResponse),
        (status = 400, description = "Unknown status", body = ErrorEnvelope),
        (status = 404, description = "No such session", body = ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<HttpState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiQuery(q): ApiQuery<ApprovalsQuery>,
) -> Result<Json<ApprovalListResponse>, ApiError> {
    let status = match q.status.as_deref() {
        None | Some("") => None,
        Some(s) => Some(
            STATUSES
                .into_iter()
                .find(|st| st.as_str() == s)
                .ok_or_else(|| {
                    ApiError::invalid(format!(
                        "status must be one of pending, approved, rejected, timed_out, cancelled, got {s:?}"
                    ))
                    .with_detail("status", s)
                })?,
        ),
    };
    let sid = SessionId::from(id);
    state.engine.get_session(&state.namespace, &sid).await?;
    let approvals = state
        .engine
        .approvals()
        .list(&state.namespace, Some(&sid), status)
        .await?;
    Ok(Json(ApprovalListResponse {
        object: "agent_chat_approvals".to_string(),
        data: approvals.iter().map(ApprovalDto::from).collect(),
    }))
}

/// One approval of the session.
#[utoipa::path(
    get,
    path = "/hecate/v1/agent-chat/sessions/{id}/approvals/{approval_id}",
    operation_id = "get_approval",
    tag = "approvals",
    params(SessionApprovalPath),
    responses(
        (status = 200, description = "The approval", body = ApprovalResponse),
        (status = 404, description = "No such session or approval", body = ErrorEnvelope)
    )
)]
pub async fn get(
    State(state): State<HttpState>,
    ApiPath(SessionApprovalPath { id, approval_id }): ApiPath<SessionApprovalPath>,
) -> Result<Json<ApprovalResponse>, ApiError> {
    let (_, _, approval) = of_session(&state, &id, &approval_id).await?;
    Ok(approval_response(&approval))
}

/// Decides a pending approval; a scope wider than `once` also records a grant.
/// The waiting turn continues (in whichever process runs it).
#[utoipa::path(
    post,
    path = "/hecate/v1/agent-chat/sessions/{id}/approvals/{approval_id}/resolve",
    operation_id = "resolve_approval",
    tag = "approvals",
    params(SessionApprovalPath),
    request_body = ResolveApprovalRequest,
    responses(
        (status = 200, description = "The resolved approval", body = ApprovalResponse),
        (status = 400, description = "Invalid body, or a scope the session cannot carry", body = ErrorEnvelope),
        (status = 404, description = "No such session or approval", body = ErrorEnvelope),
        (status = 409, description = "The approval is no longer pending", body = ErrorEnvelope)
    )
)]
pub async fn resolve(
    State(state): State<HttpState>,
    Actor(by): Actor,
    ApiPath(SessionApprovalPath { id, approval_id }): ApiPath<SessionApprovalPath>,
    ApiJson(req): ApiJson<ResolveApprovalRequest>,
) -> Result<Json<ApprovalResponse>, ApiError> {
    let (_, aid, _) = of_session(&state, &id, &approval_id).await?;
    let scope = req.scope.map(Scope::from).unwrap_or_default();
    let approval = state
        .engine
        .approvals()
        .resolve_as(
            &state.namespace,
            &aid,
            req.decision.into(),
            scope,
            Some(&by),
        )
        .await?;
    Ok(approval_response(&approval))
}

/// Cancels a pending approval: the agent gets the cancelled outcome.
#[utoipa::path(
    post,
    path = "/hecate/v1/agent-chat/sessions/{id}/approvals/{approval_id}/cancel",
    operation_id = "cancel_approval",
    tag = "approvals",
    params(SessionApprovalPath),
    responses(
        (status = 200, description = "The cancelled approval", body = ApprovalResponse),
        (status = 404, description = "No such session or approval", body = ErrorEnvelope),
        (status = 409, description = "The approval is no longer pending", body = ErrorEnvelope)
    )
)]
pub async fn cancel(
    State(state): State<HttpState>,
    ApiPath(SessionApprovalPath { id, approval_id }): ApiPath<SessionApprovalPath>,
) -> Result<Json<ApprovalResponse>, ApiError> {
    let (_, aid, _) = of_session(&state, &id, &approval_id).await?;
    let approval = state
        .engine
        .approvals()
        .cancel(&state.namespace, &aid)
        .await?;
    Ok(approval_response(&approval))
}

/// Records a standing grant an operator asks for directly, optionally expiring.
#[utoipa::path(
    post,
    path = "/hecate/v1/agent-chat/grants",
    operation_id = "create_grant",
    tag = "approvals",
    request_body = CreateGrantRequest,
    responses(
        (status = 201, description = "The grant", body = GrantResponse),
        (status = 400, description = "Invalid body: scope once, a missing or extra target field, a workspace that is not a directory, an expiry that is malformed or past", body = ErrorEnvelope),
        (status = 404, description = "No such session", body = ErrorEnvelope)
    )
)]
pub async fn create_grant(
    State(state): State<HttpState>,
    Actor(by): Actor,
    ApiJson(req): ApiJson<CreateGrantRequest>,
) -> Result<(StatusCode, Json<GrantResponse>), ApiError> {
    let grant = state
        .engine
        .approvals()
        .create_grant(
            &state.namespace,
            GrantRequest {
                scope: req.scope.into(),
                session_id: req.session_id.map(SessionId::from),
                workspace: req.workspace,
                adapter_id: req.adapter_id,
                tool_kind: req.tool_kind,
                decision: req.decision.into(),
                expires_at: req.expires_at,
                created_by: Some(by),
            },
        )
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(GrantResponse {
            object: "agent_chat_grant".to_string(),
            data: GrantDto::from(&grant),
        }),
    ))
}

/// The namespace's standing grants.
#[utoipa::path(
    get,
    path = "/hecate/v1/agent-chat/grants",
    operation_id = "list_grants",
    tag = "approvals",
    responses((status = 200, description = "The grants", body = GrantListResponse))
)]
pub async fn list_grants(
    State(state): State<HttpState>,
) -> Result<Json<GrantListResponse>, ApiError> {
    let grants = state
        .engine
        .approvals()
        .list_grants(&state.namespace)
        .await?;
    Ok(Json(GrantListResponse {
        object: "agent_chat_grants".to_string(),
        data: grants.iter().map(GrantDto::from).collect(),
    }))
}

/// Revokes a grant: later requests it covered are asked again.
#[utoipa::path(
    delete,
    path = "/hecate/v1/agent-chat/grants/{grant_id}",
    operation_id = "revoke_grant",
    tag = "approvals",
    params(GrantPath),
    responses(
        (status = 200, description = "Revoked", body = GrantDeletedResponse),
        (status = 404, description = "No such grant", body = ErrorEnvelope)
    )
)]
pub async fn revoke_grant(
    State(state): State<HttpState>,
    ApiPath(GrantPath { grant_id }): ApiPath<GrantPath>,
) -> Result<Json<GrantDeletedResponse>, ApiError> {
    let gid = GrantId::from(grant_id);
    state
        .engine
        .approvals()
        .revoke_grant(&state.namespace, &gid)
        .await?;
    Ok(Json(GrantDeletedResponse {
        object: "agent_chat_grant_deleted".to_string(),
        data: GrantDeletedDto {
            id: gid.to_string(),
            deleted: true,
        },
    }))
}
