//! The hub sessions that own approvals of proxied MCP calls (approvals always
//! belong to a session). While a call waits for approval, this process holds the
//! session's owner lease (renewed), so another process's startup reconciliation
//! does not time the approval out; when another live process holds the shared
//! session, this process uses its own.

use crate::domain::error::{ErrorType, Result};
use crate::domain::ids::SessionId;
use crate::domain::session::{RuntimeKind, Session};
use crate::engine::{Engine, Mcp};
use std::time::Duration;
use tokio::task::JoinHandle;

/// A hold on a gateway session's lease; released when the last hold drops.
pub(crate) struct GatewayHold {
    engine: Engine,
    /// The session approvals are filed under.
    pub session_id: SessionId,
}

impl Drop for GatewayHold {
    fn drop(&mut self) {
        let gw = &self.engine.mcp_hub().gateways;
        let mut held = gw.held.lock().unwrap_or_else(|p| p.into_inner());
        let last = match held.get_mut(&self.session_id) {
            Some((n, _)) => {
                *n -= 1;
                *n == 0
            }
            None => false,
        };
        if last && let Some((_, renew)) = held.remove(&self.session_id) {
            renew.abort();
            let engine = self.engine.clone();
            let sid = self.session_id.clone();
            let owner = engine.config().owner_id.clone();
            if tokio::runtime::Handle::try_current().is_ok() {
                tokio::spawn(async move {
                    let _ = engine.store().release_lease(&sid, &owner).await;
                });
            }
        }
    }
}

fn hashed(parts: &[&str]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

impl<'e> Mcp<'e> {
    async fn ensure_gateway_session(self, namespace: &str, id: &SessionId) -> Result<()> {
        let gw = &self.engine.mcp_hub().gateways;
        if gw
            .created
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(id)
        {
            return Ok(());
        }
        match self.engine.get_session(namespace, id).await {
            Ok(_) => {}
            Err(e) if e.error_type == ErrorType::NotFound => {
                let session = Session::new_idle(
                    namespace,
                    id.clone(),
                    "MCP tool calls (approvals of proxied upstream tools)",
                    RuntimeKind::Model,
                );
                if self.engine.store().create_session(&session).await.is_err() {
                    // Another process may have created it meanwhile.
                    self.engine.get_session(namespace, id).await?;
                }
            }
            Err(e) => return Err(e),
        }
        gw.created
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.clone());
        Ok(())
    }

    /// Holds this namespace's gateway session for the duration of an approval.
    pub(crate) async fn hold_gateway(self, namespace: &str) -> Result<GatewayHold> {
        let gw = &self.engine.mcp_hub().gateways;
        let _one_at_a_time = gw.acquiring.lock().await;
        let shared = SessionId(format!(
            "agent_chat_mcp_gateway_{:016x}",
            hashed(&[namespace])
        ));
        let own = SessionId(format!(
            "agent_chat_mcp_gateway_{:016x}",
            hashed(&[namespace, &self.engine.config().owner_id])
        ));
        for sid in [shared, own] {
            let already = {
                let mut held = gw.held.lock().unwrap_or_else(|p| p.into_inner());
                match held.get_mut(&sid) {
                    Some((n, _)) => {
                        *n += 1;
                        true
                    }
                    None => false,
                }
            };
            if already {
                return Ok(GatewayHold {
                    engine: self.engine.clone(),
                    session_id: sid,
                });
            }
            self.ensure_gateway_session(namespace, &sid).await?;
            let owner = self.engine.config().owner_id.clone();
            let ttl = self.engine.config().lease_ttl_ms;
            let holder = self.engine.store().acquire_lease(&sid, &owner, ttl).await?;
            if holder.is_some() {
                continue;
            }
            let renew = self.spawn_gateway_renewal(&sid);
            gw.held
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(sid.clone(), (1, renew));
            return Ok(GatewayHold {
                engine: self.engine.clone(),
                session_id: sid,
            });
        }
        Err(crate::domain::HecateError::new(
            ErrorType::SessionBusyElsewhere,
            "no gateway session could be leased for the approval",
        ))
    }

    fn spawn_gateway_renewal(self, sid: &SessionId) -> JoinHandle<()> {
        let engine = self.engine.clone();
        let sid = sid.clone();
        let every = Duration::from_millis((self.engine.config().lease_ttl_ms / 3).max(10) as u64);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let owner = engine.config().owner_id.clone();
                let ttl = engine.config().lease_ttl_ms;
                if let Err(e) = engine.store().acquire_lease(&sid, &owner, ttl).await {
                    tracing::warn!(error = %e, "gateway lease renewal failed");
                }
            }
        })
    }
}
