//! What kinds of prompt content a target takes, how a block it cannot take is
//! refused (`invalid_request`, reason `content_unsupported`, naming the block
//! and the target), and the plain-text form of a resource for targets that
//! read text.

use crate::domain::error::HecateError;
use crate::domain::message::ContentBlock;

/// A kind of prompt content that not every target takes; text and resource
/// links every target takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentKind {
    /// An image.
    Image,
    /// Audio.
    Audio,
    /// An embedded resource with text contents.
    TextResource,
    /// An embedded resource with binary contents.
    BinaryResource,
}

impl ContentKind {
    /// The kind of `block`; `None` for text, resource links and blocks that
    /// are not prompt content (thinking, tool calls and results).
    pub fn of(block: &ContentBlock) -> Option<Self> {
        match block {
            ContentBlock::Image { .. } => Some(Self::Image),
            ContentBlock::Audio { .. } => Some(Self::Audio),
            ContentBlock::Resource { blob: Some(_), .. } => Some(Self::BinaryResource),
            ContentBlock::Resource { text: Some(_), .. } => Some(Self::TextResource),
            _ => None,
        }
    }

    /// The stable name carried as `block` in a refusal's details.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Audio => "audio",
            Self::TextResource => "resource",
            Self::BinaryResource => "resource_blob",
        }
    }

    /// The kind in words, for messages.
    fn words(self) -> &'static str {
        match self {
            Self::Image => "images",
            Self::Audio => "audio",
            Self::TextResource => "embedded resources",
            Self::BinaryResource => "binary embedded resources",
        }
    }
}

/// What a target takes in a prompt beyond text and resource links.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Accepts {
    /// Images.
    pub image: bool,
    /// Audio.
    pub audio: bool,
    /// Embedded resources with text contents (as such or inlined as text).
    pub text_resources: bool,
    /// Embedded resources with binary contents.
    pub binary_resources: bool,
}

impl Accepts {
    /// Whether the target takes blocks of `kind`.
    pub fn takes(self, kind: ContentKind) -> bool {
        match kind {
            ContentKind::Image => self.image,
            ContentKind::Audio => self.audio,
            ContentKind::TextResource => self.text_resources,
            ContentKind::BinaryResource => self.binary_resources,
        }
    }

    /// The kind of the first block of `blocks` the target does not take.
    pub fn first_refused(self, blocks: &[ContentBlock]) -> Option<ContentKind> {
        blocks
            .iter()
            .filter_map(ContentKind::of)
            .find(|k| !self.takes(*k))
    }
}

/// The refusal of a `kind` block by `target` (a target id such as
/// `model:openai/gpt-4o` or `agent:codex`), saying `why`.
pub fn content_unsupported(kind: ContentKind, target: &str, why: &str) -> HecateError {
    HecateError::invalid(format!(
        "{target} does not take {} in a prompt: {why}",
        kind.words()
    ))
    .with_user_message(format!(
        "The prompt carries {} that {target} cannot take.",
        kind.words()
    ))
    .with_operator_action(
        "Remove the block from the prompt, or switch the thread to a target that takes it.",
    )
    .with_detail("reason", "content_unsupported")
    .with_detail("block", kind.as_str())
    .with_detail("target", target)
}

/// A resource as text: its contents wrapped with its URI when embedded as
/// text, else a reference to its URI.
pub fn resource_text(uri: &str, text: Option<&str>) -> String {
    match text {
        Some(t) => format!("<resource uri=\"{uri}\">\n{t}\n</resource>"),
        None => format!("[resource: {uri}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(text: Option<&str>, blob: Option<&str>) -> ContentBlock {
        ContentBlock::Resource {
            uri: "file:///w/a".into(),
            text: text.map(str::to_string),
            blob: blob.map(str::to_string),
            mime_type: None,
        }
    }

    #[test]
    fn blocks_are_sorted_into_kinds_and_links_and_text_always_pass() {
        let blocks = [
            ContentBlock::Text { text: "hi".into() },
            resource(None, None),
            resource(Some("x"), None),
            ContentBlock::Image {
                mime_type: "image/png".into(),
                data: Some("AA".into()),
                uri: None,
            },
            resource(None, Some("AA")),
            ContentBlock::Audio {
                mime_type: "audio/wav".into(),
                data: "AA".into(),
            },
        ];
        let kinds: Vec<_> = blocks.iter().filter_map(ContentKind::of).collect();
        assert_eq!(
            kinds,
            [
                ContentKind::TextResource,
                ContentKind::Image,
                ContentKind::BinaryResource,
                ContentKind::Audio
            ]
        );
        let text_only = Accepts::default();
        assert_eq!(
            text_only.first_refused(&blocks[..2]),
            None,
            "text and links"
        );
        assert_eq!(
            text_only.first_refused(&blocks),
            Some(ContentKind::TextResource)
        );
        let model = Accepts {
            image: true,
            text_resources: true,
            ..Default::default()
        };
        assert_eq!(
            model.first_refused(&blocks),
            Some(ContentKind::BinaryResource)
        );
        let all = Accepts {
            image: true,
            audio: true,
            text_resources: true,
            binary_resources: true,
        };
        assert_eq!(all.first_refused(&blocks), None);
    }

    #[test]
    fn a_refusal_names_the_block_and_the_target() {
        let e = content_unsupported(ContentKind::Image, "model:fix/m", "it reads text only");
        assert_eq!(
            e.error_type,
            crate::domain::error::ErrorType::InvalidRequest
        );
        assert_eq!(e.details["reason"], "content_unsupported");
        assert_eq!(e.details["block"], "image");
        assert_eq!(e.details["target"], "model:fix/m");
        assert!(
            e.message.contains("model:fix/m does not take images"),
            "{e}"
        );
        assert!(e.message.ends_with("it reads text only"), "{e}");
    }

    #[test]
    fn resources_read_as_text() {
        assert_eq!(
            resource_text("file:///a", Some("x")),
            "<resource uri=\"file:///a\">\nx\n</resource>"
        );
        assert_eq!(resource_text("file:///a", None), "[resource: file:///a]");
    }
}
