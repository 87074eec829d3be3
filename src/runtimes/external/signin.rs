//! Signing in to external agents through Hecate. An agent that answers
//! `session/new` with `auth_required` is kept running (parked, per adapter),
//! and the error names the methods it offers: `agent` methods under
//! `auth_methods`, terminal methods (with the agent's args and env) under
//! `terminal_methods`. `authenticate` then goes to that process (or to a live
//! agent of the adapter), and the next attach in the same workspace takes the
//! parked process when it was signed in through it; otherwise a new process is
//! started, which sees a login made meanwhile in a terminal. A terminal method
//! is run here with the agent's own launch (`run_terminal_login`), never
//! authenticated. `logout` goes to every running agent that offers it.

use super::ExternalRuntime;
use crate::adapters::acp::agent::catalog::AgentManifest;
use crate::adapters::acp::agent::launcher::{self, LaunchSpec};
use crate::adapters::acp::{AcpError, AgentConnection};
use crate::adapters::process::{self, ExitInfo};
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::sign_in::{SignInMethod, TerminalSignIn, login_command, method_id};
use std::sync::Arc;

/// The stable reason of a sign-in request for an agent with no process.
pub const AGENT_NOT_RUNNING: &str = "agent_not_running";

/// The stable reason of a sign-in method id no running agent offers.
pub const AUTH_METHOD_UNKNOWN: &str = "auth_method_unknown";

/// The stable reason of an `authenticate` with a terminal method, which the
/// client runs itself (ACP forbids passing it to `authenticate`).
pub const AUTH_METHOD_TERMINAL: &str = "auth_method_terminal";

/// The methods `conn`'s agent `adapter_id` offers to `authenticate`, namespaced
/// (terminal methods are left out: the client would run them itself).
fn methods(adapter_id: &str, conn: &AgentConnection) -> Vec<SignInMethod> {
    conn.agent_info()
        .auth_methods
        .iter()
        .filter(|m| !m.terminal)
        .map(|m| SignInMethod {
            id: method_id(adapter_id, &m.id),
            name: m.name.clone(),
            description: m.description.clone(),
        })
        .collect()
}

/// The terminal methods `conn`'s agent `adapter_id` offers, namespaced, with
/// the agent's own args and env.
fn terminal_methods(adapter_id: &str, conn: &AgentConnection) -> Vec<TerminalSignIn> {
    conn.agent_info()
        .auth_methods
        .iter()
        .filter(|m| m.terminal)
        .map(|m| TerminalSignIn {
            id: method_id(adapter_id, &m.id),
            name: m.name.clone(),
            description: m.description.clone(),
            args: m.args.clone(),
            env: m.env.clone(),
        })
        .collect()
}

/// What starting an adapter takes: its manifest, its launch spec and the env
/// its process receives.
pub(super) type Launch<'a> = (&'a AgentManifest, LaunchSpec, Vec<(String, String)>);

/// An `invalid_request` for a sign-in request with the stable `reason`.
fn refused(reason: &str, message: String) -> HecateError {
    HecateError::invalid(message).with_detail("reason", reason)
}

impl ExternalRuntime {
    /// Maps a refused `session/new`: an `auth_required` answer parks the
    /// process (for `authenticate`) and its error lists the agent's methods
    /// under `auth_methods`; anything else is the plain error.
    pub(super) async fn refused_session(
        &self,
        adapter_id: &str,
        workspace: &str,
        conn: Arc<AgentConnection>,
        e: AcpError,
    ) -> HecateError {
        if !matches!(e, AcpError::AuthRequired { .. }) {
            return e.into_hecate(adapter_id);
        }
        let offered = methods(adapter_id, &conn);
        let in_terminal = terminal_methods(adapter_id, &conn);
        let mut err = e.into_hecate(adapter_id).with_detail(
            "auth_methods",
            serde_json::to_value(&offered).unwrap_or_default(),
        );
        if let Some(first) = conn.agent_info().auth_methods.iter().find(|m| m.terminal) {
            err = err
                .with_detail(
                    "terminal_methods",
                    serde_json::to_value(&in_terminal).unwrap_or_default(),
                )
                .with_operator_action(format!(
                    "Run `{}` in a terminal (or pick one of the agent's sign-in methods), \
                     then retry.",
                    login_command(adapter_id, &first.id)
                ));
        }
        tracing::info!(
            adapter_id,
            methods = offered.len(),
            terminal_methods = in_terminal.len(),
            "the agent asks to sign in; kept for authenticate"
        );
        self.parked
            .lock()
            .await
            .insert(adapter_id.to_string(), (conn, workspace.to_string()));
        err
    }

    /// The parked process of `adapter_id` when it runs in `workspace`, is
    /// still alive and was signed in through `authenticate` (taken out of the
    /// parking). One that was not is stopped: whatever sign-in happened since
    /// (a terminal login, the agent's own CLI) reaches only a new process.
    pub(super) async fn take_parked(
        &self,
        adapter_id: &str,
        workspace: &str,
    ) -> Option<Arc<AgentConnection>> {
        let mut parked = self.parked.lock().await;
        let fits = parked
            .get(adapter_id)
            .is_some_and(|(conn, ws)| ws == workspace && conn.is_alive());
        let (conn, _) = parked.remove(adapter_id).filter(|_| fits)?;
        drop(parked);
        if conn.signed_in_here() {
            return Some(conn);
        }
        tracing::info!(
            adapter_id,
            "the parked agent was not signed in through it; starting a new one"
        );
        conn.shutdown().await;
        None
    }

    /// What starting `adapter_id` takes, as every launch of it resolves it: its
    /// manifest, its launch spec (direct command or managed package) and the
    /// env its process receives (before a session's gateway variables).
    pub(super) fn launch(&self, adapter_id: &str) -> Result<Launch<'_>, HecateError> {
        let manifest = self.catalog.get(adapter_id).ok_or_else(|| {
            HecateError::new(
                ErrorType::AdapterNotFound,
                format!("external agent adapter {adapter_id:?} is not registered"),
            )
            .with_detail("adapters", self.catalog.ids())
        })?;
        let spec = launcher::resolve(manifest, &self.launcher).ok_or_else(|| {
            AcpError::NotInstalled(manifest.command.clone()).into_hecate(adapter_id)
        })?;
        Ok((manifest, spec, self.env_for(manifest)))
    }

    /// Starts `adapter_id` in `workspace` for `initialize` only and answers the
    /// terminal sign-in methods it offers (Hecate advertises `auth.terminal`).
    pub async fn terminal_sign_ins(
        &self,
        adapter_id: &str,
        workspace: &std::path::Path,
    ) -> Result<Vec<TerminalSignIn>, HecateError> {
        let (_, spec, env) = self.launch(adapter_id)?;
        let conn = AgentConnection::start(&spec, workspace, env, self.options.clone())
            .await
            .map_err(|e| e.into_hecate(adapter_id))?;
        let offered = terminal_methods(adapter_id, &conn);
        conn.shutdown().await;
        Ok(offered)
    }

    /// Runs `adapter_id`'s terminal sign-in in the user's terminal: the agent's
    /// launch as a session would start it, with `args` appended and `env` set
    /// over its environment; answers how the login ended.
    pub async fn run_terminal_login(
        &self,
        adapter_id: &str,
        args: &[String],
        env: &[(String, String)],
    ) -> Result<ExitInfo, HecateError> {
        let (_, spec, mut child_env) = self.launch(adapter_id)?;
        child_env.retain(|(k, _)| !env.iter().any(|(name, _)| name == k));
        child_env.extend(env.iter().cloned());
        let run = process::Spec::new(&spec.program)
            .args(&spec.args)
            .args(args)
            .env(&child_env);
        tracing::debug!(adapter_id, program = %spec.program.display(), ?args, "running the agent's terminal sign-in");
        process::run_in_foreground(&run)
            .await
            .map_err(|e| AcpError::Spawn(e).into_hecate(adapter_id))
    }

    /// The running processes of `adapter_id` (the parked one first, then live
    /// agents of the adapter).
    async fn running(&self, adapter_id: &str) -> Vec<Arc<AgentConnection>> {
        let mut out: Vec<_> = self
            .parked
            .lock()
            .await
            .get(adapter_id)
            .filter(|(conn, _)| conn.is_alive())
            .map(|(conn, _)| conn.clone())
            .into_iter()
            .collect();
        out.extend(
            self.live
                .lock()
                .await
                .values()
                .filter(|l| l.adapter_id == adapter_id && l.conn.is_alive())
                .map(|l| l.conn.clone()),
        );
        out
    }

    /// Calls `authenticate` with `method` on a running process of `adapter_id`:
    /// `agent_not_running` when none runs, `auth_method_unknown` when it does
    /// not offer the method.
    pub async fn authenticate(&self, adapter_id: &str, method: &str) -> Result<(), HecateError> {
        let Some(conn) = self.running(adapter_id).await.into_iter().next() else {
            return Err(refused(
                AGENT_NOT_RUNNING,
                format!(
                    "no {adapter_id} agent is running to sign in to; open a thread on \
                     agent:{adapter_id} first (its sign-in methods come with the \
                     auth_required answer)"
                ),
            )
            .with_detail("adapter_id", adapter_id));
        };
        if conn
            .agent_info()
            .auth_methods
            .iter()
            .any(|m| m.terminal && m.id == method)
        {
            return Err(refused(
                AUTH_METHOD_TERMINAL,
                format!(
                    "{} is a terminal sign-in method: the client runs it in a terminal \
                     (the method's args appended to Hecate's own command, or `{}`); \
                     it is never passed to authenticate",
                    method_id(adapter_id, method),
                    login_command(adapter_id, method)
                ),
            )
            .with_detail("method_id", method_id(adapter_id, method)));
        }
        let offered = methods(adapter_id, &conn);
        if !offered
            .iter()
            .any(|m| m.id == method_id(adapter_id, method))
        {
            let available: Vec<String> = offered.into_iter().map(|m| m.id).collect();
            return Err(refused(
                AUTH_METHOD_UNKNOWN,
                format!("{adapter_id} offers no sign-in method {method:?}"),
            )
            .with_detail("method_id", method_id(adapter_id, method))
            .with_detail("available", available));
        }
        conn.authenticate(method)
            .await
            .map_err(|e| e.into_hecate(adapter_id))
    }

    /// Calls `logout` on every running agent that offers it; answers the
    /// adapters signed out, or `agent_not_running` when none offers it.
    pub async fn logout(&self) -> Result<Vec<String>, HecateError> {
        let mut conns: Vec<(String, Arc<AgentConnection>)> = self
            .parked
            .lock()
            .await
            .iter()
            .map(|(a, (conn, _))| (a.clone(), conn.clone()))
            .collect();
        conns.extend(
            self.live
                .lock()
                .await
                .values()
                .map(|l| (l.adapter_id.clone(), l.conn.clone())),
        );
        conns.retain(|(_, c)| c.is_alive() && c.agent_info().logout);
        if conns.is_empty() {
            return Err(HecateError::new(
                ErrorType::InvalidRequest,
                "no running agent offers logout",
            )
            .with_detail("reason", AGENT_NOT_RUNNING));
        }
        let mut out = Vec::new();
        for (adapter_id, conn) in conns {
            conn.logout()
                .await
                .map_err(|e| e.into_hecate(&adapter_id))?;
            if !out.contains(&adapter_id) {
                out.push(adapter_id);
            }
        }
        Ok(out)
    }

    /// Stops every parked process.
    pub(super) async fn drop_parked(&self) {
        let all: Vec<_> = self.parked.lock().await.drain().collect();
        for (_, (conn, _)) in all {
            conn.shutdown().await;
        }
    }
}
