//! Context and cost for the editor (`usage_update`) on turns Hecate answers
//! itself (a model or Hecate's agent): after each model call the tokens it put
//! in the context window against the model's window, and after the turn the
//! same with the session's cost so far; plus the turn's token usage for the
//! prompt response, on every target. An external agent's own `usage_update`s
//! are relayed as they come instead.

use crate::bridges::acp::state::Shared;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::provider_call::Usage;
use crate::engine::SessionUsage;
use crate::engine::targets::TargetRef;
use agent_client_protocol::v1::schema::{Cost, SessionUpdate, Usage as AcpUsage, UsageUpdate};

/// The model a turn on `target` calls, when Hecate calls one itself.
fn model_of(shared: &Shared, target: &TargetRef) -> Option<(String, String)> {
    match target {
        TargetRef::Model { provider, model } => Some((provider.clone(), model.clone())),
        TargetRef::Hecate { model: Some(m) } => Some(m.clone()),
        TargetRef::Hecate { model: None } => {
            let model = shared.engine.default_agent_model()?;
            let (p, m) = model.split_once('/')?;
            Some((p.to_string(), m.to_string()))
        }
        TargetRef::External { .. } => None,
    }
}

/// What one turn knows about the context window of the model it calls.
pub struct Meter {
    model: Option<(String, String)>,
    window: Option<Option<u64>>,
}

impl Meter {
    /// A meter for a turn on `target` (it measures nothing on an external agent).
    pub fn new(shared: &Shared, target: &TargetRef) -> Self {
        Self {
            model: model_of(shared, target),
            window: None,
        }
    }

    /// The `usage_update` after a model call that used `usage`, when the
    /// model's window is known.
    pub async fn call(&mut self, shared: &Shared, usage: &Usage) -> Option<SessionUpdate> {
        let (provider, model) = self.model.as_ref()?;
        if self.window.is_none() {
            let caps = shared.engine.gateway().capabilities(provider, model).await;
            self.window = Some(caps.max_context_tokens);
        }
        let size = self.window.flatten()?;
        Some(SessionUpdate::UsageUpdate(UsageUpdate::new(
            usage.total_tokens,
            size,
        )))
    }

    /// The session's usage after run `run`: the closing `usage_update` (turns
    /// Hecate answered, when the window is known) and the turn's usage for the
    /// prompt response.
    pub async fn finish(
        &self,
        shared: &Shared,
        sid: &SessionId,
        run: &RunId,
    ) -> (Option<SessionUpdate>, Option<AcpUsage>) {
        let usage = match shared
            .engine
            .session_usage(&shared.config.namespace, sid, run)
            .await
        {
            Ok(u) => u,
            Err(e) => {
                tracing::debug!(error = %e, "no usage for the editor");
                return (None, None);
            }
        };
        let update = self.model.as_ref().and_then(|_| closing_update(&usage));
        let turn = usage.turn.map(|u| {
            AcpUsage::new(
                u.total_tokens.max(u.prompt_tokens + u.completion_tokens),
                u.prompt_tokens,
                u.completion_tokens,
            )
        });
        (update, turn)
    }
}

/// The `usage_update` a session's usage amounts to, when its window is known.
fn closing_update(usage: &SessionUsage) -> Option<SessionUpdate> {
    let update = UsageUpdate::new(usage.context_used?, usage.context_size?);
    let cost = usage
        .cost_micros_usd
        .map(|m| Cost::new(m as f64 / 1e6, "USD"));
    Some(SessionUpdate::UsageUpdate(update.cost(cost)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_window_and_cost_make_the_closing_update() {
        let usage = SessionUsage {
            turn: None,
            context_used: Some(120),
            context_size: Some(8192),
            cost_micros_usd: Some(2_500),
        };
        let Some(SessionUpdate::UsageUpdate(u)) = closing_update(&usage) else {
            panic!("an update");
        };
        assert_eq!((u.used, u.size), (120, 8192));
        assert_eq!(
            u.cost.map(|c| (c.amount, c.currency)),
            Some((0.0025, "USD".into()))
        );
        let unknown = SessionUsage {
            context_size: None,
            ..usage
        };
        assert!(closing_update(&unknown).is_none());
    }
}
