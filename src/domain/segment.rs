//! Segments: runs of consecutive messages with the same runtime snapshot. Derived
//! from messages on read; never stored as truth.

use crate::domain::ids::SegmentId;
use crate::domain::message::{Message, RuntimeSnapshot};
use serde::{Deserialize, Serialize};

/// One derived segment of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// The runtime snapshot its messages share (that of its first message,
    /// whose segment id is the segment's).
    #[serde(flatten)]
    pub runtime: RuntimeSnapshot,
    /// Run id of the latest turn in the segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_run_id: Option<String>,
    /// Status of the last message in the segment.
    pub status: String,
    /// Number of messages.
    pub message_count: usize,
    /// First message time.
    pub first_at: String,
    /// Last message time.
    pub last_at: String,
}

/// Groups contiguous messages sharing a segment id, in sequence order.
pub fn derive(messages: &[Message]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for m in messages {
        match out.last_mut() {
            Some(seg) if seg.runtime.segment_id == m.runtime.segment_id => {
                seg.message_count += 1;
                seg.last_at = m.created_at.clone();
                seg.status = m.status.as_str().to_string();
                if let Some(r) = &m.run_id {
                    seg.latest_run_id = Some(r.to_string());
                }
                // A Hecate Agent segment's task is named by its answers (its
                // prompts are stored before the task exists).
                if m.runtime.task_id.is_some() {
                    seg.runtime.task_id = m.runtime.task_id.clone();
                    seg.runtime.task_run_id = m.runtime.task_run_id.clone();
                }
            }
            _ => out.push(Segment {
                runtime: m.runtime.clone(),
                latest_run_id: m.run_id.as_ref().map(|r| r.to_string()),
                status: m.status.as_str().to_string(),
                message_count: 1,
                first_at: m.created_at.clone(),
                last_at: m.created_at.clone(),
            }),
        }
    }
    out
}

/// Chooses the segment id for a new turn: the previous message's segment continues
/// when the target is unchanged, otherwise a new segment starts.
pub fn next_segment_id(previous: Option<&RuntimeSnapshot>, target: &RuntimeSnapshot) -> SegmentId {
    match previous {
        Some(prev) if prev.same_target(target) => prev.segment_id.clone(),
        _ => SegmentId::generate(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::SessionId;
    use crate::domain::message::Role;
    use crate::domain::session::RuntimeKind;

    fn msg(seq: i64, seg: &str, model: &str) -> Message {
        let mut m = Message::unstored(Role::User, "");
        m.session_id = SessionId::from("s");
        m.sequence = seq;
        m.runtime.runtime_kind = RuntimeKind::Model;
        m.runtime.segment_id = SegmentId::from(seg);
        m.runtime.provider = Some("p".into());
        m.runtime.model = Some(model.into());
        m.created_at = format!("t{seq}");
        m
    }

    #[test]
    fn groups_contiguous_messages() {
        let ms = vec![
            msg(0, "a", "m1"),
            msg(1, "a", "m1"),
            msg(2, "b", "m2"),
            msg(3, "a", "m1"),
        ];
        let segs = derive(&ms);
        assert_eq!(segs.len(), 3);
        assert_eq!(segs[0].message_count, 2);
        assert_eq!(segs[1].runtime.model.as_deref(), Some("m2"));
        assert_eq!(segs[2].first_at, "t3");
    }

    #[test]
    fn an_agent_segment_is_named_by_its_latest_task() {
        let mut answer = msg(1, "a", "m1");
        answer.runtime.task_id = Some("task_1".into());
        answer.runtime.task_run_id = Some("trun_1".into());
        let mut later = msg(3, "a", "m1");
        later.runtime.task_id = Some("task_1".into());
        later.runtime.task_run_id = Some("trun_2".into());
        let segs = derive(&[msg(0, "a", "m1"), answer, msg(2, "a", "m1"), later]);
        assert_eq!(segs.len(), 1);
        assert_eq!(segs[0].runtime.task_id.as_deref(), Some("task_1"));
        assert_eq!(segs[0].runtime.task_run_id.as_deref(), Some("trun_2"));
    }

    #[test]
    fn continues_segment_only_for_the_same_target() {
        let prev = msg(0, "a", "m1").runtime;
        let mut same = prev.clone();
        same.segment_id = SegmentId::from("new");
        assert_eq!(next_segment_id(Some(&prev), &same).as_str(), "a");
        let mut other = same.clone();
        other.model = Some("m2".into());
        assert_ne!(next_segment_id(Some(&prev), &other).as_str(), "a");
    }
}
