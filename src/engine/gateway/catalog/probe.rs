//! The tool-calling probe: Hecate asks the model, through its provider, to call
//! a probe tool twice in one answer and records what it did — two calls
//! `parallel`, one `basic`, none `none`; a provider that refuses a request
//! with tools (400 or 422) is `none` too. A probe that cannot reach the model
//! records nothing. An operator may also record a result found by hand.

use crate::adapters::providers::{ChatRequest, ProviderError, StreamDelta, ToolDefinition};
use crate::domain::capability::{
    CapabilityDeclaration, CapabilityRecord, CapabilitySource, ModelCapabilities, ToolCalling,
};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::message::{Message, Role};
use crate::domain::time::now_rfc3339;
use crate::engine::Gateway;
use serde_json::json;
use std::time::Duration;

/// The tool the probe offers.
pub const PROBE_TOOL: &str = "hecate_probe";

/// How long the model has to answer the probe.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// What a probe did and what it recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallingProbe {
    /// The stored probe record.
    pub record: CapabilityRecord,
    /// Calls of the probe tool seen (`None` for a result recorded by hand).
    pub tool_calls_seen: Option<usize>,
    /// The effective capabilities after it.
    pub effective: ModelCapabilities,
}

/// How many probe-tool calls mean which tool-calling level.
fn level(calls: usize) -> ToolCalling {
    match calls {
        0 => ToolCalling::None,
        1 => ToolCalling::Basic,
        _ => ToolCalling::Parallel,
    }
}

impl<'e> Gateway<'e> {
    /// Probes `provider`/`model` for tool calling (or, with `manual`, records
    /// that result without asking the model) and stores the result as its
    /// probe record.
    pub async fn probe_capabilities(
        self,
        provider: &str,
        model: &str,
        manual: Option<ToolCalling>,
        note: Option<String>,
    ) -> Result<ToolCallingProbe> {
        self.check_pair(provider, model)?;
        let (tool_calling, seen, saw) = match manual {
            Some(ToolCalling::Unknown) => {
                return Err(
                    HecateError::invalid("tool_calling must be none, basic or parallel")
                        .with_detail("field", "tool_calling"),
                );
            }
            Some(t) => (t, None, None),
            None => {
                let (t, n, saw) = self.run_tool_probe(provider, model).await?;
                (t, Some(n), Some(saw))
            }
        };
        let note = match (note.filter(|n| !n.trim().is_empty()), saw) {
            (Some(n), Some(saw)) => Some(format!("{n} ({saw})")),
            (n, saw) => n.or(saw),
        };
        let record = CapabilityRecord {
            provider: provider.to_string(),
            model: model.to_string(),
            source: CapabilitySource::Probe,
            declared: CapabilityDeclaration {
                tool_calling: Some(tool_calling),
                ..Default::default()
            },
            note,
            updated_at: now_rfc3339(),
        };
        self.put_capability_record(&record).await?;
        let effective = self.capabilities(provider, model).await;
        Ok(ToolCallingProbe {
            record,
            tool_calls_seen: seen,
            effective,
        })
    }

    /// Sends the probe request; answers the level, the calls seen and what was seen.
    async fn run_tool_probe(
        self,
        provider: &str,
        model: &str,
    ) -> Result<(ToolCalling, usize, String)> {
        let client = self
            .engine
            .inner
            .model
            .client(provider)
            .ok_or_else(|| HecateError::not_found("provider", provider))?;
        let req = ChatRequest {
            model: model.to_string(),
            system: Some("You are being tested for tool use. Answer only with tool calls.".into()),
            messages: vec![Message::unstored(
                Role::User,
                format!(
                    "Call the tool {PROBE_TOOL} twice in this one reply: once with step 1 \
                     and once with step 2. Do not write any text."
                ),
            )],
            max_tokens: 256,
            tools: vec![ToolDefinition {
                name: PROBE_TOOL.into(),
                description: "Records one step of Hecate's tool-calling probe.".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {"step": {"type": "integer"}},
                    "required": ["step"],
                }),
            }],
            reasoning_effort: None,
        };
        let mut ignore = |_: StreamDelta| {};
        let answer = tokio::time::timeout(PROBE_TIMEOUT, client.stream_chat(&req, &mut ignore))
            .await
            .map_err(|_| {
                HecateError::new(
                    ErrorType::GatewayError,
                    format!(
                        "{provider}/{model} did not answer the probe within {} s",
                        PROBE_TIMEOUT.as_secs()
                    ),
                )
                .with_detail("reason", "probe_timeout")
            })?;
        match answer {
            Ok(outcome) => {
                let calls = outcome
                    .tool_calls
                    .iter()
                    .filter(|c| c.name == PROBE_TOOL)
                    .count();
                let saw = if calls == 0 {
                    let text: String = crate::domain::message::plain_text(&outcome.blocks)
                        .chars()
                        .take(200)
                        .collect();
                    format!("the model answered without calling the tool: {text:?}")
                } else {
                    format!("the model called {PROBE_TOOL} {calls} time(s) in one answer")
                };
                Ok((level(calls), calls, saw))
            }
            Err(f) => match f.error {
                ProviderError::Status {
                    status: s @ (400 | 422),
                    body,
                    ..
                } => Ok((
                    ToolCalling::None,
                    0,
                    format!("the provider refused a request with tools: HTTP {s}: {body}"),
                )),
                e => Err(e.into_hecate(provider, model)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_number_of_calls_sets_the_level() {
        assert_eq!(level(0), ToolCalling::None);
        assert_eq!(level(1), ToolCalling::Basic);
        assert_eq!(level(2), ToolCalling::Parallel);
        assert_eq!(level(5), ToolCalling::Parallel);
    }
}
