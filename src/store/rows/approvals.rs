//! Approvals and grants: their columns and decoders.

use super::StoredRow;
use crate::domain::approval::{Approval, ApprovalStatus, Grant};
use crate::domain::ids::{ApprovalId, GrantId, RunId, SessionId};

/// The columns a row must start with for its decoder, in the order it reads them.
pub(crate) const APPROVAL_COLUMNS: &str = "id, session_id, run_id, status, tool_kind, tool_name, \
     options_json, decision, scope, path, selected_option, created_at, expires_at, resolved_at, \
     resolved_by";

/// The columns a row must start with for its decoder, in the order it reads them.
pub(crate) const GRANT_COLUMNS: &str = "id, namespace, scope, session_id, adapter_id, workspace, tool_kind, \
     decision, created_at, expires_at, created_by";

/// An approval from a row that starts with its columns.
pub(crate) fn approval<R: StoredRow>(r: &R) -> Result<Approval, R::Error> {
    let status: String = r.col(3)?;
    let options: String = r.col(6)?;
    Ok(Approval {
        id: ApprovalId(r.col(0)?),
        session_id: SessionId(r.col(1)?),
        run_id: r.col::<Option<String>>(2)?.map(RunId),
        status: ApprovalStatus::parse(&status),
        tool_kind: r.col(4)?,
        tool_name: r.col(5)?,
        options: serde_json::from_str(&options).unwrap_or(serde_json::Value::Null),
        decision: r.col(7)?,
        scope: r.col(8)?,
        path: r.col(9)?,
        selected_option: r.col(10)?,
        created_at: r.col(11)?,
        expires_at: r.col(12)?,
        resolved_at: r.col(13)?,
        resolved_by: r.col(14)?,
    })
}

/// A grant from a row that starts with its columns.
pub(crate) fn grant<R: StoredRow>(r: &R) -> Result<Grant, R::Error> {
    Ok(Grant {
        id: GrantId(r.col(0)?),
        namespace: r.col(1)?,
        scope: r.col(2)?,
        session_id: r.col::<Option<String>>(3)?.map(SessionId),
        adapter_id: r.col(4)?,
        workspace: r.col(5)?,
        tool_kind: r.col(6)?,
        decision: r.col(7)?,
        created_at: r.col(8)?,
        expires_at: r.col(9)?,
        created_by: r.col(10)?,
    })
}
