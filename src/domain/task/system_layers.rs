//! The three layers of an `agent_loop` task's system prompt (seed 002): the
//! operator's global layer (`[tasks] system_prompt`), the execution profile's
//! layer and the task's own, composed in that order; each layer adds to the ones
//! before it, none replaces another.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The global layer when the operator sets none.
pub const DEFAULT_GLOBAL_PROMPT: &str = "You are Hecate's agent, working in a project workspace through the tools you are given. Paths are relative to the workspace root. Read files before you change them, prefer file_edit for targeted changes, and answer with a short summary when you are done.";

/// The layer the `coding_agent` profile adds (`repo_local` adds none).
pub const CODING_AGENT_PROMPT: &str = "You are a careful coding agent. Read files before you edit them, make targeted edits, and run the project's checks before you finish.";

/// The layer an execution profile adds to the system prompt, if any.
pub fn profile_prompt(profile: &str) -> Option<&'static str> {
    match profile {
        "coding_agent" => Some(CODING_AGENT_PROMPT),
        _ => None,
    }
}

/// What the system prompt says to a run granted directories beside its
/// workspace, naming them; `None` when it has none.
pub fn additional_directories_note(dirs: &[PathBuf]) -> Option<String> {
    if dirs.is_empty() {
        return None;
    }
    let named: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    Some(format!(
        "Besides the workspace, you may read and change files in these additional directories, naming them by absolute path (relative paths stay in the workspace): {}.",
        named.join(", ")
    ))
}

/// A task's system prompt as its three layers; an empty layer is left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemLayers {
    /// The operator's layer, for every task of the process.
    pub global: String,
    /// The execution profile's layer.
    pub profile: String,
    /// The task's own `system_prompt`.
    pub task: String,
}

impl SystemLayers {
    /// The system prompt the model is sent: the non-empty layers, global first,
    /// separated by a blank line.
    pub fn compose(&self) -> String {
        [&self.global, &self.profile, &self.task]
            .into_iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layers(global: &str, profile: &str, task: &str) -> SystemLayers {
        SystemLayers {
            global: global.into(),
            profile: profile.into(),
            task: task.into(),
        }
    }

    #[test]
    fn layers_add_up_in_order_and_none_replaces_another() {
        assert_eq!(layers("G", "P", "T").compose(), "G\n\nP\n\nT");
        assert_eq!(layers("G", "", "T").compose(), "G\n\nT");
        assert_eq!(layers("", "P", " ").compose(), "P");
        assert_eq!(layers("", "", "").compose(), "");
    }

    #[test]
    fn additional_directories_are_named_only_when_there_are_some() {
        assert_eq!(additional_directories_note(&[]), None);
        let note = additional_directories_note(&["/a".into(), "/b c".into()]).expect("some");
        assert!(note.ends_with("workspace): /a, /b c."), "{note}");
    }

    #[test]
    fn only_coding_agent_adds_a_profile_layer() {
        assert_eq!(profile_prompt("coding_agent"), Some(CODING_AGENT_PROMPT));
        assert_eq!(profile_prompt("repo_local"), None);
        assert_eq!(profile_prompt("other"), None);
    }
}
