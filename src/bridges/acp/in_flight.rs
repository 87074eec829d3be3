//! The prompts one network connection has in flight, seen from its frames: a
//! `session/prompt` request read from the client adds its id and session, the
//! response written back removes it. When the connection drops, the sessions
//! still listed are the turns it started and never saw end, which the bridge
//! cancels (a stdio client closing stdin gets the same from the process exit).

use crate::domain::ids::SessionId;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The prompt method, as the client sends it.
const PROMPT_METHOD: &str = "session/prompt";

/// The parts of a JSON-RPC message the tracker reads (everything else is skipped).
#[derive(Deserialize)]
struct Peek {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<PeekParams>,
}

#[derive(Deserialize)]
struct PeekParams {
    #[serde(rename = "sessionId", default)]
    session_id: Option<String>,
}

/// Prompt requests of one connection still waiting for their response, by request id.
#[derive(Debug, Clone, Default)]
pub struct InFlight(Arc<Mutex<HashMap<String, SessionId>>>);

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionId>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes a message read from the client: a prompt request is recorded.
    pub fn received(&self, message: &str) {
        if !message.contains(PROMPT_METHOD) {
            return;
        }
        let Ok(peek) = serde_json::from_str::<Peek>(message) else {
            return;
        };
        if peek.method.as_deref() != Some(PROMPT_METHOD) {
            return;
        }
        if let (Some(id), Some(sid)) = (peek.id, peek.params.and_then(|p| p.session_id)) {
            self.lock().insert(id.to_string(), SessionId::from(sid));
        }
    }

    /// Notes a message written to the client: a response ends the prompt it answers.
    pub fn sent(&self, message: &str) {
        // A response carries `result` or `error`; most frames during a turn are
        // updates, not worth parsing.
        let maybe_response = message.contains("\"result\"") || message.contains("\"error\"");
        if !maybe_response || self.lock().is_empty() {
            return;
        }
        let Ok(peek) = serde_json::from_str::<Peek>(message) else {
            return;
        };
        if peek.method.is_none()
            && let Some(id) = peek.id
        {
            self.lock().remove(&id.to_string());
        }
    }

    /// The sessions whose prompts never saw their response, each once.
    pub fn sessions(&self) -> Vec<SessionId> {
        let mut out: Vec<SessionId> = self.lock().values().cloned().collect();
        out.sort();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_stays_in_flight_until_its_own_response_is_written() {
        let f = InFlight::default();
        f.received(r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#);
        f.received(r#"{"jsonrpc":"2.0","id":"a","method":"session/prompt","params":{"sessionId":"s2","prompt":[]}}"#);
        f.received(r#"{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"/"}}"#);
        f.received("not json");
        f.sent(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1"}}"#);
        f.sent(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
        assert_eq!(
            f.sessions(),
            vec![SessionId::from("s1"), SessionId::from("s2")]
        );
        f.sent(r#"{"jsonrpc":"2.0","id":"a","result":{"stopReason":"end_turn"}}"#);
        assert_eq!(f.sessions(), vec![SessionId::from("s1")]);
        f.sent(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"x"}}"#);
        assert!(f.sessions().is_empty());
    }
}
