//! The engine's side of signing in to external agents: from an editor, a
//! namespaced method id (`agent:ADAPTER_ID:METHOD_ID`) checked and handed to
//! the runtime's `authenticate`, and `logout` passed to the running agents; in
//! a terminal, an agent's terminal method run with the agent's own launch
//! (`hecate acp --agent-login`, `hecate adapters login`).

use super::Agents;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::sign_in::{TerminalSignIn, login_command, method_id, split_method_id};
use crate::runtimes::external::ExternalRuntime;
use std::path::Path;

/// How a terminal sign-in ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalLogin {
    /// The process exit code: the login's own, or 128 + the signal that ended it.
    pub exit_code: i32,
    /// How it ended, for people (`exit code 0`, `killed by signal 2`).
    pub ended: String,
}

/// The stable reason of a login for an agent that offers no such terminal method.
pub const NO_TERMINAL_METHOD: &str = "no_terminal_method";

impl<'e> Agents<'e> {
    /// Signs in with namespaced method `id` on a running agent of its adapter:
    /// `auth_method_unknown` for an id that names no registered agent,
    /// `agent_not_running` when no process of that agent runs.
    pub async fn authenticate(self, id: &str) -> Result<()> {
        let unknown = |why: &str| {
            HecateError::invalid(format!("unknown sign-in method {id:?}: {why}"))
                .with_detail("reason", "auth_method_unknown")
                .with_detail("method_id", id)
        };
        let Some((adapter_id, method)) = split_method_id(id) else {
            return Err(unknown(
                "agent methods are named agent:ADAPTER_ID:METHOD_ID, Hecate's own hecate-setup",
            ));
        };
        let Some(rt) = &self.engine.inner.external else {
            return Err(unknown("external agents are not enabled in this process"));
        };
        if !rt.has_adapter(adapter_id) {
            return Err(unknown(&format!("no agent {adapter_id} is registered")));
        }
        rt.authenticate(adapter_id, method).await
    }

    /// Runs agent `adapter_id`'s terminal sign-in in this process's terminal:
    /// the agent launched exactly as a session would launch it, with `args`
    /// appended and `env` set over its environment.
    pub async fn terminal_login(
        self,
        adapter_id: &str,
        args: &[String],
        env: &[(String, String)],
    ) -> Result<TerminalLogin> {
        let rt = self.external()?;
        let exit = rt.run_terminal_login(adapter_id, args, env).await?;
        Ok(TerminalLogin {
            exit_code: exit.code.unwrap_or(128 + exit.signal.unwrap_or(0)),
            ended: exit.to_string(),
        })
    }

    /// Starts agent `adapter_id` in `workspace` for `initialize` only and picks
    /// its terminal sign-in method: `method` (the agent's own id, or the
    /// namespaced one), else the only one it offers.
    pub async fn terminal_method(
        self,
        adapter_id: &str,
        method: Option<&str>,
        workspace: &Path,
    ) -> Result<TerminalSignIn> {
        let rt = self.external()?;
        let offered = rt.terminal_sign_ins(adapter_id, workspace).await?;
        let ids: Vec<String> = offered.iter().map(|m| m.id.clone()).collect();
        let refused = |message: String| {
            HecateError::invalid(message)
                .with_detail("reason", NO_TERMINAL_METHOD)
                .with_detail("adapter_id", adapter_id)
                .with_detail("available", ids.clone())
        };
        let wanted = method.map(|m| {
            if split_method_id(m).is_some() {
                m.to_string()
            } else {
                method_id(adapter_id, m)
            }
        });
        match (wanted, offered.len()) {
            (_, 0) => Err(refused(format!(
                "{adapter_id} offers no terminal sign-in method; sign in from the editor \
                 or with the agent's own CLI"
            ))
            .with_operator_action(
                "Pick one of the agent's own methods in the editor, or follow the agent's \
                 documentation to log in.",
            )),
            (Some(id), _) => offered.into_iter().find(|m| m.id == id).ok_or_else(|| {
                refused(format!(
                    "{adapter_id} offers no terminal sign-in method {id:?} (it offers {})",
                    ids.join(", ")
                ))
            }),
            (None, 1) => offered
                .into_iter()
                .next()
                .ok_or_else(|| refused(format!("{adapter_id} offers no terminal sign-in method"))),
            (None, _) => {
                let first = split_method_id(&ids[0]).map_or("", |(_, m)| m);
                Err(refused(format!(
                    "{adapter_id} offers several terminal sign-in methods ({}); name one, \
                     e.g. `{}`",
                    ids.join(", "),
                    login_command(adapter_id, first)
                )))
            }
        }
    }

    fn external(self) -> Result<&'e ExternalRuntime> {
        self.engine.inner.external.as_deref().ok_or_else(|| {
            HecateError::new(
                ErrorType::AdapterNotFound,
                "external agents are not enabled in this process",
            )
        })
    }

    /// Signs out of every running agent that offers `logout`; answers their adapters.
    pub async fn logout(self) -> Result<Vec<String>> {
        match &self.engine.inner.external {
            Some(rt) => rt.logout().await,
            None => Err(
                HecateError::invalid("external agents are not enabled in this process")
                    .with_detail("reason", "agent_not_running"),
            ),
        }
    }
}
