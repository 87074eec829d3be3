//! Approval rows and grants.

use super::SqliteStore;
use crate::domain::approval::{Approval, ApprovalStatus, Grant};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::{ApprovalId, GrantId, RunId, SessionId};
use crate::domain::time::parse_millis;
use crate::store::{ApprovalPruning, ApprovalStore, PruneReport};
use async_trait::async_trait;
use rusqlite::{OptionalExtension, Row, TransactionBehavior, params};

const APPROVAL_COLUMNS: &str = "id, session_id, run_id, status, tool_kind, tool_name, \
     options_json, decision, scope, path, selected_option, created_at, expires_at, resolved_at";

fn row_to_approval(r: &Row<'_>) -> rusqlite::Result<Approval> {
    let status: String = r.get(3)?;
    let options: String = r.get(6)?;
    Ok(Approval {
        id: ApprovalId(r.get(0)?),
        session_id: SessionId(r.get(1)?),
        run_id: r.get::<_, Option<String>>(2)?.map(RunId),
        status: ApprovalStatus::parse(&status),
        tool_kind: r.get(4)?,
        tool_name: r.get(5)?,
        options: serde_json::from_str(&options).unwrap_or(serde_json::Value::Null),
        decision: r.get(7)?,
        scope: r.get(8)?,
        path: r.get(9)?,
        selected_option: r.get(10)?,
        created_at: r.get(11)?,
        expires_at: r.get(12)?,
        resolved_at: r.get(13)?,
    })
}

fn row_to_grant(r: &Row<'_>) -> rusqlite::Result<Grant> {
    Ok(Grant {
        id: GrantId(r.get(0)?),
        namespace: r.get(1)?,
        scope: r.get(2)?,
        session_id: r.get::<_, Option<String>>(3)?.map(SessionId),
        adapter_id: r.get(4)?,
        workspace: r.get(5)?,
        tool_kind: r.get(6)?,
        decision: r.get(7)?,
        created_at: r.get(8)?,
        expires_at: r.get(9)?,
    })
}

#[async_trait]
impl ApprovalStore for SqliteStore {
    async fn create_approval(&self, a: &Approval) -> Result<()> {
        let a = a.clone();
        self.write(move |c| {
            c.execute(
                &format!(
                    "INSERT INTO approvals ({APPROVAL_COLUMNS}) VALUES \
                     (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)"
                ),
                params![
                    a.id.as_str(),
                    a.session_id.as_str(),
                    a.run_id.as_ref().map(|r| r.as_str()),
                    a.status.as_str(),
                    a.tool_kind,
                    a.tool_name,
                    serde_json::to_string(&a.options)?,
                    a.decision,
                    a.scope,
                    a.path,
                    a.selected_option,
                    a.created_at,
                    a.expires_at,
                    a.resolved_at,
                ],
            )?;
            Ok(())
        })
        .await
    }

    async fn get_approval(&self, id: &ApprovalId) -> Result<Approval> {
        let id = id.clone();
        self.read(move |c| {
            c.query_row(
                &format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = ?1"),
                params![id.as_str()],
                row_to_approval,
            )
            .optional()?
            .ok_or_else(|| HecateError::not_found("approval", id.as_str()).into())
        })
        .await
    }

    async fn list_approvals(
        &self,
        namespace: &str,
        session_id: Option<&SessionId>,
        status: Option<ApprovalStatus>,
    ) -> Result<Vec<Approval>> {
        let (namespace, session_id) = (namespace.to_owned(), session_id.cloned());
        self.read(move |c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {APPROVAL_COLUMNS} FROM approvals \
                 WHERE session_id IN (SELECT id FROM sessions WHERE namespace = ?3) \
                 AND (?1 IS NULL OR session_id = ?1) AND (?2 IS NULL OR status = ?2) \
                 ORDER BY created_at, id"
            ))?;
            let rows = stmt.query_map(
                params![
                    session_id.as_ref().map(|s| s.as_str()),
                    status.map(|s| s.as_str()),
                    namespace
                ],
                row_to_approval,
            )?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
        .await
    }

    async fn resolve_approval(&self, a: &Approval) -> Result<()> {
        let a = a.clone();
        self.write(move |c| {
            let n = c.execute(
                "UPDATE approvals SET status = ?2, decision = ?3, scope = ?4, path = ?5, \
                 selected_option = ?6, resolved_at = ?7 WHERE id = ?1 AND status = 'pending'",
                params![
                    a.id.as_str(),
                    a.status.as_str(),
                    a.decision,
                    a.scope,
                    a.path,
                    a.selected_option,
                    a.resolved_at,
                ],
            )?;
            if n == 0 {
                let exists: Option<String> = c
                    .query_row(
                        "SELECT status FROM approvals WHERE id = ?1",
                        params![a.id.as_str()],
                        |r| r.get(0),
                    )
                    .optional()?;
                return Err(match exists {
                    None => HecateError::not_found("approval", a.id.as_str()),
                    Some(st) => HecateError::new(
                        ErrorType::Conflict,
                        format!("approval {} is already {st}", a.id),
                    )
                    .with_detail("status", st),
                }
                .into());
            }
            Ok(())
        })
        .await
    }

    async fn create_grant(&self, g: &Grant) -> Result<()> {
        let g = g.clone();
        self.write(move |c| {
            c.execute(
                "INSERT INTO grants (id, namespace, scope, session_id, adapter_id, workspace, \
                 tool_kind, decision, created_at, expires_at) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
                params![
                    g.id.as_str(),
                    g.namespace,
                    g.scope,
                    g.session_id.as_ref().map(|s| s.as_str()),
                    g.adapter_id,
                    g.workspace,
                    g.tool_kind,
                    g.decision,
                    g.created_at,
                    g.expires_at,
                ],
            )?;
            Ok(())
        })
        .await
    }

    async fn list_grants(&self, namespace: &str) -> Result<Vec<Grant>> {
        let namespace = namespace.to_owned();
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, namespace, scope, session_id, adapter_id, workspace, tool_kind, \
                 decision, created_at, expires_at FROM grants WHERE namespace = ?1 \
                 ORDER BY created_at, id",
            )?;
            let rows = stmt.query_map(params![namespace], row_to_grant)?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
        .await
    }

    async fn prune_approvals(&self, pruning: &ApprovalPruning) -> Result<PruneReport> {
        let pruning = pruning.clone();
        self.write(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut report = PruneReport::default();
            if let Some(before) = &pruning.resolved_before {
                report.approvals_deleted += tx.execute(
                    "DELETE FROM approvals WHERE status <> 'pending' \
                     AND COALESCE(resolved_at, created_at) < ?1",
                    params![before],
                )?;
            }
            if let Some(keep) = pruning.keep_newest {
                report.approvals_deleted += tx.execute(
                    "DELETE FROM approvals WHERE status <> 'pending' AND id NOT IN \
                     (SELECT id FROM approvals WHERE status <> 'pending' \
                      ORDER BY COALESCE(resolved_at, created_at) DESC, id DESC LIMIT ?1)",
                    params![i64::try_from(keep).unwrap_or(i64::MAX)],
                )?;
            }
            // Expiries are compared as instants, whatever offset they were written in.
            let expired: Vec<String> = {
                let mut stmt =
                    tx.prepare("SELECT id, expires_at FROM grants WHERE expires_at IS NOT NULL")?;
                let rows =
                    stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
                let mut ids = Vec::new();
                for row in rows {
                    let (id, at) = row?;
                    if parse_millis(&at).is_some_and(|ms| ms < pruning.now_ms) {
                        ids.push(id);
                    }
                }
                ids
            };
            for id in &expired {
                report.grants_expired += tx.execute("DELETE FROM grants WHERE id = ?1", [id])?;
            }
            tx.commit()?;
            Ok(report)
        })
        .await
    }

    async fn revoke_grant(&self, namespace: &str, id: &GrantId) -> Result<()> {
        let (namespace, id) = (namespace.to_owned(), id.clone());
        self.write(move |c| {
            let n = c.execute(
                "DELETE FROM grants WHERE namespace = ?1 AND id = ?2",
                params![namespace, id.as_str()],
            )?;
            if n == 0 {
                return Err(HecateError::not_found("grant", id.as_str()).into());
            }
            Ok(())
        })
        .await
    }
}
