//! The model runtime: one streaming provider call per turn.

use crate::adapters::providers::pricing::Pricebook;
use crate::adapters::providers::{ChatRequest, ProviderClient, ProviderError, StreamDelta};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::event::RuntimeEvent;
use crate::domain::message::{Message, plain_text};
use crate::runtimes::{TurnContext, TurnEnd, TurnReport, TurnTarget};
use std::collections::BTreeMap;
use std::time::Instant;

/// Default output token cap for a model turn.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

pub use super::model_target::ModelTarget;

/// Answers turns by calling configured providers.
#[derive(Debug, Clone, Default)]
pub struct ModelRuntime {
    providers: BTreeMap<String, ProviderClient>,
    pricebook: Pricebook,
    max_tokens: u32,
}

impl ModelRuntime {
    /// A runtime over the given provider clients and prices.
    pub fn new(providers: Vec<ProviderClient>, pricebook: Pricebook) -> Self {
        Self {
            providers: providers
                .into_iter()
                .map(|p| (p.config().name.clone(), p))
                .collect(),
            pricebook,
            max_tokens: DEFAULT_MAX_TOKENS,
        }
    }

    /// The configured client of `provider`.
    pub fn client(&self, provider: &str) -> Option<&ProviderClient> {
        self.providers.get(provider)
    }

    /// The prices turns are costed with.
    pub fn pricebook(&self) -> &Pricebook {
        &self.pricebook
    }

    /// The configured provider clients, by name.
    pub fn providers(&self) -> impl Iterator<Item = &ProviderClient> {
        self.providers.values()
    }

    /// Resolves `model` (either `provider/model`, whose first segment must name a
    /// configured provider, or a bare model) and an optional explicit provider to a
    /// configured target.
    pub fn resolve(&self, provider: Option<&str>, model: &str) -> Result<ModelTarget> {
        let model = model.trim();
        if model.is_empty() {
            return Err(HecateError::new(
                ErrorType::ModelRequired,
                "no model selected",
            ));
        }
        let (provider, model) = match (provider, model.split_once('/')) {
            (Some(p), _) if !p.is_empty() => (p.to_string(), model.to_string()),
            (_, Some((p, m))) => (p.to_string(), m.to_string()),
            (_, None) => {
                let candidates: Vec<&String> = self
                    .providers
                    .iter()
                    .filter(|(_, c)| c.config().models.iter().any(|m| m == model))
                    .map(|(n, _)| n)
                    .collect();
                match (candidates.as_slice(), self.providers.len()) {
                    ([one], _) => ((*one).clone(), model.to_string()),
                    ([], 1) => (
                        self.providers.keys().next().cloned().unwrap_or_default(),
                        model.to_string(),
                    ),
                    _ => {
                        return Err(self.route_impossible(model));
                    }
                }
            }
        };
        let Some(client) = self.providers.get(&provider) else {
            return Err(self.route_impossible(&format!("{provider}/{model}")));
        };
        let declared = &client.config().models;
        if !declared.is_empty() && !declared.iter().any(|m| m == &model) {
            return Err(HecateError::new(
                ErrorType::ModelNotConfigured,
                format!(
                    "model {model:?} is not among the models declared for provider {provider:?}"
                ),
            )
            .with_detail("provider", provider.clone())
            .with_detail("model", model.clone())
            .with_detail("suggested_models", declared.clone()));
        }
        Ok(ModelTarget { provider, model })
    }

    fn route_impossible(&self, wanted: &str) -> HecateError {
        let configured: Vec<String> = self.providers.keys().cloned().collect();
        HecateError::new(
            ErrorType::RouteImpossible,
            format!("no configured provider serves {wanted:?} (configured: {configured:?})"),
        )
        .with_detail("configured_providers", configured)
    }

    /// One plain provider call outside any turn (such as writing a summary): the
    /// answer's text; `Err(Ok(_))` is the provider's own failure (which another
    /// provider may not share), `Err(Err(_))` one that is not the provider's.
    pub async fn complete(
        &self,
        target: &ModelTarget,
        system: Option<String>,
        messages: Vec<Message>,
    ) -> std::result::Result<String, std::result::Result<ProviderError, HecateError>> {
        let Some(client) = self.providers.get(&target.provider) else {
            return Err(Err(self.route_impossible(&target.provider)));
        };
        let req = ChatRequest {
            model: target.model.clone(),
            system,
            messages,
            max_tokens: self.max_tokens,
            tools: Vec::new(),
            reasoning_effort: None,
        };
        let outcome = client
            .stream_chat(&req, &mut |_| {})
            .await
            .map_err(|f| Ok(f.error))?;
        Ok(plain_text(&outcome.blocks))
    }

    /// Runs one turn: streams the provider's answer as events and reports the end.
    pub async fn run(&self, ctx: TurnContext) -> TurnReport {
        let mut report = TurnReport::ended(TurnEnd::Completed);
        let (provider, model) = match &ctx.target {
            TurnTarget::Model {
                provider, model, ..
            } => (provider.clone(), model.clone()),
            TurnTarget::External { .. } | TurnTarget::Agent { .. } => {
                return TurnReport::ended(TurnEnd::Failed(HecateError::new(
                    ErrorType::RuntimeMismatch,
                    "the model runtime answers model turns only",
                )));
            }
        };
        let Some(client) = self.providers.get(&provider) else {
            report.end = TurnEnd::Failed(self.route_impossible(&provider));
            return report;
        };
        let req = ChatRequest {
            model: model.clone(),
            system: ctx.system.clone(),
            messages: ctx.history.clone(),
            max_tokens: self.max_tokens,
            tools: Vec::new(),
            reasoning_effort: ctx.reasoning_effort.clone(),
        };
        let events = ctx.events.clone();
        let mut on_delta = move |d: StreamDelta| {
            let ev = match d {
                StreamDelta::Text(text) => RuntimeEvent::TextDelta { text },
                StreamDelta::Thinking(text) => RuntimeEvent::ThoughtDelta { text },
                StreamDelta::ToolCallStarted { id, name } => RuntimeEvent::ToolCallStarted {
                    id,
                    name,
                    kind: None,
                    input: serde_json::Value::Null,
                },
            };
            // The engine outlives every turn; a closed receiver only means shutdown.
            let _ = events.send(ev);
        };
        let started = Instant::now();
        report.called_upstream = true;
        let result = tokio::select! {
            r = client.stream_chat(&req, &mut on_delta) => Some(r),
            _ = ctx.cancel.cancelled() => None,
        };
        report.duration_ms = started.elapsed().as_millis() as i64;
        let outcome = match result {
            None => {
                report.end = TurnEnd::Cancelled;
                return report;
            }
            Some(Ok(o)) => o,
            Some(Err(f)) => {
                let silent = f.partial.blocks.is_empty() && f.partial.tool_calls.is_empty();
                if silent {
                    report.upstream_failure = Some(f.error.clone());
                }
                report.end = TurnEnd::Failed(f.error.into_hecate(&provider, &model));
                f.partial
            }
        };
        if let Some(u) = outcome.usage {
            let _ = ctx.events.send(RuntimeEvent::Usage { usage: u });
            report.cost_micros_usd =
                self.pricebook
                    .cost(&provider, &model, u.prompt_tokens, u.completion_tokens);
        }
        report.blocks = outcome.blocks;
        report.tool_calls = outcome.tool_calls;
        report.usage = outcome.usage;
        report
    }
}
