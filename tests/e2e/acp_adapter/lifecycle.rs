//! Process lifecycle (grandchildren, early exits), `session/load`, probes, the
//! manifest catalog and the launcher, against the fixture agent.

use crate::support::acp_adapter::*;
use crate::support::child::process_alive;
use crate::support::common::workspace;
use hecate::adapters::acp::catalog::{BUILTIN_MANIFESTS, parse_manifest};
use hecate::adapters::acp::install::install_managed;
use hecate::adapters::acp::launcher::{availability, resolve};
use hecate::adapters::acp::{
    AcpError, AgentConnection, AgentManifest, Catalog, LaunchSource, LauncherOptions, ProbeOptions,
    ProbeStatus, Stage, probe,
};
use hecate::adapters::process::env::current_env;
use hecate::domain::event::RuntimeEvent;
use std::time::Duration;

/// The pid of the grandchild the fixture agent (`--spawn-grandchild`) reports
/// on its stderr.
async fn grandchild_pid(conn: &AgentConnection) -> i32 {
    for _ in 0..200 {
        let pid = conn
            .stderr_tail()
            .lines()
            .find_map(|l| l.strip_prefix("grandchild pid: "))
            .and_then(|p| p.trim().parse::<i32>().ok());
        if let Some(pid) = pid {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the fixture never reported its grandchild");
}

/// Whether `pid` is gone, waiting for it at most 5 s.
async fn gone(pid: i32) -> bool {
    for _ in 0..100 {
        if !process_alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    !process_alive(pid)
}

#[tokio::test]
async fn grandchildren_die_with_the_agent() {
    let (_g, ws) = workspace();
    let conn = start(&ws, &["--spawn-grandchild", "--stderr-noise"]).await;
    let pid = grandchild_pid(&conn).await;
    assert!(process_alive(pid));
    assert!(conn.stderr_tail().contains("stderr noise"));
    let agent_pid = i32::try_from(conn.pid()).expect("pid");
    conn.shutdown().await;
    assert!(gone(pid).await, "grandchild {pid} outlived shutdown");
    assert!(!process_alive(agent_pid));
}

#[tokio::test]
async fn dropping_a_connection_kills_its_group() {
    let (_g, ws) = workspace();
    let conn = start(&ws, &["--spawn-grandchild"]).await;
    let pid = grandchild_pid(&conn).await;
    drop(conn);
    assert!(gone(pid).await, "grandchild {pid} outlived drop");
}

#[tokio::test]
async fn crash_at_initialize_is_an_actionable_error() {
    let (_g, ws) = workspace();
    let err = AgentConnection::start(
        &spec(&["--crash-on", "initialize"]),
        &ws,
        agent_env(),
        options(),
    )
    .await
    .expect_err("crashes");
    match err {
        AcpError::Exited { code, stderr_tail } => {
            assert_eq!(code, Some(3));
            assert!(stderr_tail.contains("crashing on purpose"), "{stderr_tail}");
        }
        other => panic!("expected Exited, got {other:?}"),
    }
}

#[tokio::test]
async fn agent_info_and_session_load_round_trip() {
    let (_g, ws) = workspace();
    let (_s, state) = workspace();
    let state_arg = state.display().to_string();
    let first = start(&ws, &["--state-dir", &state_arg]).await;
    let info = first.agent_info().clone();
    assert!(info.load_session);
    assert_eq!(info.protocol_version, 1);
    assert!(info.name.is_some());
    let native = first.new_session(&ws, &[]).await.expect("session").id;
    assert_eq!(
        turn(&first, &native, "remember me").await.text(),
        "echo: remember me"
    );
    first.shutdown().await;

    let second = start(&ws, &["--state-dir", &state_arg]).await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    second
        .load_session(&native, &ws, &[], tx)
        .await
        .expect("session/load");
    let mut replay = Vec::new();
    while let Ok(e) = rx.try_recv() {
        replay.push(e);
    }
    assert!(replay.contains(&RuntimeEvent::UserMessage {
        text: "remember me".into()
    }));
    assert!(replay.contains(&RuntimeEvent::TextDelta {
        text: "echo: remember me".into()
    }));
    assert_eq!(turn(&second, &native, "again").await.text(), "echo: again");
    second.shutdown().await;
}

#[tokio::test]
async fn broken_and_unsupported_session_load() {
    let (_g, ws) = workspace();
    let broken = start(&ws, &["--load-session", "broken"]).await;
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    match broken.load_session("whatever", &ws, &[], tx).await {
        Err(AcpError::Protocol { stage, code, .. }) => {
            assert_eq!(stage, Stage::LoadSession);
            assert_eq!(code, -32603);
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
    assert!(broken.is_alive());
    broken.shutdown().await;
    let unsupported = start(&ws, &["--load-session", "unsupported"]).await;
    assert!(!unsupported.agent_info().load_session);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    assert!(matches!(
        unsupported.load_session("x", &ws, &[], tx).await,
        Err(AcpError::Unsupported(_))
    ));
    unsupported.shutdown().await;
}

fn fixture_manifest(id: &str, args: &[&str]) -> AgentManifest {
    let mut all = vec!["acp-agent".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    let src = format!(
        "id = \"{id}\"\nname = \"Fixture\"\ncommand = {:?}\nargs = {:?}\n",
        fixture().display().to_string(),
        all
    );
    parse_manifest("fixture.toml", &src).expect("manifest")
}

fn probe_options(cache: &std::path::Path) -> ProbeOptions {
    ProbeOptions {
        launcher: LauncherOptions {
            cache_dir: Some(cache.to_path_buf()),
            path: None,
        },
        acp: options(),
        base_env: current_env(),
        extra_env: vec![],
        limit: std::time::Duration::from_secs(60),
    }
}

#[tokio::test]
async fn probe_classifies_ready_auth_missing_and_crash() {
    let (_c, cache) = workspace();
    let opts = probe_options(&cache);

    let ready = probe(&fixture_manifest("fx", &[]), &opts).await;
    assert_eq!(
        (ready.status, ready.stage),
        (ProbeStatus::Ready, Stage::Ready),
        "{ready:?}"
    );
    assert!(ready.agent_name.is_some());
    assert!(ready.error.is_none());

    let auth = probe(&fixture_manifest("fx", &["--auth-required"]), &opts).await;
    assert_eq!(
        (auth.status, auth.stage),
        (ProbeStatus::AuthRequired, Stage::NewSession),
        "{auth:?}"
    );
    assert!(
        auth.error
            .as_deref()
            .is_some_and(|e| e.contains("Authentication required"))
    );

    let mut missing = fixture_manifest("ghost", &[]);
    missing.command = "hecate-definitely-not-installed-agent".into();
    missing.package = Some("@example/ghost".into());
    let nf = probe(&missing, &opts).await;
    assert_eq!(
        (nf.status, nf.stage),
        (ProbeStatus::NotInstalled, Stage::Lookup),
        "{nf:?}"
    );

    let crash = probe(
        &fixture_manifest("fx", &["--crash-on", "initialize"]),
        &opts,
    )
    .await;
    assert_eq!(
        (crash.status, crash.stage),
        (ProbeStatus::Error, Stage::Initialize),
        "{crash:?}"
    );
    assert!(
        crash
            .stderr_tail
            .as_deref()
            .is_some_and(|t| t.contains("crashing on purpose"))
    );

    let crash_new = probe(
        &fixture_manifest("fx", &["--crash-on", "new_session"]),
        &opts,
    )
    .await;
    assert_eq!(
        (crash_new.status, crash_new.stage),
        (ProbeStatus::Error, Stage::NewSession)
    );

    let json = serde_json::to_value(&auth).expect("json");
    assert_eq!(json["status"], "auth_required");
    assert_eq!(json["stage"], "new_session");
}

/// An agent that never answers is reported within the probe's bound, naming the
/// stage it hung in, and its process is gone.
#[tokio::test]
async fn a_probe_of_an_agent_that_never_answers_is_bounded_and_names_the_stage() {
    let (_c, cache) = workspace();
    let mut opts = probe_options(&cache);
    opts.limit = std::time::Duration::from_secs(1);
    let marker = format!("hecate-probe-hang-{}", std::process::id());
    let src = format!(
        "id = \"silent\"\nname = \"Silent\"\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"sleep 1000; echo {marker}\"]\n"
    );
    let silent = parse_manifest("silent.toml", &src).expect("manifest");
    let probing = tokio::spawn(async move { probe(&silent, &opts).await });
    // The silent agent runs (the check below is not vacuous).
    let mut seen = false;
    for _ in 0..100 {
        if !crate::support::child::pids_running(&marker).is_empty() {
            seen = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(seen, "the silent agent never started");
    let report = probing.await.expect("probe task");
    assert_eq!(report.status, ProbeStatus::Error, "{report:?}");
    assert_eq!(report.stage, Stage::Initialize, "{report:?}");
    let error = report.error.clone().unwrap_or_default();
    assert!(
        error.contains("did not answer") && error.contains("initialize"),
        "{error}"
    );
    assert!(
        crate::support::child::all_gone(&marker, Duration::from_secs(5)).await,
        "the silent agent outlived its probe"
    );
}

#[tokio::test]
async fn user_manifests_add_override_and_report_errors() {
    let (_d, dir) = workspace();
    std::fs::write(
        dir.join("codex.toml"),
        "id = \"codex\"\nname = \"My Codex\"\ncommand = \"/opt/codex-acp\"\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("mine.toml"),
        "id = \"mine\"\nname = \"Mine\"\ncommand = \"mine-acp\"\nenv_allow = [\"MINE_*\"]\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("broken.toml"),
        "id = \"broken\"\nname = \"Broken\"\n\ncommand = \"x\"\ntested_range = \"not a range\"\n",
    )
    .expect("write");
    std::fs::write(dir.join("syntax.toml"), "id = \"s\"\nname = [\n").expect("write");
    let (catalog, errors) = Catalog::load(BUILTIN_MANIFESTS, Some(&dir));
    assert_eq!(catalog.ids().len(), 6, "{:?}", catalog.ids());
    assert_eq!(
        catalog.get("codex").map(|m| m.name.as_str()),
        Some("My Codex")
    );
    assert!(catalog.get("mine").is_some());
    assert!(catalog.get("gemini").is_some());
    assert_eq!(errors.len(), 2, "{errors:?}");
    let broken = errors
        .iter()
        .find(|e| e.file.ends_with("broken.toml"))
        .expect("broken");
    assert_eq!(broken.line, Some(5));
    assert!(broken.message.contains("tested_range"));
    let syntax = errors
        .iter()
        .find(|e| e.file.ends_with("syntax.toml"))
        .expect("syntax");
    assert!(syntax.line.is_some());
}

#[tokio::test]
async fn launcher_prefers_direct_then_managed() {
    let (_c, cache) = workspace();
    let (_b, bin) = workspace();
    let (catalog, _) = Catalog::load(BUILTIN_MANIFESTS, None);
    let mut gemini = catalog.get("gemini").expect("gemini").clone();
    // A command name no machine has, so only our fake PATH entries count.
    gemini.command = "hecate-fake-gemini".into();
    let search =
        std::env::join_paths([bin.clone(), "/usr/bin".into(), "/bin".into()]).expect("path");
    let opts = LauncherOptions {
        cache_dir: Some(cache.clone()),
        path: Some(search),
    };
    assert!(resolve(&gemini, &opts).is_none());
    // A fake npm that "installs" the package by creating its bin.
    let npm = bin.join("npm");
    std::fs::write(
        &npm,
        "#!/bin/sh\nprefix=\"$3\"\nmkdir -p \"$prefix/node_modules/.bin\"\necho \"$@\" > \"$prefix/npm-args\"\nprintf '#!/bin/sh\\necho gemini 0.61.2\\n' > \"$prefix/node_modules/.bin/gemini\"\nchmod +x \"$prefix/node_modules/.bin/gemini\"\n",
    )
    .expect("npm");
    std::process::Command::new("chmod")
        .args(["+x"])
        .arg(&npm)
        .status()
        .expect("chmod");
    let installed = install_managed(&gemini, &opts).await.expect("install");
    assert_eq!(installed.source, LaunchSource::Managed);
    let args = std::fs::read_to_string(cache.join("adapters/gemini/npm-args")).expect("args");
    assert!(args.contains("@google/gemini-cli@0.61.0"), "{args}");
    let spec = resolve(&gemini, &opts).expect("managed");
    assert_eq!(spec.args, vec!["--acp"]);
    let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
    let a = availability(&gemini, &opts, &env).await;
    assert!(a.available);
    assert_eq!(a.version.as_deref(), Some("0.61.2"));
    assert!(!a.version_outside_range);
    gemini.tested_range = Some(">=1.0.0".into());
    assert!(
        availability(&gemini, &opts, &env)
            .await
            .version_outside_range
    );
    // A direct command on PATH wins over the managed one.
    std::fs::write(bin.join("hecate-fake-gemini"), "#!/bin/sh\necho 0.70.0\n").expect("direct");
    std::process::Command::new("chmod")
        .args(["+x"])
        .arg(bin.join("hecate-fake-gemini"))
        .status()
        .expect("chmod");
    assert_eq!(
        resolve(&gemini, &opts).map(|s| s.source),
        Some(LaunchSource::Direct)
    );
}

#[tokio::test]
async fn requests_the_agent_lacks_are_protocol_errors() {
    let (_g, ws) = workspace();
    let conn = start(&ws, &[]).await;
    let native = conn.new_session(&ws, &[]).await.expect("session").id;
    match conn.set_mode(&native, "default").await {
        Err(AcpError::Protocol { stage, code, .. }) => {
            assert_eq!(stage, Stage::SetMode);
            assert_eq!(code, -32601);
        }
        other => panic!("expected method-not-found, got {other:?}"),
    }
    assert!(conn.is_alive());
    assert_eq!(
        turn(&conn, &native, "still here").await.text(),
        "echo: still here"
    );
    conn.shutdown().await;
    assert!(!conn.is_alive());
}
