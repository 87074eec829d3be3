//! Sign-in methods of external agents as Hecate offers them to editors: each
//! agent's own method id namespaced as `agent:ADAPTER_ID:METHOD_ID`, so one
//! `authenticate` on Hecate names both the agent and its method.

use serde::{Deserialize, Serialize};

/// The prefix of a namespaced sign-in method id.
const PREFIX: &str = "agent:";

/// One way to sign in to an external agent, under its namespaced id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInMethod {
    /// `agent:ADAPTER_ID:METHOD_ID`.
    pub id: String,
    /// The agent's label for it.
    pub name: String,
    /// The agent's description, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The namespaced id of agent `adapter_id`'s method `method_id`.
pub fn method_id(adapter_id: &str, method_id: &str) -> String {
    format!("{PREFIX}{adapter_id}:{method_id}")
}

/// Splits a namespaced id into `(adapter_id, method_id)`; `None` when it is not
/// one (adapter ids never contain `:`, method ids may).
pub fn split_method_id(id: &str) -> Option<(&str, &str)> {
    let (adapter, method) = id.strip_prefix(PREFIX)?.split_once(':')?;
    (!adapter.is_empty() && !method.is_empty()).then_some((adapter, method))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_strangers_are_refused() {
        let id = method_id("codex", "chatgpt");
        assert_eq!(id, "agent:codex:chatgpt");
        assert_eq!(split_method_id(&id), Some(("codex", "chatgpt")));
        assert_eq!(
            split_method_id("agent:claude:oauth:pro"),
            Some(("claude", "oauth:pro"))
        );
        for bad in [
            "hecate-setup",
            "agent:codex",
            "agent::x",
            "agent:codex:",
            "codex:x",
        ] {
            assert_eq!(split_method_id(bad), None, "{bad}");
        }
    }
}
