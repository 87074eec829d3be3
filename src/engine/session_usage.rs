//! How much of a session's context window its last model call filled, what a
//! turn used and what the session has cost so far, from its recorded provider
//! calls (what editors show as a context and cost indicator).

use super::Engine;
use crate::domain::error::Result;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::provider_call::{ProviderCall, Usage};

/// A session's usage as of the end of one of its turns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionUsage {
    /// The tokens of the turn's recorded calls, summed (none recorded: `None`).
    pub turn: Option<Usage>,
    /// Tokens of the session's last call (its prompt and answer: what the
    /// context holds now), when there is one.
    pub context_used: Option<u64>,
    /// The context window of the last call's model, when known.
    pub context_size: Option<u64>,
    /// What the session's calls of known price cost, in micro-USD (`None` when
    /// no call has a known price).
    pub cost_micros_usd: Option<i64>,
}

fn sum(calls: &[ProviderCall]) -> Option<Usage> {
    calls.iter().map(|c| c.usage).reduce(|a, b| Usage {
        prompt_tokens: a.prompt_tokens + b.prompt_tokens,
        completion_tokens: a.completion_tokens + b.completion_tokens,
        total_tokens: a.total_tokens + b.total_tokens,
    })
}

impl Engine {
    /// The usage of session `id` after its run `run`: the run's tokens, the
    /// context its last call filled against that model's window, and its cost.
    pub async fn session_usage(
        &self,
        namespace: &str,
        id: &SessionId,
        run: &RunId,
    ) -> Result<SessionUsage> {
        self.store().get_session(namespace, id).await?;
        let calls = self.store().list_provider_calls(id).await?;
        let in_run: Vec<ProviderCall> = calls
            .iter()
            .filter(|c| c.run_id.as_ref() == Some(run))
            .cloned()
            .collect();
        let last = calls.iter().max_by(|a, b| a.created_at.cmp(&b.created_at));
        let context_size = match last {
            Some(c) => {
                self.gateway()
                    .capabilities(&c.provider, &c.model)
                    .await
                    .max_context_tokens
            }
            None => None,
        };
        let priced: Vec<i64> = calls.iter().filter_map(|c| c.cost_micros_usd).collect();
        Ok(SessionUsage {
            turn: sum(&in_run),
            context_used: last.map(|c| c.usage.total_tokens),
            context_size,
            cost_micros_usd: (!priced.is_empty()).then(|| priced.iter().sum()),
        })
    }
}
