//! An agent's plan: the entries it means to work through, each with a priority
//! and a status, in the shape of the ACP `plan` session update. A new plan
//! replaces the previous one whole.

use serde::{Deserialize, Serialize};

/// How important an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanPriority {
    /// High.
    High,
    /// Medium.
    Medium,
    /// Low.
    Low,
}

/// Where an entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One entry of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanEntry {
    /// What the entry is about, in a line.
    pub content: String,
    /// How important it is.
    pub priority: PlanPriority,
    /// Where it stands.
    pub status: PlanStatus,
}

/// A one-line summary of a plan's progress (`2 of 5 done`, with the entry in
/// progress when there is one).
pub fn summary(entries: &[PlanEntry]) -> String {
    let done = entries
        .iter()
        .filter(|e| e.status == PlanStatus::Completed)
        .count();
    let mut s = format!("{done} of {} done", entries.len());
    if let Some(now) = entries.iter().find(|e| e.status == PlanStatus::InProgress) {
        s.push_str("; now: ");
        s.push_str(&now.content);
    }
    s
}

/// Whether every entry of a non-empty plan is done.
pub fn is_done(entries: &[PlanEntry]) -> bool {
    !entries.is_empty() && entries.iter().all(|e| e.status == PlanStatus::Completed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_read_the_acp_shape_and_summarize_their_progress() {
        let entries: Vec<PlanEntry> = serde_json::from_value(json!([
            {"content": "Read notes", "priority": "high", "status": "completed"},
            {"content": "Edit notes", "priority": "medium", "status": "in_progress"},
            {"content": "Run tests", "priority": "low", "status": "pending"}
        ]))
        .expect("entries");
        assert_eq!(summary(&entries), "1 of 3 done; now: Edit notes");
        assert!(!is_done(&entries) && !is_done(&[]));
        assert_eq!(
            serde_json::to_value(&entries[1]).expect("json"),
            json!({"content": "Edit notes", "priority": "medium", "status": "in_progress"})
        );
        let bad = serde_json::from_value::<PlanEntry>(
            json!({"content": "x", "priority": "urgent", "status": "pending"}),
        );
        assert!(bad.is_err());
    }
}
