//! The per-turn bound on streamed text: an external agent that streams without
//! end cannot grow memory, the run's event log or its answer past the limit.

use crate::domain::event::RuntimeEvent;

/// What the text limit does with one event.
pub(super) enum Capped {
    /// Within the limit: recorded as it is.
    Keep(RuntimeEvent),
    /// Crosses the limit: its part within (if any) is recorded, then the cut.
    Cut(Option<RuntimeEvent>),
    /// After the limit: dropped.
    Drop,
}

/// The text (answer and reasoning) a turn may still stream.
pub(super) struct TextCap {
    /// Bytes left; `None` when the turn is unbounded.
    room: Option<usize>,
    /// The limit `room` started from.
    limit: usize,
}

impl TextCap {
    /// A bound of `cap` bytes, or none.
    pub(super) fn new(cap: Option<usize>) -> Self {
        Self {
            room: cap,
            limit: cap.unwrap_or(usize::MAX),
        }
    }

    /// The limit, as the `output_capped` event records it.
    pub(super) fn limit_bytes(&self) -> u64 {
        u64::try_from(self.limit).unwrap_or(u64::MAX)
    }

    /// What the per-turn text limit leaves of `ev`: text within the room left is
    /// kept; the delta that crosses the limit is cut at it (on a character
    /// boundary); text after the limit is dropped.
    pub(super) fn admit(&mut self, ev: RuntimeEvent) -> Capped {
        let Some(room) = self.room else {
            return Capped::Keep(ev);
        };
        let (text, thought) = match ev {
            RuntimeEvent::TextDelta { text } => (text, false),
            RuntimeEvent::ThoughtDelta { text } => (text, true),
            // Raw frames repeat what the agent sent; after the cut they go too.
            RuntimeEvent::Raw { .. } if room == 0 => return Capped::Drop,
            other => return Capped::Keep(other),
        };
        if room == 0 {
            return Capped::Drop;
        }
        let rebuild = |text: String| {
            if thought {
                RuntimeEvent::ThoughtDelta { text }
            } else {
                RuntimeEvent::TextDelta { text }
            }
        };
        if text.len() <= room {
            self.room = Some(room - text.len());
            return Capped::Keep(rebuild(text));
        }
        let mut end = room;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.room = Some(0);
        Capped::Cut((end > 0).then(|| rebuild(text[..end].to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> RuntimeEvent {
        RuntimeEvent::TextDelta { text: t.into() }
    }

    #[test]
    fn text_within_the_limit_is_kept_the_crossing_delta_cut_and_the_rest_dropped() {
        let mut cap = TextCap::new(Some(5));
        assert!(
            matches!(cap.admit(text("abc")), Capped::Keep(RuntimeEvent::TextDelta { text }) if text == "abc")
        );
        match cap.admit(RuntimeEvent::ThoughtDelta {
            text: "defg".into(),
        }) {
            Capped::Cut(Some(RuntimeEvent::ThoughtDelta { text })) => assert_eq!(text, "de"),
            _ => panic!("the crossing delta is cut at the limit"),
        }
        assert!(matches!(cap.admit(text("h")), Capped::Drop));
        assert!(matches!(
            cap.admit(RuntimeEvent::Raw {
                data: serde_json::json!({})
            }),
            Capped::Drop
        ));
        let plan = RuntimeEvent::Plan {
            entries: serde_json::json!([]),
        };
        assert!(matches!(
            cap.admit(plan),
            Capped::Keep(RuntimeEvent::Plan { .. })
        ));
        assert_eq!(cap.limit_bytes(), 5);
    }

    #[test]
    fn a_cut_falls_on_a_character_boundary() {
        let mut cap = TextCap::new(Some(2));
        match cap.admit(text("é!")) {
            // "é" is two bytes: the cut keeps it and drops "!".
            Capped::Cut(Some(RuntimeEvent::TextDelta { text })) => assert_eq!(text, "é"),
            _ => panic!("the delta is cut after \"é\""),
        }
        let mut cap = TextCap::new(Some(1));
        assert!(matches!(cap.admit(text("é")), Capped::Cut(None)));
    }

    #[test]
    fn no_limit_keeps_everything() {
        let mut cap = TextCap::new(None);
        let long = "x".repeat(10_000);
        assert!(matches!(cap.admit(text(&long)), Capped::Keep(_)));
    }
}
