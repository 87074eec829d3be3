//! The runtime for remote A2A agents: each agent declared in `[a2a_agents]` is
//! a catalog entry (`driver_kind = "a2a"`) whose turns are A2A messages. Its
//! card is fetched once and cached (fetched again after a failure), its
//! streaming used when the card offers it, a Hecate session's conversation is
//! one A2A `contextId` (kept as the session's native session id), and a fresh
//! context after a hand-off is primed with the transcript.

use crate::adapters::a2a::{CardCache, RemoteAgentSpec};
use crate::domain::error::{ErrorType, HecateError};
use crate::runtimes::{TurnContext, TurnEnd, TurnReport, TurnTarget};
use std::collections::BTreeMap;

mod errors;
mod prompt;
mod turn;

pub use errors::into_hecate;

/// One declared remote agent and its cached card.
#[derive(Debug)]
struct Remote {
    spec: RemoteAgentSpec,
    card: CardCache,
}

/// A remote agent as the catalog shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteStatus {
    /// The catalog id.
    pub id: String,
    /// The configured name, else the card's, else the id.
    pub name: String,
    /// Where its card is served.
    pub card_url: String,
    /// The binding Hecate speaks to it (`JSONRPC` or `HTTP+JSON`), when its card read.
    pub binding: Option<String>,
    /// Whether its card offers streaming.
    pub streaming: bool,
    /// Whether its card read and offers a usable interface.
    pub available: bool,
    /// Why it is unavailable: a stable reason and the error's words.
    pub reason: Option<(String, String)>,
}

/// Drives turns on remote A2A agents.
#[derive(Debug)]
pub struct A2aRuntime {
    http: reqwest::Client,
    agents: BTreeMap<String, Remote>,
}

impl A2aRuntime {
    /// A runtime over the agents `specs` declares, calling them with `http`.
    pub fn new(http: reqwest::Client, specs: Vec<RemoteAgentSpec>) -> Self {
        let agents = specs
            .into_iter()
            .map(|spec| {
                (
                    spec.id.clone(),
                    Remote {
                        spec,
                        card: CardCache::default(),
                    },
                )
            })
            .collect();
        Self { http, agents }
    }

    /// Whether `id` is a declared remote agent.
    pub fn has_agent(&self, id: &str) -> bool {
        self.agents.contains_key(id)
    }

    /// The declared agents' ids, sorted.
    pub fn ids(&self) -> Vec<String> {
        self.agents.keys().cloned().collect()
    }

    /// The display name of agent `id`: the configured one, else the id.
    pub fn name_of(&self, id: &str) -> Option<String> {
        let r = self.agents.get(id)?;
        Some(r.spec.name.clone().unwrap_or_else(|| id.to_string()))
    }

    /// Every declared agent with its readiness, its card fetched when not cached
    /// (all at once, each within its card timeout).
    pub async fn status(&self) -> Vec<RemoteStatus> {
        futures::future::join_all(self.agents.values().map(|r| async move {
            let card = r.card.get(&self.http, &r.spec).await;
            let name = r.spec.name.clone();
            match card {
                Ok(c) => RemoteStatus {
                    id: r.spec.id.clone(),
                    name: name.unwrap_or(c.name),
                    card_url: r.spec.card_url.clone(),
                    binding: Some(c.endpoint.binding.name().to_string()),
                    streaming: c.streaming,
                    available: true,
                    reason: None,
                },
                Err(e) => RemoteStatus {
                    id: r.spec.id.clone(),
                    name: name.unwrap_or_else(|| r.spec.id.clone()),
                    card_url: r.spec.card_url.clone(),
                    binding: None,
                    streaming: false,
                    available: false,
                    reason: Some((e.reason().to_string(), e.to_string())),
                },
            }
        }))
        .await
    }

    /// Runs one turn on the session's remote agent.
    pub async fn run(&self, ctx: TurnContext) -> TurnReport {
        let TurnTarget::External {
            adapter_id,
            native_session_id,
            ..
        } = ctx.target.clone()
        else {
            return TurnReport::ended(TurnEnd::Failed(HecateError::new(
                ErrorType::RuntimeMismatch,
                "the A2A runtime can only run external-agent turns",
            )));
        };
        let Some(remote) = self.agents.get(&adapter_id) else {
            return TurnReport::ended(TurnEnd::Failed(HecateError::new(
                ErrorType::AdapterNotFound,
                format!("remote A2A agent {adapter_id:?} is not declared"),
            )));
        };
        let card = match remote.card.get(&self.http, &remote.spec).await {
            Ok(c) => c,
            Err(e) => return TurnReport::ended(TurnEnd::Failed(into_hecate(&e, &adapter_id))),
        };
        let client = crate::adapters::a2a::A2aClient::new(
            self.http.clone(),
            card.endpoint.clone(),
            remote.spec.token.clone(),
            remote.spec.request_timeout,
        );
        let text = prompt::prompt_text(
            &ctx.history,
            native_session_id.is_none(),
            ctx.recalled.as_deref(),
        );
        let started = std::time::Instant::now();
        let outcome = turn::drive(
            &client,
            &ctx,
            turn::Start {
                text,
                context_id: native_session_id.clone(),
                streaming: card.streaming,
            },
        )
        .await;
        let mut report = TurnReport::ended(TurnEnd::Completed);
        report.duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        report.native_session_id = outcome.context_id.or(native_session_id);
        report.end = match outcome.end {
            turn::Ending::Completed => TurnEnd::Completed,
            turn::Ending::Cancelled => TurnEnd::Cancelled,
            turn::Ending::Failed(e) => {
                if let turn::TurnError::Client(c) = &e
                    && c.stales_card()
                {
                    remote.card.forget();
                }
                TurnEnd::Failed(e.into_hecate(&adapter_id))
            }
        };
        report
    }
}
