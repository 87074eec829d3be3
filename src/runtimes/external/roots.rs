//! The additional directories an editor gave each session, handed to its
//! agent connection on every attach (new, loaded or resumed native session).

use super::ExternalRuntime;
use crate::domain::ids::SessionId;
use std::path::PathBuf;

impl ExternalRuntime {
    /// Records `session_id`'s additional directories (already checked);
    /// answers whether they differ from the ones recorded before.
    pub fn set_additional_directories(&self, session_id: &SessionId, dirs: Vec<PathBuf>) -> bool {
        let mut all = self.roots.lock().unwrap_or_else(|p| p.into_inner());
        let before = all.get(session_id).cloned().unwrap_or_default();
        if dirs.is_empty() {
            all.remove(session_id);
        } else {
            all.insert(session_id.clone(), dirs.clone());
        }
        before != dirs
    }

    /// The additional directories recorded for `session_id` (none by default).
    pub(super) fn additional_directories_of(&self, session_id: &SessionId) -> Vec<PathBuf> {
        self.roots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(session_id)
            .cloned()
            .unwrap_or_default()
    }
}
