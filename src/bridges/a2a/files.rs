//! The files a turn changed, as A2A artifacts: one per file, named by its path,
//! holding the file's unified diff as a `text/x-diff` text part, with the path,
//! the line counts and whether the file was created or deleted in the
//! artifact's metadata. The changes come from the engine (the Git diff it
//! captured around the turn), so a workspace outside Git has none.

use super::state::A2aState;
use crate::a2a_wire::{Artifact, Part};
use crate::domain::file_change::TurnFileChange;
use crate::domain::ids::{MessageId, SessionId};
use serde_json::{Map, Value, json};

/// The media type of a changed file's part: a unified diff.
pub const DIFF_MEDIA_TYPE: &str = "text/x-diff";

/// The prefix of a changed file's artifact id (`file:PATH`).
pub const FILE_ARTIFACT_PREFIX: &str = "file:";

/// The artifacts of the files the turn answered by `message_id` changed; none
/// when it changed nothing or its changes cannot be read (logged).
pub async fn changed_files(
    state: &A2aState,
    session_id: &SessionId,
    message_id: &MessageId,
) -> Vec<Artifact> {
    match state
        .engine
        .message_changes(&state.namespace, session_id, message_id)
        .await
    {
        Ok(changes) => changes
            .into_iter()
            .map(|(change, diff)| file_artifact(&change, diff))
            .collect(),
        Err(e) => {
            tracing::warn!(
                session_id = %session_id,
                message_id = %message_id,
                error = %e,
                "the files the turn changed could not be read; the task carries none"
            );
            Vec::new()
        }
    }
}

/// The artifact of one changed file with its unified `diff`.
pub fn file_artifact(change: &TurnFileChange, diff: String) -> Artifact {
    let mut metadata = Map::new();
    metadata.insert("path".into(), json!(change.path));
    if let Some(old) = &change.old_path {
        metadata.insert("oldPath".into(), json!(old));
    }
    metadata.insert("status".into(), json!(change.status));
    metadata.insert("linesAdded".into(), json!(change.additions));
    metadata.insert("linesRemoved".into(), json!(change.deletions));
    metadata.insert("created".into(), Value::Bool(change.status == "added"));
    metadata.insert("deleted".into(), Value::Bool(change.status == "deleted"));
    let base = change.path.rsplit('/').next().unwrap_or(&change.path);
    Artifact {
        artifact_id: format!("{FILE_ARTIFACT_PREFIX}{}", change.path),
        name: Some(change.path.clone()),
        description: Some(format!(
            "{} {} (+{} -{})",
            change.status, change.path, change.additions, change.deletions
        )),
        parts: vec![Part {
            text: Some(diff),
            filename: Some(format!("{base}.diff")),
            media_type: Some(DIFF_MEDIA_TYPE.into()),
            ..Part::default()
        }],
        metadata: Some(metadata),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_is_an_artifact_named_by_its_path_with_its_diff() {
        let change = TurnFileChange {
            path: "src/new.rs".into(),
            old_path: None,
            status: "added".into(),
            additions: 3,
            deletions: 0,
        };
        let a = file_artifact(&change, "+a\n+b\n+c\n".into());
        assert_eq!(a.artifact_id, "file:src/new.rs");
        assert_eq!(a.name.as_deref(), Some("src/new.rs"));
        assert_eq!(a.parts[0].text.as_deref(), Some("+a\n+b\n+c\n"));
        assert_eq!(a.parts[0].media_type.as_deref(), Some(DIFF_MEDIA_TYPE));
        assert_eq!(a.parts[0].filename.as_deref(), Some("new.rs.diff"));
        let m = a.metadata.expect("metadata");
        assert_eq!(m["path"], "src/new.rs");
        assert_eq!(m["linesAdded"], 3);
        assert_eq!(m["linesRemoved"], 0);
        assert_eq!(m["created"], true);
        assert_eq!(m["deleted"], false);
        assert!(m.get("oldPath").is_none());
    }
}
