//! Agent terminals under the `[terminals]` sandbox, end to end: the real `hecate`
//! (`chat` and `acp`) supervising the fixture agent, whose turns run commands
//! through `terminal/create` in a workspace that has a sibling directory and a
//! HOME holding files the command must not reach. Each confined case is paired
//! with the same command unconfined, so a passing case proves the sandbox, not a
//! broken command.

use crate::support::acp_editor::{Caps, Editor, agent_home, files_turn};
use crate::support::common::{Home, text, workspace};
use std::path::PathBuf;

/// One turn per command, picked by the prompt; `__PORT__` and `__TMP__` are
/// filled in per test.
const SCRIPT: &str = r#"{"turns":[
 {"match":"cat-in","actions":[{"terminal":{"command":"cat","args":["inside.txt"]}}]},
 {"match":"cat-out","actions":[{"terminal":{"command":"cat","args":["../outside/secret.txt"]}}]},
 {"match":"cat-home","actions":[{"terminal":{"command":"sh","args":["-c","cat \"$HOME/private.txt\""]}}]},
 {"match":"put-in","actions":[{"terminal":{"command":"sh","args":["-c","echo made > made.txt && cat made.txt"]}}]},
 {"match":"put-out","actions":[{"terminal":{"command":"sh","args":["-c","echo escaped > ../outside/escaped.txt"]}}]},
 {"match":"put-tmp","actions":[{"terminal":{"command":"sh","args":["-c","echo scratch > /tmp/__TMP__ && cat /tmp/__TMP__"]}}]},
 {"match":"connect","actions":[{"terminal":{"command":"bash","args":["-c","(echo > /dev/tcp/127.0.0.1/__PORT__) 2>/dev/null && echo connected || echo no-network"]}}]}
]}"#;

/// A Hecate home with the scripted agent, a workspace `root/ws` holding
/// `inside.txt`, its sibling `root/outside/secret.txt`, and a HOME of its own
/// holding `private.txt`.
struct Machine {
    home: Home,
    _root: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    tmp_name: String,
}

impl Machine {
    /// Sets the machine up with `config` as the config file; the `connect` turn
    /// dials `port`.
    fn new(config: &str, port: u16) -> Self {
        let mut home = Home::empty();
        let (root, root_path) = workspace();
        let ws = root_path.join("ws");
        let outside = root_path.join("outside");
        let user_home = root_path.join("home");
        for dir in [&ws, &outside, &user_home] {
            std::fs::create_dir_all(dir).expect("dir");
        }
        std::fs::write(ws.join("inside.txt"), "inside-words\n").expect("inside");
        std::fs::write(outside.join("secret.txt"), "outside-secret\n").expect("secret");
        std::fs::write(user_home.join("private.txt"), "home-secret\n").expect("private");
        let tmp_name = format!("hecate-sandbox-{}.txt", uuid::Uuid::new_v4().simple());
        let script = SCRIPT
            .replace("__PORT__", &port.to_string())
            .replace("__TMP__", &tmp_name);
        home.add_scripted_agent(&script, &[], "");
        home.write_config(config);
        home.set("HOME", &user_home.display().to_string());
        Self {
            home,
            _root: root,
            ws,
            outside,
            tmp_name,
        }
    }

    /// Runs one `hecate chat` turn with `prompt` (and `env` on top of the home's)
    /// and returns what the agent said: `terminal exit N: OUTPUT` or
    /// `terminal error: ...`.
    fn turn(&self, prompt: &str, env: &[(&str, &str)]) -> String {
        let ws = self.ws.display().to_string();
        let mut cmd = self
            .home
            .cmd(&["chat", "--agent", "fixture", "--workspace", &ws, prompt]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run hecate chat");
        let (stdout, stderr) = text(&out);
        assert!(
            out.status.success(),
            "{prompt}: hecate chat failed\n{stdout}\n{stderr}"
        );
        stdout
    }
}

const UNCONFINED: &[(&str, &str)] = &[
    ("HECATE_TERMINAL_SANDBOX", "off"),
    ("HECATE_TERMINAL_NETWORK", "true"),
];

#[test]
fn workspace_only_terminals_read_the_workspace_but_not_its_neighbours_or_home() {
    let m = Machine::new("[terminals]\nsandbox = \"workspace_only\"\n", 1);
    let inside = m.turn("cat-in", &[]);
    assert!(inside.contains("terminal exit 0: inside-words"), "{inside}");
    for (prompt, secret) in [("cat-out", "outside-secret"), ("cat-home", "home-secret")] {
        let confined = m.turn(prompt, &[]);
        assert!(
            confined.contains("terminal exit ") && !confined.contains("terminal exit 0:"),
            "{prompt} fails: {confined}"
        );
        assert!(!confined.contains(secret), "{prompt} leaked: {confined}");
        let unconfined = m.turn(prompt, UNCONFINED);
        assert!(
            unconfined.contains(&format!("terminal exit 0: {secret}")),
            "{prompt} unconfined reads it: {unconfined}"
        );
    }
}

#[test]
fn read_only_terminals_write_the_workspace_and_a_private_tmp_only() {
    let m = Machine::new("[terminals]\nsandbox = \"read_only\"\n", 1);
    let made = m.turn("put-in", &[]);
    assert!(made.contains("terminal exit 0: made"), "{made}");
    assert_eq!(
        std::fs::read_to_string(m.ws.join("made.txt")).expect("written in the workspace"),
        "made\n"
    );
    let escaped = m.turn("put-out", &[]);
    assert!(
        escaped.contains("terminal exit ") && !escaped.contains("terminal exit 0:"),
        "{escaped}"
    );
    assert!(!m.outside.join("escaped.txt").exists(), "{escaped}");
    let scratch = m.turn("put-tmp", &[]);
    assert!(scratch.contains("terminal exit 0: scratch"), "{scratch}");
    assert!(
        !std::path::Path::new("/tmp").join(&m.tmp_name).exists(),
        "/tmp is the sandbox's own"
    );
    let unconfined = m.turn("put-out", UNCONFINED);
    assert!(unconfined.contains("terminal exit 0:"), "{unconfined}");
    assert!(m.outside.join("escaped.txt").exists(), "{unconfined}");
}

#[test]
fn without_network_a_terminal_cannot_reach_a_loopback_listener() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listens");
    let port = listener.local_addr().expect("addr").port();
    for config in [
        "[terminals]\nnetwork = false\n",
        "[terminals]\nsandbox = \"workspace_only\"\nnetwork = false\n",
    ] {
        let m = Machine::new(config, port);
        let cut = m.turn("connect", &[]);
        assert!(
            cut.contains("terminal exit 0: no-network"),
            "{config}: {cut}"
        );
        let open = m.turn("connect", UNCONFINED);
        assert!(
            open.contains("terminal exit 0: connected"),
            "{config}: {open}"
        );
    }
}

#[test]
fn a_sandbox_bubblewrap_cannot_build_refuses_the_terminal_and_names_the_fix() {
    let m = Machine::new(
        "[terminals]\nsandbox = \"workspace_only\"\nbwrap = \"/nonexistent/bwrap\"\n",
        1,
    );
    let missing = m.turn("cat-in", &[]);
    assert!(missing.contains("terminal error: create:"), "{missing}");
    for part in [
        "/nonexistent/bwrap",
        "install bubblewrap",
        r#"sandbox = "off""#,
    ] {
        assert!(missing.contains(part), "{part}: {missing}");
    }
    assert!(
        !missing.contains("inside-words"),
        "it did not run: {missing}"
    );
    let broken = m.turn("cat-in", &[("HECATE_TERMINAL_BWRAP", "/bin/false")]);
    assert!(
        broken.contains("terminal error: create:")
            && broken.contains("/bin/false cannot build a sandbox"),
        "{broken}"
    );
    assert!(!broken.contains("inside-words"), "it did not run: {broken}");
}

#[tokio::test(flavor = "multi_thread")]
async fn hecate_acp_logs_an_unusable_sandbox_at_start() {
    let home = agent_home(&[]);
    home.write_config("[terminals]\nsandbox = \"read_only\"\nbwrap = \"/nonexistent/bwrap\"\n");
    let (_guard, ws) = workspace();
    let (hecate, said) = files_turn(&home, Editor::default(), Caps::default(), &ws).await;
    assert!(
        said.contains("terminal error: create:") && said.contains("install bubblewrap"),
        "{said}"
    );
    let stderr = hecate.stderr();
    assert!(
        stderr.contains("agent terminals are configured to run in a bubblewrap sandbox")
            && stderr.contains("/nonexistent/bwrap"),
        "logged at start: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_sandbox_hecate_runs_terminals_itself_instead_of_the_editor() {
    let home = agent_home(&[]);
    home.write_config("[terminals]\nsandbox = \"workspace_only\"\n");
    let (_guard, ws) = workspace();
    let editor = Editor::default();
    let (_hecate, said) = files_turn(&home, editor.clone(), Caps::ALL, &ws).await;
    assert!(said.contains("terminal exit 0: hi"), "{said}");
    assert!(!said.contains("hi from the editor"), "{said}");
    let calls = editor.with(|e| e.calls.clone());
    assert!(
        !calls.iter().any(|c| c.starts_with("terminal")),
        "the editor's unconfined terminal was not used: {calls:?}"
    );
}
