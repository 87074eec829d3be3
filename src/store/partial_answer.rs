//! What an interrupted turn keeps, worked out once for both backends: the answer
//! a dead process had streamed, rebuilt from the run's stored text and reasoning
//! deltas as a failed assistant message under the runtime of the turn's user
//! message.

use crate::domain::event::RuntimeEvent;
use crate::domain::ids::RunId;
use crate::domain::message::{ContentBlock, MessageStatus, NewMessage, Role, RuntimeSnapshot};
use crate::domain::partial::PartialAnswer;
use crate::domain::run::INTERRUPTED_REASON;

/// The runtime stored in a message's `body_json`, `None` when it records none.
pub(crate) fn body_runtime(body_json: &str) -> serde_json::Result<Option<RuntimeSnapshot>> {
    match serde_json::from_str::<serde_json::Value>(body_json)?
        .get_mut("runtime")
        .map(serde_json::Value::take)
    {
        Some(v) => serde_json::from_value(v).map(Some),
        None => Ok(None),
    }
}

/// The failed assistant message run `run_id` keeps from its delta events'
/// `data_json` (in sequence order), or `None` when they hold no text. An event
/// that does not parse is skipped; the rest still counts.
pub(crate) fn interrupted_answer(
    deltas: &[String],
    run_id: &str,
    runtime: RuntimeSnapshot,
) -> Option<NewMessage> {
    let mut partial = PartialAnswer::default();
    for data in deltas {
        if let Ok(event) = serde_json::from_str::<RuntimeEvent>(data) {
            partial.push(&event);
        }
    }
    if partial.is_empty() {
        return None;
    }
    let blocks = partial.blocks();
    let mut answer = NewMessage::text(Role::Assistant, partial.text(), runtime);
    if !blocks
        .iter()
        .all(|b| matches!(b, ContentBlock::Text { .. }))
    {
        answer.content_blocks = blocks;
    }
    answer.status = MessageStatus::Failed;
    answer.error = Some(INTERRUPTED_REASON.to_string());
    answer.run_id = Some(RunId(run_id.to_string()));
    Some(answer)
}
