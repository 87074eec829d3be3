//! The additional directories an editor gave a chat session (ACP
//! `additionalDirectories`), kept in memory per session as ACP asks (the
//! editor sends them with every request that opens a thread) and handed to
//! the `agent_loop` tasks its Hecate Agent turns start.

use crate::domain::ids::SessionId;
use crate::engine::Engine;
use std::path::PathBuf;

impl Engine {
    /// Gives Hecate's own agent in `session_id` these (checked, canonical)
    /// additional directories from its next turn on; none forgets them.
    pub fn set_agent_directories(&self, session_id: &SessionId, dirs: Vec<PathBuf>) {
        let mut all = self
            .tasks()
            .inner
            .session_roots
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if dirs.is_empty() {
            all.remove(session_id);
        } else {
            all.insert(session_id.clone(), dirs);
        }
    }

    /// The additional directories `session_id`'s Hecate Agent turns work with
    /// (none by default), as a task spells them.
    pub(in crate::engine) fn agent_directories(&self, session_id: &SessionId) -> Vec<String> {
        self.tasks()
            .inner
            .session_roots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(session_id)
            .map(|dirs| dirs.iter().map(|d| d.display().to_string()).collect())
            .unwrap_or_default()
    }
}
