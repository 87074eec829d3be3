//! A child run in the user's terminal: stdin, stdout and stderr inherited and
//! left in Hecate's own process group, so the child is in the terminal's
//! foreground and can read from it (an agent's interactive sign-in). Its
//! environment is still exactly the one given. Hecate outlives a Ctrl-C the
//! terminal sends to both, so it reports how the child ended.

use super::{ExitInfo, SpawnError, Spec};

/// Runs `spec` attached to Hecate's terminal until it exits (its `stdin`,
/// `stdout` and `stderr` settings are ignored: all three are inherited).
pub async fn run_in_foreground(spec: &Spec) -> Result<ExitInfo, SpawnError> {
    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::inherit())
        .stdout(std::process::Stdio::inherit())
        .stderr(std::process::Stdio::inherit());
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    let mut child = cmd.spawn().map_err(|e| SpawnError {
        program: spec.program_label(),
        message: e.to_string(),
    })?;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            // The terminal's Ctrl-C reaches the child too; it decides when to end.
            r = tokio::signal::ctrl_c() => {
                if r.is_err() {
                    break child.wait().await;
                }
            }
        }
    };
    let status = status.map_err(|e| SpawnError {
        program: spec.program_label(),
        message: e.to_string(),
    })?;
    use std::os::unix::process::ExitStatusExt;
    Ok(ExitInfo {
        code: status.code(),
        signal: status.signal(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_exit_code_and_only_the_given_environment_reach_the_caller() {
        let spec = Spec::new("/bin/sh")
            .args(["-c", "test -z \"$HOME\" && test \"$ONLY\" = yes && exit 7"])
            .env(&[("ONLY".into(), "yes".into())]);
        let exit = run_in_foreground(&spec).await.expect("ran");
        assert_eq!(exit.code, Some(7));
        let missing = run_in_foreground(&Spec::new("/nonexistent/login")).await;
        assert!(missing.is_err());
    }
}
