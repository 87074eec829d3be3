//! Approval rows and grants.

use super::{OpResult, PostgresStore, conflict, limit};
use crate::domain::approval::{Approval, Grant};
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::{ApprovalId, GrantId};
use crate::domain::time::parse_millis;
use crate::store::rows::approvals::{self as decode, APPROVAL_COLUMNS, GRANT_COLUMNS};
use crate::store::{ApprovalPruning, ApprovalQuery, ApprovalStore, PruneReport};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;

async fn prune<C: GenericClient>(tx: &C, pruning: &ApprovalPruning) -> OpResult<PruneReport> {
    let mut report = PruneReport::default();
    if let Some(before) = &pruning.resolved_before {
        report.approvals_deleted += tx
            .execute(
                "DELETE FROM approvals WHERE status <> 'pending' \
                 AND COALESCE(resolved_at, created_at) < $1",
                &[before],
            )
            .await? as usize;
    }
    if let Some(keep) = pruning.keep_newest {
        report.approvals_deleted += tx
            .execute(
                "DELETE FROM approvals WHERE status <> 'pending' AND id NOT IN \
                 (SELECT id FROM approvals WHERE status <> 'pending' \
                  ORDER BY COALESCE(resolved_at, created_at) DESC, id DESC LIMIT $1)",
                &[&limit(keep)],
            )
            .await? as usize;
    }
    // Expiries are compared as instants, whatever offset they were written in.
    let rows = tx
        .query(
            "SELECT id, expires_at FROM grants WHERE expires_at IS NOT NULL",
            &[],
        )
        .await?;
    for row in &rows {
        let (id, at): (String, String) = (row.try_get(0)?, row.try_get(1)?);
        if parse_millis(&at).is_some_and(|ms| ms < pruning.now_ms) {
            report.grants_expired += tx
                .execute("DELETE FROM grants WHERE id = $1", &[&id])
                .await? as usize;
        }
    }
    Ok(report)
}

#[async_trait]
impl ApprovalStore for PostgresStore {
    async fn create_approval(&self, a: &Approval) -> Result<()> {
        let c = self.client().await?;
        let r: OpResult<()> = async {
            let sql = format!(
                "INSERT INTO approvals ({APPROVAL_COLUMNS}) VALUES \
                 ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15)"
            );
            c.execute(
                sql.as_str(),
                &[
                    &a.id.as_str(),
                    &a.session_id.as_str(),
                    &a.run_id.as_ref().map(|r| r.as_str()),
                    &a.status.as_str(),
                    &a.tool_kind,
                    &a.tool_name,
                    &serde_json::to_string(&a.options)?,
                    &a.decision,
                    &a.scope,
                    &a.path,
                    &a.selected_option,
                    &a.created_at,
                    &a.expires_at,
                    &a.resolved_at,
                    &a.resolved_by,
                ],
            )
            .await?;
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn get_approval(&self, id: &ApprovalId) -> Result<Approval> {
        let c = self.client().await?;
        let r = async {
            let sql = format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = $1");
            match c.query_opt(sql.as_str(), &[&id.as_str()]).await? {
                Some(row) => decode::approval(&row),
                None => Err(HecateError::not_found("approval", id.as_str()).into()),
            }
        }
        .await;
        self.done(r)
    }

    async fn list_approvals(&self, query: ApprovalQuery<'_>) -> Result<Vec<Approval>> {
        let c = self.client().await?;
        let r = async {
            let sql = format!(
                "SELECT {APPROVAL_COLUMNS} FROM approvals \
                 WHERE session_id IN (SELECT id FROM sessions WHERE namespace = $3) \
                 AND ($1::TEXT IS NULL OR session_id = $1) \
                 AND ($2::TEXT IS NULL OR status = $2) \
                 ORDER BY created_at, id"
            );
            let rows = c
                .query(
                    sql.as_str(),
                    &[
                        &query.session_id.map(|s| s.as_str()),
                        &query.status.map(|s| s.as_str()),
                        &query.namespace,
                    ],
                )
                .await?;
            rows.iter()
                .map(decode::approval)
                .collect::<OpResult<Vec<_>>>()
        }
        .await;
        self.done(r)
    }

    async fn resolve_approval(&self, a: &Approval) -> Result<()> {
        let c = self.client().await?;
        let r: OpResult<()> = async {
            let n = c
                .execute(
                    "UPDATE approvals SET status = $2, decision = $3, scope = $4, path = $5, \
                     selected_option = $6, resolved_at = $7, resolved_by = $8 \
                     WHERE id = $1 AND status = 'pending'",
                    &[
                        &a.id.as_str(),
                        &a.status.as_str(),
                        &a.decision,
                        &a.scope,
                        &a.path,
                        &a.selected_option,
                        &a.resolved_at,
                        &a.resolved_by,
                    ],
                )
                .await?;
            if n == 0 {
                let exists = c
                    .query_opt(
                        "SELECT status FROM approvals WHERE id = $1",
                        &[&a.id.as_str()],
                    )
                    .await?;
                return Err(match exists {
                    None => HecateError::not_found("approval", a.id.as_str()),
                    Some(row) => {
                        let st: String = row.try_get(0)?;
                        conflict(format!("approval {} is already {st}", a.id))
                            .with_detail("status", st)
                    }
                }
                .into());
            }
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn create_grant(&self, g: &Grant) -> Result<()> {
        let c = self.client().await?;
        let r: OpResult<()> = async {
            let sql = format!(
                "INSERT INTO grants ({GRANT_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)"
            );
            c.execute(
                sql.as_str(),
                &[
                    &g.id.as_str(),
                    &g.namespace,
                    &g.scope,
                    &g.session_id.as_ref().map(|s| s.as_str()),
                    &g.adapter_id,
                    &g.workspace,
                    &g.tool_kind,
                    &g.decision,
                    &g.created_at,
                    &g.expires_at,
                    &g.created_by,
                ],
            )
            .await?;
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn list_grants(&self, namespace: &str) -> Result<Vec<Grant>> {
        let c = self.client().await?;
        let r = async {
            let sql = format!(
                "SELECT {GRANT_COLUMNS} FROM grants WHERE namespace = $1 ORDER BY created_at, id"
            );
            let rows = c.query(sql.as_str(), &[&namespace]).await?;
            rows.iter().map(decode::grant).collect::<OpResult<Vec<_>>>()
        }
        .await;
        self.done(r)
    }

    async fn prune_approvals(&self, pruning: &ApprovalPruning) -> Result<PruneReport> {
        let mut c = self.client().await?;
        let r = async {
            let tx = c.transaction().await?;
            let report = prune(&tx, pruning).await?;
            tx.commit().await?;
            Ok(report)
        }
        .await;
        self.done(r)
    }

    async fn revoke_grant(&self, namespace: &str, id: &GrantId) -> Result<()> {
        let c = self.client().await?;
        let r: OpResult<()> = async {
            let n = c
                .execute(
                    "DELETE FROM grants WHERE namespace = $1 AND id = $2",
                    &[&namespace, &id.as_str()],
                )
                .await?;
            if n == 0 {
                return Err(HecateError::not_found("grant", id.as_str()).into());
            }
            Ok(())
        }
        .await;
        self.done(r)
    }
}
