//! Approval rows and grants.

use super::SqliteStore;
use super::reads::{all, one};
use crate::domain::approval::{Approval, Grant};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::{ApprovalId, GrantId};
use crate::domain::time::parse_millis;
use crate::store::rows::approvals::{self as decode, APPROVAL_COLUMNS, GRANT_COLUMNS};
use crate::store::{ApprovalPruning, ApprovalQuery, ApprovalStore, PruneReport};
use async_trait::async_trait;
use rusqlite::{OptionalExtension, TransactionBehavior, params};

#[async_trait]
impl ApprovalStore for SqliteStore {
    async fn create_approval(&self, a: &Approval) -> Result<()> {
        let a = a.clone();
        self.write(move |c| {
            c.execute(
                &format!(
                    "INSERT INTO approvals ({APPROVAL_COLUMNS}) VALUES \
                     (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)"
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
                    a.resolved_by,
                ],
            )?;
            Ok(())
        })
        .await
    }

    async fn get_approval(&self, id: &ApprovalId) -> Result<Approval> {
        let id = id.clone();
        self.read(move |c| {
            one(
                c,
                &format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = ?1"),
                params![id.as_str()],
                |r| decode::approval(r),
                "approval",
                id.as_str(),
            )
        })
        .await
    }

    async fn list_approvals(&self, query: ApprovalQuery<'_>) -> Result<Vec<Approval>> {
        let status = query.status;
        let (namespace, session_id) = (query.namespace.to_owned(), query.session_id.cloned());
        self.read(move |c| {
            all(
                c,
                &format!(
                    "SELECT {APPROVAL_COLUMNS} FROM approvals \
                     WHERE session_id IN (SELECT id FROM sessions WHERE namespace = ?3) \
                     AND (?1 IS NULL OR session_id = ?1) AND (?2 IS NULL OR status = ?2) \
                     ORDER BY created_at, id"
                ),
                params![
                    session_id.as_ref().map(|s| s.as_str()),
                    status.map(|s| s.as_str()),
                    namespace
                ],
                |r| decode::approval(r),
            )
        })
        .await
    }

    async fn resolve_approval(&self, a: &Approval) -> Result<()> {
        let a = a.clone();
        self.write(move |c| {
            let n = c.execute(
                "UPDATE approvals SET status = ?2, decision = ?3, scope = ?4, path = ?5, \
                 selected_option = ?6, resolved_at = ?7, resolved_by = ?8 \
                 WHERE id = ?1 AND status = 'pending'",
                params![
                    a.id.as_str(),
                    a.status.as_str(),
                    a.decision,
                    a.scope,
                    a.path,
                    a.selected_option,
                    a.resolved_at,
                    a.resolved_by,
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
                &format!(
                    "INSERT INTO grants ({GRANT_COLUMNS}) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)"
                ),
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
                    g.created_by,
                ],
            )?;
            Ok(())
        })
        .await
    }

    async fn list_grants(&self, namespace: &str) -> Result<Vec<Grant>> {
        let namespace = namespace.to_owned();
        self.read(move |c| {
            all(
                c,
                &format!(
                    "SELECT {GRANT_COLUMNS} FROM grants WHERE namespace = ?1 \
                     ORDER BY created_at, id"
                ),
                params![namespace],
                |r| decode::grant(r),
            )
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
