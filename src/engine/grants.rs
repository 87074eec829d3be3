//! Operator-authored grants (a standing answer asked for directly, with an optional
//! expiry) and approval retention (resolved approvals pruned by age and count,
//! expired grants deleted; grants without an expiry are kept until revoked).

use super::Approvals;
use super::workspace::canonical_workspace;
use crate::domain::approval::{Decision, Grant, Scope};
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::{GrantId, SessionId};
use crate::domain::time::{format_rfc3339, now_millis, now_rfc3339, parse_millis};
use crate::store::{ApprovalPruning, PruneReport};
use std::time::Duration;
use time::OffsetDateTime;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How often `hecate serve` runs approval retention.
const RETENTION_EVERY: Duration = Duration::from_secs(3600);

/// A standing grant an operator asks for; exactly the target field its scope
/// needs is set (session, workspace or adapter).
#[derive(Debug, Clone, PartialEq)]
pub struct GrantRequest {
    /// `session`, `workspace_tool` or `adapter_tool` (`once` is refused).
    pub scope: Scope,
    /// The session, for `session` scope.
    pub session_id: Option<SessionId>,
    /// The workspace directory, for `workspace_tool` scope.
    pub workspace: Option<String>,
    /// The adapter, for `adapter_tool` scope.
    pub adapter_id: Option<String>,
    /// The tool kind covered (`edit`, `execute`, `read`, ...).
    pub tool_kind: String,
    /// The standing answer.
    pub decision: Decision,
    /// When the grant stops applying (RFC 3339, any offset; stored in UTC).
    pub expires_at: Option<String>,
    /// Who asks for it (`admin`, `key:NAME`, `cli`), recorded on the grant.
    pub created_by: Option<String>,
}

/// How long resolved approvals are kept (`None` keeps them on that axis).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalRetention {
    /// Resolved approvals older than this go.
    pub max_age: Option<Duration>,
    /// Only this many of the newest resolved approvals stay.
    pub max_count: Option<usize>,
}

impl Default for ApprovalRetention {
    fn default() -> Self {
        Self {
            max_age: Some(Duration::from_secs(30 * 24 * 3600)),
            max_count: Some(10_000),
        }
    }
}

fn invalid(field: &str, message: String) -> HecateError {
    HecateError::invalid(message).with_detail("field", field)
}

/// Parses a grant's expiry: a valid RFC 3339 instant in the future, returned in UTC.
fn expiry(at: &str) -> Result<String> {
    let ms = parse_millis(at).ok_or_else(|| {
        invalid(
            "expires_at",
            format!("expires_at {at:?} is not an RFC 3339 time such as 2026-12-01T09:00:00Z"),
        )
    })?;
    if ms <= now_millis() {
        return Err(invalid(
            "expires_at",
            format!("expires_at {at} is already past"),
        ));
    }
    let t = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .map_err(|e| invalid("expires_at", format!("expires_at {at}: {e}")))?;
    Ok(format_rfc3339(t))
}

impl<'e> Approvals<'e> {
    /// Records a standing grant an operator asked for directly. Refuses `once`, a
    /// missing or extra target field, an unknown session, a workspace that is not
    /// a directory, an empty tool kind and an expiry that is malformed or past.
    pub async fn create_grant(self, namespace: &str, req: GrantRequest) -> Result<Grant> {
        let needs = match req.scope {
            Scope::Once => {
                return Err(invalid(
                    "scope",
                    "scope once answers one request; a grant needs session, workspace_tool or adapter_tool".into(),
                ));
            }
            Scope::Session => "session_id",
            Scope::WorkspaceTool => "workspace",
            Scope::AdapterTool => "adapter_id",
        };
        for (field, set) in [
            ("session_id", req.session_id.is_some()),
            ("workspace", req.workspace.is_some()),
            ("adapter_id", req.adapter_id.is_some()),
        ] {
            if set != (field == needs) {
                return Err(invalid(
                    field,
                    if set {
                        format!("{field} does not apply to scope {}", req.scope.as_str())
                    } else {
                        format!("scope {} needs {field}", req.scope.as_str())
                    },
                ));
            }
        }
        if let Some(sid) = &req.session_id {
            self.engine.get_session(namespace, sid).await?;
        }
        let workspace = match &req.workspace {
            Some(w) => Some(canonical_workspace(w).map_err(|e| invalid("workspace", e.message))?),
            None => None,
        };
        if req
            .adapter_id
            .as_deref()
            .is_some_and(|a| a.trim().is_empty())
        {
            return Err(invalid("adapter_id", "adapter_id is empty".into()));
        }
        let tool_kind = req.tool_kind.trim();
        if tool_kind.is_empty() {
            return Err(invalid("tool_kind", "tool_kind is empty".into()));
        }
        let grant = Grant {
            id: GrantId::generate(),
            namespace: namespace.to_string(),
            scope: req.scope.as_str().into(),
            session_id: req.session_id,
            adapter_id: req.adapter_id,
            workspace,
            tool_kind: tool_kind.to_string(),
            decision: req.decision.as_str().into(),
            created_at: now_rfc3339(),
            expires_at: req.expires_at.as_deref().map(expiry).transpose()?,
            created_by: req.created_by,
        };
        self.engine.store().create_grant(&grant).await?;
        Ok(grant)
    }

    /// One retention pass over the whole store: resolved approvals past `retention`
    /// and expired grants are deleted; pending approvals are never touched.
    pub async fn prune(self, retention: ApprovalRetention) -> Result<PruneReport> {
        let now = now_millis();
        let resolved_before = retention.max_age.and_then(|age| {
            let cutoff = i128::from(now) * 1_000_000 - age.as_nanos() as i128;
            OffsetDateTime::from_unix_timestamp_nanos(cutoff)
                .ok()
                .map(format_rfc3339)
        });
        self.engine
            .store()
            .prune_approvals(&ApprovalPruning {
                resolved_before,
                keep_newest: retention.max_count,
                now_ms: now,
            })
            .await
    }

    /// Runs approval retention now and then every hour until `shutdown`; a failed
    /// pass is logged and tried again at the next tick.
    pub fn start_retention(
        self,
        retention: ApprovalRetention,
        shutdown: CancellationToken,
    ) -> JoinHandle<()> {
        let engine = self.engine.clone();
        tokio::spawn(async move {
            loop {
                match engine.approvals().prune(retention).await {
                    Ok(r) if r != PruneReport::default() => tracing::info!(
                        approvals_deleted = r.approvals_deleted,
                        grants_expired = r.grants_expired,
                        "approval retention"
                    ),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "approval retention failed"),
                }
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    () = tokio::time::sleep(RETENTION_EVERY) => {}
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiries_must_be_future_rfc3339_and_are_stored_in_utc() {
        assert!(expiry("tomorrow").is_err());
        assert!(expiry("2001-01-01T00:00:00Z").is_err());
        let stored = expiry("2999-01-01T02:00:00+02:00").expect("future");
        assert_eq!(stored, "2999-01-01T00:00:00.000Z");
    }
}
