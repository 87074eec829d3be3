//! What an external agent is prompted with for one turn, fitted to what the
//! agent says it takes.

use crate::adapters::acp::AgentInfo;
use crate::domain::error::HecateError;
use crate::domain::message::{ContentBlock, Message};
use crate::domain::prompt_content::{Accepts, ContentKind, content_unsupported, resource_text};
use crate::runtimes::handoff::transcript_text;

pub(super) fn has_earlier_turns(history: &[Message]) -> bool {
    history.len() > 1
}

/// The prompt for this turn: the newest user message, preceded (when priming a fresh
/// native session) by the earlier transcript so no context is silently lost, and
/// by the messages recalled from the user's other sessions when there are any.
pub(super) fn prompt_blocks(
    history: &[Message],
    primed: bool,
    recalled: Option<&str>,
) -> Vec<ContentBlock> {
    let Some((last, earlier)) = history.split_last() else {
        return Vec::new();
    };
    let mut blocks = Vec::new();
    if let Some(text) = recalled {
        blocks.push(ContentBlock::Text {
            text: text.to_string(),
        });
    }
    if primed && !earlier.is_empty() {
        let mut context = String::from(
            "Context: this conversation continues an earlier session whose agent process \
             was restarted. The transcript so far:\n\n",
        );
        context.push_str(&transcript_text(earlier));
        context.push_str("The new message follows.");
        blocks.push(ContentBlock::Text { text: context });
    }
    if last.content_blocks.is_empty() {
        blocks.push(ContentBlock::Text {
            text: last.content.clone(),
        });
    } else {
        blocks.extend(last.content_blocks.iter().cloned());
    }
    blocks
}

/// What an agent takes, from its `initialize` answer: images and audio when it
/// says so, embedded text always (as embedded resources when it advertises
/// `embeddedContext`, else inlined as text), binary resources only with
/// `embeddedContext`.
fn agent_accepts(info: &AgentInfo) -> Accepts {
    Accepts {
        image: info.prompt_image,
        audio: info.prompt_audio,
        text_resources: true,
        binary_resources: info.prompt_embedded_context,
    }
}

/// `blocks` in a form the agent of `adapter_id` (which answered `initialize`
/// with `info`) takes: embedded text resources become text when it does not
/// take embedded context; a block it cannot take at all is refused with
/// `content_unsupported`, before anything is sent.
pub(super) fn fit_to_agent(
    blocks: Vec<ContentBlock>,
    info: &AgentInfo,
    adapter_id: &str,
) -> Result<Vec<ContentBlock>, HecateError> {
    if let Some(kind) = agent_accepts(info).first_refused(&blocks) {
        let capability = match kind {
            ContentKind::Image => "image",
            ContentKind::Audio => "audio",
            ContentKind::TextResource | ContentKind::BinaryResource => "embeddedContext",
        };
        return Err(content_unsupported(
            kind,
            &format!("agent:{adapter_id}"),
            &format!("the agent does not advertise the `{capability}` prompt capability"),
        ));
    }
    if info.prompt_embedded_context {
        return Ok(blocks);
    }
    Ok(blocks
        .into_iter()
        .map(|b| match b {
            ContentBlock::Resource {
                uri,
                text: Some(text),
                ..
            } => ContentBlock::Text {
                text: resource_text(&uri, Some(&text)),
            },
            other => other,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(image: bool, audio: bool, embedded: bool) -> AgentInfo {
        AgentInfo {
            prompt_image: image,
            prompt_audio: audio,
            prompt_embedded_context: embedded,
            ..Default::default()
        }
    }

    fn prompt() -> Vec<ContentBlock> {
        vec![
            ContentBlock::Text {
                text: "look".into(),
            },
            ContentBlock::Resource {
                uri: "file:///w/a.rs".into(),
                text: Some("fn a() {}".into()),
                blob: None,
                mime_type: None,
            },
            ContentBlock::Resource {
                uri: "file:///w/b.rs".into(),
                text: None,
                blob: None,
                mime_type: None,
            },
        ]
    }

    #[test]
    fn embedded_text_is_inlined_for_an_agent_without_embedded_context() {
        let plain = fit_to_agent(prompt(), &info(false, false, false), "x").expect("fits");
        assert_eq!(
            plain[1],
            ContentBlock::Text {
                text: "<resource uri=\"file:///w/a.rs\">\nfn a() {}\n</resource>".into()
            }
        );
        assert_eq!(plain[2], prompt()[2], "a link is baseline");
        let embedded = fit_to_agent(prompt(), &info(false, false, true), "x").expect("fits");
        assert_eq!(embedded, prompt());
    }

    #[test]
    fn media_the_agent_does_not_advertise_is_refused_by_name() {
        let mut blocks = prompt();
        blocks.push(ContentBlock::Image {
            mime_type: "image/png".into(),
            data: Some("AA".into()),
            uri: None,
        });
        let e = fit_to_agent(blocks.clone(), &info(false, true, true), "fx").expect_err("image");
        assert_eq!(e.details["reason"], "content_unsupported");
        assert_eq!(e.details["block"], "image");
        assert_eq!(e.details["target"], "agent:fx");
        assert!(e.message.contains("`image` prompt capability"), "{e}");
        assert!(fit_to_agent(blocks.clone(), &info(true, false, false), "fx").is_ok());
        blocks.push(ContentBlock::Audio {
            mime_type: "audio/wav".into(),
            data: "AA".into(),
        });
        let e = fit_to_agent(blocks.clone(), &info(true, false, true), "fx").expect_err("audio");
        assert_eq!(e.details["block"], "audio");
        blocks.push(ContentBlock::Resource {
            uri: "file:///w/c.pdf".into(),
            text: None,
            blob: Some("AA".into()),
            mime_type: None,
        });
        let e = fit_to_agent(blocks.clone(), &info(true, true, false), "fx").expect_err("blob");
        assert_eq!(e.details["block"], "resource_blob");
        assert!(e.message.contains("`embeddedContext`"), "{e}");
        assert!(fit_to_agent(blocks, &info(true, true, true), "fx").is_ok());
    }
}
