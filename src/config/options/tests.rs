use super::*;
use crate::config::Config;

#[test]
fn task_settings_take_the_environment_over_the_file_and_refuse_unknown_gates() {
    let file = TasksSection {
        approval_policies: Some("shell_exec".into()),
        lease_seconds: Some(5),
        workers: Some(3),
        poll_ms: None,
        max_mcp_servers_per_task: Some(2),
        default_model: Some("fix/m".into()),
        http_allow: Some(vec!["https://api.example.com/*".into()]),
        system_prompt: None,
    };
    let mut env = HashMap::new();
    let path = Path::new("/c.toml");
    let t = tasks(path, &file, &env, Path::new("/data")).expect("valid");
    assert_eq!(t.default_model, "fix/m");
    assert_eq!(t.http_allow, ["https://api.example.com/*"]);
    assert_eq!(
        (t.lease, t.workers, t.data_dir.clone()),
        (
            Duration::from_secs(5),
            3,
            Path::new("/data/tasks").to_path_buf()
        )
    );
    env.insert(
        "HECATE_TASK_QUEUE_LEASE_SECONDS".to_string(),
        "9".to_string(),
    );
    env.insert("HECATE_TASK_APPROVAL_POLICIES".to_string(), String::new());
    env.insert(
        "HECATE_TASK_HTTP_ALLOW".to_string(),
        "http://127.0.0.1:*/*, https://*".to_string(),
    );
    let t = tasks(path, &file, &env, Path::new("/data")).expect("valid");
    assert_eq!(t.lease, Duration::from_secs(9));
    assert_eq!(t.http_allow, ["http://127.0.0.1:*/*", "https://*"]);
    assert_eq!(t.max_mcp_servers_per_task, 2);
    env.insert(
        "HECATE_TASK_MAX_MCP_SERVERS_PER_TASK".to_string(),
        "0".to_string(),
    );
    let t = tasks(path, &file, &env, Path::new("/data")).expect("valid");
    assert_eq!(t.max_mcp_servers_per_task, 0);
    assert_eq!(t.approval_policy, ApprovalPolicy::parse("").expect("empty"));
    env.insert(
        "HECATE_TASK_APPROVAL_POLICIES".to_string(),
        "shell_exec,shel_exec".to_string(),
    );
    let e = tasks(path, &file, &env, Path::new("/data")).expect_err("unknown");
    assert!(e.to_string().contains("shel_exec"), "{e}");
    env.insert(
        "HECATE_TASK_QUEUE_LEASE_SECONDS".to_string(),
        "soon".to_string(),
    );
    assert!(tasks(path, &TasksSection::default(), &env, Path::new("/d")).is_err());
}

#[test]
fn the_global_prompt_layer_is_hecates_unless_the_file_or_the_environment_sets_it() {
    let path = Path::new("/c.toml");
    let mut env = HashMap::new();
    let data = Path::new("/data");
    let t = tasks(path, &TasksSection::default(), &env, data).expect("default");
    assert_eq!(t.system_prompt, crate::domain::task::DEFAULT_GLOBAL_PROMPT);
    let file = TasksSection {
        system_prompt: Some("  Team rules.  ".into()),
        ..TasksSection::default()
    };
    assert_eq!(
        tasks(path, &file, &env, data).expect("set").system_prompt,
        "Team rules."
    );
    // An empty layer is left out.
    let none = TasksSection {
        system_prompt: Some(String::new()),
        ..TasksSection::default()
    };
    assert_eq!(
        tasks(path, &none, &env, data).expect("empty").system_prompt,
        ""
    );
    env.insert(
        "HECATE_TASK_SYSTEM_PROMPT".to_string(),
        "From env.".to_string(),
    );
    assert_eq!(
        tasks(path, &file, &env, data).expect("env").system_prompt,
        "From env."
    );
    env.insert(
        "HECATE_TASK_SYSTEM_PROMPT".to_string(),
        "x".repeat(64 * 1024 + 1),
    );
    let e = tasks(path, &file, &env, data).expect_err("too long");
    assert!(e.to_string().contains("system_prompt"), "{e}");
}

#[test]
fn the_terminal_sandbox_is_off_by_default_and_the_environment_wins() {
    let path = Path::new("/c.toml");
    let mut env = HashMap::new();
    let off = terminal_sandbox(path, &TerminalsSection::default(), &env).expect("default");
    assert_eq!(off, TerminalSandbox::default());
    assert!(!off.is_on());
    let file = TerminalsSection {
        sandbox: Some("read_only".into()),
        network: Some(false),
        bwrap: Some("/opt/bwrap".into()),
    };
    let t = terminal_sandbox(path, &file, &env).expect("valid");
    assert_eq!(
        (t.mode, t.network, t.bwrap.clone()),
        (SandboxMode::ReadOnly, false, Some("/opt/bwrap".into()))
    );
    env.insert(
        "HECATE_TERMINAL_SANDBOX".to_string(),
        "workspace_only".to_string(),
    );
    env.insert("HECATE_TERMINAL_NETWORK".to_string(), "true".to_string());
    let t = terminal_sandbox(path, &file, &env).expect("valid");
    assert_eq!((t.mode, t.network), (SandboxMode::WorkspaceOnly, true));
    env.insert("HECATE_TERMINAL_SANDBOX".to_string(), "strict".to_string());
    let e = terminal_sandbox(path, &file, &env).expect_err("unknown mode");
    assert!(e.to_string().contains("strict"), "{e}");
    env.remove("HECATE_TERMINAL_SANDBOX");
    env.insert("HECATE_TERMINAL_NETWORK".to_string(), "no".to_string());
    assert!(terminal_sandbox(path, &file, &env).is_err());
    env.remove("HECATE_TERMINAL_NETWORK");
    let relative = TerminalsSection {
        bwrap: Some("bwrap".into()),
        ..TerminalsSection::default()
    };
    let e = terminal_sandbox(path, &relative, &env).expect_err("relative");
    assert!(e.to_string().contains("[terminals] bwrap"), "{e}");
}

#[test]
fn mcp_servers_parse_with_policies_and_reject_ambiguity() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"srv\"]\nenv = { TOKEN = \"$T\" }\n\
         policy = \"require_approval\"\n[mcp_servers.fs.tools]\nread = \"auto\"\n\
         [mcp_servers.web]\nurl = \"http://127.0.0.1:1/mcp\"\nheaders = { Authorization = \"Bearer $T\" }\n",
    )
    .expect("writes");
    let c = Config::load(&path, &HashMap::new()).expect("loads");
    let servers = c.mcp_servers().expect("valid");
    assert_eq!(servers.len(), 2);
    let fs = &servers[0];
    assert_eq!(fs.name, "fs");
    assert_eq!(fs.policy_for("read"), crate::engine::ToolPolicy::Auto);
    assert_eq!(
        fs.policy_for("write"),
        crate::engine::ToolPolicy::RequireApproval
    );
    std::fs::write(
        &path,
        "[mcp_servers.x]\ncommand = \"a\"\nurl = \"http://b\"\n",
    )
    .expect("writes");
    let c = Config::load(&path, &HashMap::new()).expect("loads");
    assert!(c.mcp_servers().is_err(), "command and url together");
    std::fs::write(
        &path,
        "[mcp_servers.x]\ncommand = \"a\"\npolicy = \"maybe\"\n",
    )
    .expect("writes");
    let c = Config::load(&path, &HashMap::new()).expect("loads");
    assert!(c.mcp_servers().is_err(), "unknown policy");
}

#[test]
fn mcp_pool_parses_validates_and_names_file_and_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    let defaults = Config::load(&path, &HashMap::new())
        .expect("loads")
        .mcp_pool()
        .expect("defaults");
    assert_eq!(
        defaults.idle_ttl,
        crate::adapters::mcp::PoolOptions::default().idle_ttl
    );
    assert_eq!(defaults.ping_timeout, std::time::Duration::from_secs(5));
    std::fs::write(
        &path,
        "[mcp_pool]\nidle_ttl_secs = 2\nmax_entries = 8\nping_interval_secs = 0\nping_timeout_secs = 9\ninit_timeout_secs = 5\nretry_delay_ms = 0\n",
    )
    .expect("writes");
    let opts = Config::load(&path, &HashMap::new())
        .expect("loads")
        .mcp_pool()
        .expect("valid");
    assert_eq!(opts.idle_ttl, std::time::Duration::from_secs(2));
    assert_eq!(opts.max_entries, 8);
    assert!(opts.ping_interval.is_zero(), "0 disables pings");
    assert_eq!(opts.ping_timeout, std::time::Duration::from_secs(9));
    assert_eq!(opts.init_timeout, std::time::Duration::from_secs(5));
    assert!(opts.retry_delay.is_zero(), "retry at once");

    std::fs::write(&path, "[mcp_pool]\nidle_ttl = 2\n").expect("writes");
    let e = Config::load(&path, &HashMap::new()).expect_err("unknown key");
    let msg = e.to_string();
    assert!(
        msg.contains("config.toml") && msg.contains("idle_ttl") && msg.contains("line 2"),
        "{msg}"
    );
    std::fs::write(&path, "[mcp_pool]\nmax_entries = \"many\"\n").expect("writes");
    let e = Config::load(&path, &HashMap::new()).expect_err("bad type");
    assert!(e.to_string().contains("line 2"), "{e}");
    for (body, key) in [
        ("idle_ttl_secs = 0", "idle_ttl_secs"),
        ("init_timeout_secs = 0", "init_timeout_secs"),
        ("max_entries = 0", "max_entries"),
        ("ping_interval_secs = 99999999999", "ping_interval_secs"),
        ("ping_timeout_secs = 0", "ping_timeout_secs"),
        ("ping_timeout_secs = 301", "ping_timeout_secs"),
        ("retry_delay_ms = 60001", "retry_delay_ms"),
    ] {
        std::fs::write(&path, format!("[mcp_pool]\n{body}\n")).expect("writes");
        let e = Config::load(&path, &HashMap::new())
            .expect("loads")
            .mcp_pool()
            .expect_err(body);
        let msg = e.to_string();
        assert!(
            msg.contains("config.toml") && msg.contains(&format!("[mcp_pool] {key}")),
            "{msg}"
        );
    }
}

#[test]
fn server_limits_default_parse_and_name_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    let defaults = Config::load(&path, &HashMap::new())
        .expect("loads")
        .server_limits(&HashMap::new())
        .expect("defaults");
    assert_eq!(defaults, super::ServerLimits::default());
    std::fs::write(
        &path,
        "[server]\nheader_read_timeout_secs = 1\nbody_read_timeout_secs = 2\nmax_connections = 3\n",
    )
    .expect("writes");
    let config = Config::load(&path, &HashMap::new()).expect("loads");
    let l = config.server_limits(&HashMap::new()).expect("valid");
    assert_eq!(l.header_read_timeout, std::time::Duration::from_secs(1));
    assert_eq!(l.body_read_timeout, std::time::Duration::from_secs(2));
    assert_eq!(l.max_connections, 3);
    let mut env = HashMap::new();
    env.insert("HECATE_SERVER_MAX_CONNECTIONS".to_string(), "7".to_string());
    env.insert(
        "HECATE_SERVER_BODY_READ_TIMEOUT_SECS".to_string(),
        "9".to_string(),
    );
    let l = config.server_limits(&env).expect("valid");
    assert_eq!(l.max_connections, 7, "the environment wins");
    assert_eq!(l.body_read_timeout, std::time::Duration::from_secs(9));
    assert_eq!(l.header_read_timeout, std::time::Duration::from_secs(1));
    env.insert(
        "HECATE_SERVER_MAX_CONNECTIONS".to_string(),
        "lots".to_string(),
    );
    let e = config.server_limits(&env).expect_err("not a number");
    assert!(
        e.to_string().contains("HECATE_SERVER_MAX_CONNECTIONS"),
        "{e}"
    );
    for (body, key) in [
        ("header_read_timeout_secs = 0", "header_read_timeout_secs"),
        ("body_read_timeout_secs = 3601", "body_read_timeout_secs"),
        ("max_connections = 0", "max_connections"),
    ] {
        std::fs::write(&path, format!("[server]\n{body}\n")).expect("writes");
        let e = Config::load(&path, &HashMap::new())
            .expect("loads")
            .server_limits(&HashMap::new())
            .expect_err(body);
        assert!(e.to_string().contains(&format!("[server] {key}")), "{e}");
    }
}

#[test]
fn history_takes_the_summary_settings_and_names_a_bad_key() {
    let path = Path::new("/c.toml");
    let h = HistorySection {
        strategy: Some("summary_buffer".into()),
        summarize_every: Some(8),
        max_messages: Some(40),
        ..HistorySection::default()
    };
    assert_eq!(
        history(path, &h).expect("valid"),
        HistoryStrategy::SummaryBuffer {
            summarize_every: 8,
            max_messages: 40
        }
    );
    let defaults = HistorySection {
        strategy: Some("summary_buffer".into()),
        ..HistorySection::default()
    };
    assert_eq!(
        history(path, &defaults).expect("defaults"),
        HistoryStrategy::summary_buffer()
    );
    for (h, key) in [
        (
            HistorySection {
                max_messages: Some(0),
                ..h.clone()
            },
            "[history] max_messages",
        ),
        (
            HistorySection {
                summarize_every: Some(10_001),
                ..h.clone()
            },
            "[history] summarize_every",
        ),
        (
            HistorySection {
                strategy: None,
                max_messages: Some(10),
                summarize_every: None,
                ..h.clone()
            },
            "[history] max_messages",
        ),
    ] {
        let e = history(path, &h).expect_err(key);
        let msg = e.to_string();
        assert!(msg.contains(key) && msg.contains("/c.toml"), "{msg}");
    }
}
