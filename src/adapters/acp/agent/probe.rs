//! "Can this agent really start?": resolve it, spawn it in a scratch workspace,
//! complete `initialize` and `session/new`, shut it down, and classify the first
//! failure (not installed, needs sign-in, or an error at a named stage).

use crate::adapters::acp::agent::catalog::AgentManifest;
use crate::adapters::acp::agent::launcher::{LauncherOptions, resolve};
use crate::adapters::acp::client::{AcpOptions, AgentConnection};
use crate::adapters::acp::error::AcpError;
use crate::adapters::process::env::sanitized_env;
use crate::domain::agent_probe::Stage;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use crate::domain::agent_probe::{AgentProbe, ProbeStatus};

/// Inputs of a probe besides the manifest.
#[derive(Debug, Clone, Default)]
pub struct ProbeOptions {
    /// Where to look for the agent.
    pub launcher: LauncherOptions,
    /// Timeouts (initialize and session/new apply).
    pub acp: AcpOptions,
    /// Hecate's own environment, sanitized before the agent sees it.
    pub base_env: HashMap<String, String>,
    /// Explicitly opted-in extra variables.
    pub extra_env: Vec<(String, String)>,
    /// The whole probe's bound: an agent that does not answer within it is
    /// reported as an error at the stage it hung in.
    pub limit: Duration,
}

/// Default bound of a whole probe.
pub const PROBE_LIMIT: Duration = Duration::from_secs(30);

struct Scratch(PathBuf);

impl Scratch {
    fn create() -> std::io::Result<Self> {
        let dir =
            std::env::temp_dir().join(format!("hecate-probe-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir)?;
        Ok(Self(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Maps a failure at `stage` to (status, stage, error text, stderr tail).
fn classify(stage: Stage, e: AcpError) -> (ProbeStatus, Stage, String, Option<String>) {
    match e {
        AcpError::NotInstalled(m) => (ProbeStatus::NotInstalled, Stage::Lookup, m, None),
        AcpError::Spawn(e) => (ProbeStatus::Error, Stage::Spawn, e.to_string(), None),
        AcpError::AuthRequired { stage, message } => {
            (ProbeStatus::AuthRequired, stage, message, None)
        }
        AcpError::Protocol { stage, message, .. } => (ProbeStatus::Error, stage, message, None),
        AcpError::Timeout { stage } => (
            ProbeStatus::Error,
            stage,
            format!("timed out at {stage}"),
            None,
        ),
        AcpError::Exited { code, stderr_tail } => {
            let msg = match code {
                Some(c) => format!("the agent exited with code {c}"),
                None => "the agent exited".to_string(),
            };
            let tail = (!stderr_tail.is_empty()).then_some(stderr_tail);
            (ProbeStatus::Error, stage, msg, tail)
        }
        other => (ProbeStatus::Error, stage, other.to_string(), None),
    }
}

/// Probes one agent end to end and always returns a report (never an error).
pub async fn probe(manifest: &AgentManifest, opts: &ProbeOptions) -> AgentProbe {
    let started = Instant::now();
    let mut report = AgentProbe {
        adapter_id: manifest.id.clone(),
        status: ProbeStatus::Ready,
        stage: Stage::Ready,
        duration_ms: 0,
        error: None,
        stderr_tail: None,
        agent_name: None,
        agent_version: None,
        path: None,
    };
    let outcome = match tokio::time::timeout(opts.limit, run(manifest, opts, &mut report)).await {
        Ok(outcome) => outcome,
        // The connection (and the agent's process group) went with the future.
        Err(_) => Err((
            ProbeStatus::Error,
            report.stage,
            format!(
                "the agent did not answer within {} s (it hung at {})",
                opts.limit.as_secs_f64(),
                report.stage
            ),
            None,
        )),
    };
    if let Err((status, stage, error, tail)) = outcome {
        report.status = status;
        report.stage = stage;
        report.error = Some(error);
        report.stderr_tail = tail.or(report.stderr_tail.take());
    }
    report.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    report
}

type Failure = (ProbeStatus, Stage, String, Option<String>);

async fn run(
    manifest: &AgentManifest,
    opts: &ProbeOptions,
    report: &mut AgentProbe,
) -> Result<(), Failure> {
    report.stage = Stage::Lookup;
    let spec = resolve(manifest, &opts.launcher).ok_or_else(|| {
        let managed = if manifest.package.is_some() {
            " and its managed package is not installed"
        } else {
            ""
        };
        (
            ProbeStatus::NotInstalled,
            Stage::Lookup,
            format!("`{}` was not found on PATH{managed}", manifest.command),
            None,
        )
    })?;
    report.path = Some(spec.program.display().to_string());
    let scratch = Scratch::create().map_err(|e| {
        (
            ProbeStatus::Error,
            Stage::Spawn,
            format!("cannot create a scratch workspace: {e}"),
            None,
        )
    })?;
    let env = sanitized_env(&opts.base_env, &manifest.env_allow, &opts.extra_env);
    report.stage = Stage::Initialize;
    let conn = AgentConnection::start(&spec, &scratch.0, env, opts.acp.clone())
        .await
        .map_err(|e| classify(Stage::Initialize, e))?;
    report.agent_name = conn.agent_info().name.clone();
    report.agent_version = conn.agent_info().version.clone();
    report.stage = Stage::NewSession;
    let session = conn.new_session(&scratch.0, &[]).await;
    if session.is_err() {
        report.stderr_tail = Some(conn.stderr_tail()).filter(|t| !t.is_empty());
    }
    conn.shutdown().await;
    session
        .map(|_| report.stage = Stage::Ready)
        .map_err(|e| classify(Stage::NewSession, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_keeps_stage_and_words() {
        let (s, st, msg, _) = classify(
            Stage::NewSession,
            AcpError::AuthRequired {
                stage: Stage::NewSession,
                message: "Authentication required".into(),
            },
        );
        assert_eq!((s, st), (ProbeStatus::AuthRequired, Stage::NewSession));
        assert_eq!(msg, "Authentication required");
        let (s, st, _, tail) = classify(
            Stage::Initialize,
            AcpError::Exited {
                code: Some(1),
                stderr_tail: "panic".into(),
            },
        );
        assert_eq!((s, st), (ProbeStatus::Error, Stage::Initialize));
        assert_eq!(tail.as_deref(), Some("panic"));
        let json = serde_json::to_value(ProbeStatus::NotInstalled).expect("json");
        assert_eq!(json, "not_installed");
    }
}
