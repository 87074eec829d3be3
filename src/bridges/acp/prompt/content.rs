//! Whether the thread's target takes a prompt's content, checked before the
//! turn starts: a model takes images when its effective capabilities say
//! `vision = true`, and embedded text as context; Hecate's own agent reads
//! text and embedded text only; neither takes audio or binary resources. An
//! external agent is checked against its own `promptCapabilities` by the
//! runtime once its process is up. A refused block is answered with -32602
//! and `data.reason` `content_unsupported`.

use crate::bridges::acp::convert::to_rpc;
use crate::bridges::acp::state::Shared;
use crate::domain::capability::ModelCapabilities;
use crate::domain::message::ContentBlock;
use crate::domain::prompt_content::{Accepts, ContentKind, content_unsupported};
use crate::engine::targets::TargetRef;
use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::PromptCapabilities;

/// The prompt capabilities `initialize` advertises: every kind some target of
/// the hub takes (models with vision and most coding agents take images, some
/// agents take audio, every target takes embedded text). A connection's
/// threads switch targets at any time and ACP has no per-session prompt
/// capabilities, so each prompt is checked against its thread's target.
pub fn offered_content() -> PromptCapabilities {
    PromptCapabilities::new()
        .image(true)
        .audio(true)
        .embedded_context(true)
}

/// What a model with `caps` takes, and why a kind it refuses is refused.
fn model_accepts(caps: &ModelCapabilities, provider: &str, model: &str) -> (Accepts, String) {
    let accepts = Accepts {
        image: caps.vision == Some(true),
        text_resources: true,
        ..Default::default()
    };
    let why = match caps.vision {
        Some(false) => "its capabilities say it does not read images (vision = false)".to_string(),
        _ => format!(
            "nothing says it reads images; if it does, declare `vision = true` under \
             [providers.{provider}.capabilities.\"{model}\"] or set an operator override"
        ),
    };
    (accepts, why)
}

/// Why a model refuses `kind` (images: `image_why`).
fn model_why(kind: ContentKind, image_why: String) -> String {
    match kind {
        ContentKind::Image => image_why,
        _ => "Hecate sends a model text, embedded text and images only".to_string(),
    }
}

/// Refuses the first block of `blocks` that `target` cannot take; external
/// agents pass here (the runtime checks them against their own answer).
pub async fn check(
    shared: &Shared,
    target: &TargetRef,
    blocks: &[ContentBlock],
) -> Result<(), Error> {
    if blocks.iter().all(|b| ContentKind::of(b).is_none()) {
        return Ok(());
    }
    let refusal = match target {
        TargetRef::External { .. } => None,
        TargetRef::Model { provider, model } => {
            let caps = shared.engine.gateway().capabilities(provider, model).await;
            let (accepts, image_why) = model_accepts(&caps, provider, model);
            accepts
                .first_refused(blocks)
                .map(|kind| (kind, model_why(kind, image_why)))
        }
        TargetRef::Hecate { .. } => {
            let accepts = Accepts {
                text_resources: true,
                ..Default::default()
            };
            accepts.first_refused(blocks).map(|kind| {
                (
                    kind,
                    "Hecate's own agent reads text and embedded text only".to_string(),
                )
            })
        }
    };
    match refusal {
        Some((kind, why)) => Err(to_rpc(&content_unsupported(kind, &target.id(), &why))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::capability::CapabilitySource;

    fn caps(vision: Option<bool>) -> ModelCapabilities {
        ModelCapabilities {
            tool_calling: Default::default(),
            streaming: true,
            vision,
            max_context_tokens: None,
            source: CapabilitySource::Default,
        }
    }

    #[test]
    fn a_model_takes_images_only_when_its_capabilities_say_vision() {
        let (seeing, _) = model_accepts(&caps(Some(true)), "p", "m");
        assert!(seeing.image && seeing.text_resources && !seeing.audio);
        let (blind, why) = model_accepts(&caps(Some(false)), "p", "m");
        assert!(!blind.image);
        assert!(why.contains("vision = false"), "{why}");
        let (unknown, why) = model_accepts(&caps(None), "p", "m");
        assert!(!unknown.image);
        assert!(
            why.contains("[providers.p.capabilities.\"m\"]"),
            "names where to declare it: {why}"
        );
        assert!(model_why(ContentKind::Audio, why).contains("text, embedded text and images"));
    }
}
