//! The additional directories an editor gave a chat session (ACP
//! `additionalDirectories`), kept in memory per session as ACP asks (the
//! editor sends them with every request that opens a thread) and handed to
//! the `agent_loop` tasks its Hecate Agent turns start; forgotten when the
//! session is closed or deleted.

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

#[cfg(test)]
mod tests {
    use crate::domain::ids::SessionId;
    use crate::domain::session::{RuntimeKind, Session};
    use crate::engine::{Engine, Runtimes};

    #[tokio::test]
    async fn a_sessions_directories_go_when_it_is_closed_or_deleted() {
        let engine = Engine::in_memory(Runtimes::default())
            .await
            .expect("engine");
        let mut ids = Vec::new();
        for _ in 0..2 {
            let s = Session::new_idle("default", SessionId::generate(), "t", RuntimeKind::Agent);
            engine.store().create_session(&s).await.expect("stored");
            engine.set_agent_directories(&s.id, vec![std::env::temp_dir()]);
            assert_eq!(engine.agent_directories(&s.id).len(), 1);
            ids.push(s.id);
        }
        engine
            .close_session("default", &ids[0])
            .await
            .expect("closes");
        assert!(engine.agent_directories(&ids[0]).is_empty());
        engine
            .delete_session("default", &ids[1])
            .await
            .expect("deletes");
        assert!(engine.agent_directories(&ids[1]).is_empty());
        let map = engine
            .tasks()
            .inner
            .session_roots
            .lock()
            .expect("lock")
            .len();
        assert_eq!(map, 0, "nothing kept for either session");
    }
}
