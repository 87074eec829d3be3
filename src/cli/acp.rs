//! `hecate acp`: Hecate as an ACP agent on stdio, for Zed, JetBrains and any ACP
//! client; with `--remote URL`, a relay between stdio and a hub's `/acp`
//! WebSocket instead (`remote`); with `--agent-login ADAPTER_ID -- ARGS`, an
//! agent's terminal sign-in in the user's terminal (what an editor runs for a
//! terminal sign-in method Hecate offered). Stdout carries protocol frames
//! only; logs go to stderr.

mod remote;

use super::{AppContext, GlobalArgs};
use crate::bridges::acp::{BridgeConfig, serve_stdio};
use crate::domain::error::HecateError;
use crate::domain::sign_in::{AGENT_LOGIN_ENV_FLAG, AGENT_LOGIN_FLAG};
use crate::engine::targets::TargetRef;
use std::time::Duration;

/// Arguments of `hecate acp`.
#[derive(Debug, clap::Args)]
pub struct AcpArgs {
    /// Default target for new threads: `model:PROVIDER/MODEL`, `agent:ADAPTER_ID`,
    /// `hecate:PROVIDER/MODEL` (Hecate's own agent) or `hecate` (on the default
    /// model); else `[acp] default_target`, else the first available target.
    #[arg(long, env = "HECATE_ACP_TARGET")]
    pub target: Option<String>,
    /// Relay stdio to the ACP endpoint of a running `hecate serve` instead of
    /// serving here: `ws://HOST:PORT/acp` (`wss://` through TLS), or the server's
    /// `http(s)://HOST:PORT` address, to which `/acp` is added.
    #[arg(long, value_name = "URL")]
    pub remote: Option<String>,
    /// Bearer token for `--remote` (the hub's `[server] token`).
    #[arg(long, env = "HECATE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Run agent ADAPTER_ID's terminal sign-in here instead of serving ACP: the
    /// agent started as a thread would start it, with the arguments after `--`
    /// appended, in this terminal; exits with the sign-in's exit code. Editors
    /// run it for the terminal sign-in methods Hecate offers.
    #[arg(long = AGENT_LOGIN_FLAG, value_name = "ADAPTER_ID")]
    pub agent_login: Option<String>,
    /// With --agent-login: a variable of this process's environment to pass on
    /// to the sign-in (repeat per variable; the editor sets them).
    #[arg(long = AGENT_LOGIN_ENV_FLAG, value_name = "NAME", requires = "agent_login")]
    pub agent_login_env: Vec<String>,
    /// With --agent-login: the agent's own sign-in arguments.
    #[arg(last = true, value_name = "ARGS", requires = "agent_login")]
    pub agent_login_args: Vec<String>,
}

pub async fn run(cli: &GlobalArgs, args: &AcpArgs) -> anyhow::Result<i32> {
    if let Some(adapter_id) = &args.agent_login {
        return Ok(agent_login(cli, adapter_id, args).await);
    }
    if let Some(url) = &args.remote {
        // A relay needs no store, engine or configuration of its own.
        if args.target.is_some() {
            tracing::warn!("--target is not used with --remote: pick the target in the editor");
        }
        let token = args.token.as_deref().filter(|t| !t.is_empty());
        remote::relay(url, token).await?;
        return Ok(0);
    }
    let ctx = AppContext::build(cli).await?;
    let default_target = checked_default_target(
        args.target.as_deref(),
        ctx.config.file.acp.default_target.as_deref(),
    )?;
    ctx.log_terminal_sandbox().await;
    let config = BridgeConfig {
        namespace: ctx.namespace.clone(),
        default_target,
        discovery_timeout: Duration::from_secs(2),
    };
    tracing::info!("serving ACP on stdio");
    serve_stdio(ctx.engine.clone(), config).await?;
    Ok(0)
}

/// `--agent-login`: runs the agent's terminal sign-in and answers its exit
/// code; 1 with a message on stderr when it cannot start (unknown or missing
/// agent, a variable the editor did not set, a broken configuration).
async fn agent_login(cli: &GlobalArgs, adapter_id: &str, args: &AcpArgs) -> i32 {
    let fail = |why: String| {
        eprintln!("hecate: cannot run the sign-in of agent {adapter_id}: {why}");
        1
    };
    let mut env = Vec::new();
    for name in &args.agent_login_env {
        match std::env::var(name) {
            Ok(v) => env.push((name.clone(), v)),
            Err(_) => return fail(format!("{name} is not set (the editor sets it)")),
        }
    }
    let ctx = match AppContext::build(cli).await {
        Ok(ctx) => ctx,
        Err(e) => return fail(format!("{e:#}")),
    };
    match ctx
        .engine
        .agents()
        .terminal_login(adapter_id, &args.agent_login_args, &env)
        .await
    {
        Ok(done) => {
            if done.exit_code != 0 {
                eprintln!(
                    "hecate: the sign-in of agent {adapter_id} failed ({})",
                    done.ended
                );
            }
            done.exit_code
        }
        Err(e) => fail(format!("{} {}", e.message, e.operator_action)),
    }
}

/// The default target of new threads: `explicit` (`--target`) over `file`
/// (`[acp] default_target`), refused at startup when it does not parse rather
/// than ignored.
pub(crate) fn checked_default_target(
    explicit: Option<&str>,
    file: Option<&str>,
) -> Result<Option<String>, HecateError> {
    let (target, source) = match (explicit, file) {
        (Some(t), _) => (t, "--target (HECATE_ACP_TARGET)"),
        (None, Some(t)) => (t, "[acp] default_target"),
        (None, None) => return Ok(None),
    };
    match TargetRef::parse(target) {
        Ok(_) => Ok(Some(target.to_string())),
        Err(e) => {
            let message = format!("{source} is invalid: {}", e.message);
            Err(HecateError { message, ..e }.with_operator_action(format!(
                "Set {source} to model:PROVIDER/MODEL, agent:ADAPTER_ID, hecate:PROVIDER/MODEL or hecate, or remove it to start on the first target on offer."
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Cli, Command};
    use crate::domain::sign_in::{TerminalSignIn, hecate_login_args};
    use clap::Parser;

    #[test]
    fn the_login_args_hecate_offers_parse_after_an_editors_own_args() {
        let method = TerminalSignIn {
            id: "agent:codex:tty".into(),
            name: "Log in".into(),
            description: None,
            args: vec!["--login".into(), "--device".into()],
            env: [("CODEX_HOME".into(), "/h".into())].into(),
        };
        let mut argv = vec!["hecate", "acp", "--target", "agent:codex"];
        let appended = hecate_login_args("codex", &method);
        argv.extend(appended.iter().map(String::as_str));
        let Command::Acp(args) = Cli::try_parse_from(argv).expect("parses").command else {
            panic!("not acp");
        };
        assert_eq!(args.agent_login.as_deref(), Some("codex"));
        assert_eq!(args.agent_login_env, ["CODEX_HOME"]);
        assert_eq!(args.agent_login_args, ["--login", "--device"]);
        assert!(
            Cli::try_parse_from(["hecate", "acp", "--", "--login"]).is_err(),
            "sign-in args need --agent-login"
        );
    }
}
