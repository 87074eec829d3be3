//! Sign-in methods of external agents as Hecate offers them to editors: each
//! agent's own method id namespaced as `agent:ADAPTER_ID:METHOD_ID`, so one
//! `authenticate` on Hecate names both the agent and its method. A terminal
//! method (ACP `type: terminal`) is run, never authenticated: an editor re-runs
//! Hecate's own invocation with [`hecate_login_args`] appended, and a user
//! without such an editor runs [`login_command`] in a terminal.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

/// A terminal sign-in method of an external agent: the agent's program run
/// again with `args` appended and `env` set, in the user's terminal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalSignIn {
    /// `agent:ADAPTER_ID:METHOD_ID`.
    pub id: String,
    /// The agent's label for it.
    pub name: String,
    /// The agent's description, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments the agent wants appended to its own invocation.
    #[serde(default)]
    pub args: Vec<String>,
    /// The variables the agent wants set on that invocation.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// The long flag of `hecate acp` that runs an agent's terminal sign-in
/// instead of serving ACP (`--agent-login ADAPTER_ID -- ARGS...`).
pub const AGENT_LOGIN_FLAG: &str = "agent-login";

/// The long flag of `hecate acp` naming one variable of Hecate's own
/// environment that the terminal sign-in passes on (repeated per variable).
pub const AGENT_LOGIN_ENV_FLAG: &str = "agent-login-env";

/// The arguments an editor appends to Hecate's own invocation (`hecate acp
/// ...`) to run `method` of agent `adapter_id`: `--agent-login ADAPTER_ID`, an
/// `--agent-login-env NAME` per variable of the method (the editor sets them on
/// Hecate's process), then `--` and the agent's own arguments.
pub fn hecate_login_args(adapter_id: &str, method: &TerminalSignIn) -> Vec<String> {
    let mut args = vec![format!("--{AGENT_LOGIN_FLAG}"), adapter_id.to_string()];
    for name in method.env.keys() {
        args.push(format!("--{AGENT_LOGIN_ENV_FLAG}"));
        args.push(name.clone());
    }
    args.push("--".into());
    args.extend(method.args.iter().cloned());
    args
}

/// The command a user runs in a terminal to sign in to agent `adapter_id`
/// with its terminal method `method_id` (the agent's own id).
pub fn login_command(adapter_id: &str, method_id: &str) -> String {
    format!("hecate adapters login {adapter_id} {method_id}")
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

    #[test]
    fn login_args_name_the_agent_the_variables_and_the_agents_own_args() {
        let method = TerminalSignIn {
            id: method_id("codex", "tty"),
            name: "Log in".into(),
            description: None,
            args: vec!["--login".into(), "--".into()],
            env: BTreeMap::from([("B".into(), "2".into()), ("A".into(), "1".into())]),
        };
        assert_eq!(
            hecate_login_args("codex", &method),
            [
                "--agent-login",
                "codex",
                "--agent-login-env",
                "A",
                "--agent-login-env",
                "B",
                "--",
                "--login",
                "--"
            ]
        );
        assert_eq!(
            login_command("codex", "tty"),
            "hecate adapters login codex tty"
        );
    }
}
