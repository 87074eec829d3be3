//! `authenticate` and `logout` on Hecate. Hecate's own method `hecate-setup`
//! only checks that something is configured; an agent's method, offered in the
//! `auth_required` error of the request that needed it as
//! `agent:ADAPTER_ID:METHOD_ID`, is passed to that agent's running process.
//! An agent's terminal method is offered to an editor that runs them
//! (`auth.terminal`) as a terminal method of Hecate's own command (`hecate acp
//! ... --agent-login ADAPTER_ID -- ARGS`), and to any other editor as the
//! command a user runs (`hecate adapters login ADAPTER_ID METHOD_ID`); it is
//! never authenticated. `logout` reaches every running agent that offers it.

use super::convert::{nothing_configured, to_rpc};
use super::state::Shared;
use crate::domain::error::HecateError;
use crate::domain::sign_in::{TerminalSignIn, hecate_login_args, login_command, split_method_id};
use agent_client_protocol::Error;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    AuthMethod, AuthMethodTerminal, AuthenticateRequest, AuthenticateResponse, LogoutRequest,
    LogoutResponse,
};
use serde_json::{Value, json};

/// Hecate's own sign-in method: there is nothing to sign in to, only setup.
pub const SETUP_METHOD: &str = "hecate-setup";

/// `authenticate`: `hecate-setup`, or an agent's namespaced method.
pub async fn authenticate(
    shared: &Shared,
    r: AuthenticateRequest,
    resp: Responder<AuthenticateResponse>,
) -> Result<(), Error> {
    let id = r.method_id.0.to_string();
    if id == SETUP_METHOD {
        return if shared.targets().await.is_empty() {
            resp.respond_with_error(nothing_configured())
        } else {
            resp.respond(AuthenticateResponse::new())
        };
    }
    match shared.engine.agents().authenticate(&id).await {
        Ok(()) => resp.respond(AuthenticateResponse::new()),
        Err(e) => resp.respond_with_error(to_rpc(&e)),
    }
}

/// `logout`: signs out of every running agent that offers it.
pub async fn logout(
    shared: &Shared,
    _r: LogoutRequest,
    resp: Responder<LogoutResponse>,
) -> Result<(), Error> {
    match shared.engine.agents().logout().await {
        Ok(adapters) => {
            tracing::info!(?adapters, "signed out");
            resp.respond(LogoutResponse::new())
        }
        Err(e) => resp.respond_with_error(to_rpc(&e)),
    }
}

/// An agent's `auth_required` error as this editor is offered it: its terminal
/// methods (`terminal_methods`, with the agent's args and env) become ACP
/// terminal methods of Hecate's own command in `auth_methods` when the editor
/// runs them, else entries naming the `hecate adapters login` command (also
/// added to the message). Any other error is returned as it is.
pub fn offered_sign_ins(shared: &Shared, e: &HecateError) -> HecateError {
    let mut out = e.clone();
    let Some(raw) = out.details.remove("terminal_methods") else {
        return out;
    };
    let methods: Vec<TerminalSignIn> = serde_json::from_value(raw).unwrap_or_default();
    let commands: Vec<(TerminalSignIn, String, String)> = methods
        .into_iter()
        .filter_map(|m| {
            let (adapter, method) = split_method_id(&m.id)?;
            let (adapter, command) = (adapter.to_string(), login_command(adapter, method));
            Some((m, adapter, command))
        })
        .collect();
    if commands.is_empty() {
        return out;
    }
    if shared.runs_terminal_logins() {
        let mut offered = match out.details.remove("auth_methods") {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        };
        for (m, adapter, _) in commands {
            let method = AuthMethodTerminal::new(m.id.clone(), m.name.clone())
                .description(m.description.clone())
                .args(hecate_login_args(&adapter, &m))
                .env(m.env.into_iter().collect());
            offered.push(serde_json::to_value(AuthMethod::Terminal(method)).unwrap_or_default());
        }
        out.details
            .insert("auth_methods".into(), Value::Array(offered));
        return out;
    }
    out.message = format!(
        "{} Or sign in by running `{}` in a terminal.",
        out.message, commands[0].2
    );
    let listed: Vec<Value> = commands
        .into_iter()
        .map(|(m, _, command)| {
            let mut entry = json!({"id": m.id, "name": m.name, "command": command});
            if let Some(d) = m.description {
                entry["description"] = Value::String(d);
            }
            entry
        })
        .collect();
    out.details
        .insert("terminal_methods".into(), Value::Array(listed));
    out
}
