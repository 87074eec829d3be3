//! The editor-owned workspace at the adapter: a turn's `WorkspaceDelegate` gets the
//! agent's fs/terminal requests it offers to serve (after confinement), Hecate serves
//! the rest, every forwarded request is recorded, and the editor's errors reach the
//! agent unchanged.

use crate::support::acp_adapter::*;
use crate::support::common::workspace;
use futures::future::BoxFuture;
use hecate::domain::event::RuntimeEvent;
use hecate::domain::permission::FixedAnswer;
use hecate::domain::workspace::{
    DelegateCapabilities, DelegateError, DelegateResult, FileRead, TerminalCommand, TerminalExit,
    TerminalOutput, WorkspaceDelegate,
};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// A delegate that serves from memory and records every call.
#[derive(Debug, Default)]
struct Recording {
    caps: DelegateCapabilities,
    files: Mutex<HashMap<PathBuf, String>>,
    calls: Mutex<Vec<String>>,
    fail_reads: bool,
}

impl Recording {
    fn log(&self, s: String) {
        self.calls.lock().expect("calls").push(s);
    }

    fn calls(&self) -> Vec<String> {
        self.calls.lock().expect("calls").clone()
    }

    /// A delegate that reads and writes files and leaves terminals to Hecate.
    fn files_only() -> Self {
        Self {
            caps: DelegateCapabilities {
                read_text_file: true,
                write_text_file: true,
                terminal: false,
                ..DelegateCapabilities::default()
            },
            ..Self::default()
        }
    }
}

impl WorkspaceDelegate for Recording {
    fn capabilities(&self) -> DelegateCapabilities {
        self.caps
    }

    fn read_text_file(&self, r: FileRead) -> BoxFuture<'static, DelegateResult<String>> {
        self.log(format!(
            "read {} {:?} {:?}",
            r.path.display(),
            r.line,
            r.limit
        ));
        let found = self.files.lock().expect("files").get(&r.path).cloned();
        let result = match (self.fail_reads, found) {
            (false, Some(c)) => Ok(c),
            _ => Err(DelegateError {
                code: -32002,
                message: "Resource not found".into(),
                data: None,
            }),
        };
        Box::pin(async move { result })
    }

    fn write_text_file(
        &self,
        path: PathBuf,
        content: String,
    ) -> BoxFuture<'static, DelegateResult<()>> {
        self.log(format!("write {}", path.display()));
        self.files.lock().expect("files").insert(path, content);
        Box::pin(async { Ok(()) })
    }

    fn create_terminal(&self, c: TerminalCommand) -> BoxFuture<'static, DelegateResult<String>> {
        self.log(format!(
            "create {} {} in {}",
            c.command,
            c.args.join(" "),
            c.cwd.display()
        ));
        Box::pin(async { Ok("ed-1".to_string()) })
    }

    fn terminal_output(&self, id: String) -> BoxFuture<'static, DelegateResult<TerminalOutput>> {
        self.log(format!("output {id}"));
        Box::pin(async {
            Ok(TerminalOutput {
                output: "editor says hi\n".into(),
                truncated: false,
                exit: None,
            })
        })
    }

    fn wait_for_terminal_exit(
        &self,
        id: String,
    ) -> BoxFuture<'static, DelegateResult<TerminalExit>> {
        self.log(format!("wait {id}"));
        Box::pin(async {
            Ok(TerminalExit {
                exit_code: Some(4),
                signal: None,
            })
        })
    }

    fn kill_terminal(&self, id: String) -> BoxFuture<'static, DelegateResult<()>> {
        self.log(format!("kill {id}"));
        Box::pin(async { Ok(()) })
    }

    fn release_terminal(&self, id: String) -> BoxFuture<'static, DelegateResult<()>> {
        self.log(format!("release {id}"));
        Box::pin(async { Ok(()) })
    }
}

const SCRIPT: &str = r#"{"turns": [{"actions": [
    {"fs_write": {"path": "notes.txt", "content": "one\ntwo\n"}},
    {"fs_read": {"path": "notes.txt", "line": 2, "limit": 1}},
    {"terminal": {"command": "echo", "args": ["hi"]}},
    {"fs_write": {"path": "../escape.txt", "content": "x"}}
]}]}"#;

/// Runs the script's turn with `delegate` and returns the result.
async fn turn_through(delegate: Arc<Recording>) -> (TurnResult, PathBuf, tempfile::TempDir) {
    turn_with(delegate, SCRIPT).await
}

/// Runs `script`'s turn with `delegate` and returns the result.
async fn turn_with(
    delegate: Arc<Recording>,
    script: &str,
) -> (TurnResult, PathBuf, tempfile::TempDir) {
    let (guard, ws) = workspace();
    let (_s, sdir) = workspace();
    let script: serde_json::Value = serde_json::from_str(script).expect("script");
    let (conn, native) = scripted(&ws, &sdir, script).await;
    let (mut io, mut rx) = turn_io(
        Arc::new(FixedAnswer { allow: true }),
        CancellationToken::new(),
    );
    io.delegate = Some(delegate);
    let blocks = vec![hecate::domain::message::ContentBlock::Text { text: "go".into() }];
    let result = conn.prompt(&native, blocks, io).await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (TurnResult::new(result, events), ws, guard)
}

#[tokio::test]
async fn the_delegate_serves_what_it_offers_and_hecate_the_rest() {
    let delegate = Arc::new(Recording::files_only());
    let (t, ws, _g) = turn_through(delegate.clone()).await;
    let notes = ws.join("notes.txt");
    assert_eq!(
        delegate.calls(),
        [
            format!("write {}", notes.display()),
            format!("read {} Some(2) Some(1)", notes.display()),
        ],
        "the line window is the editor's to apply; the escape never reached it"
    );
    let text = t.text();
    assert!(text.contains("read: one\ntwo\n"), "{text}");
    assert!(
        text.contains("terminal exit 0: hi"),
        "Hecate ran it: {text}"
    );
    assert!(text.contains("write error"), "{text}");
    assert!(!notes.exists(), "the editor holds the file");
    assert!(t.events.iter().any(|e| matches!(e,
        RuntimeEvent::FileChanged { path, change } if path == "notes.txt" && change == "added")));
    let recorded: Vec<&str> = t
        .events
        .iter()
        .filter_map(|e| match e {
            RuntimeEvent::Raw { data } if data["source"] == "editor" => data["method"].as_str(),
            _ => None,
        })
        .collect();
    assert_eq!(recorded, ["fs/write_text_file", "fs/read_text_file"]);
}

#[tokio::test]
async fn editor_terminals_are_followed_by_their_id_and_editor_errors_reach_the_agent() {
    let delegate = Arc::new(Recording {
        caps: DelegateCapabilities {
            read_text_file: true,
            write_text_file: false,
            terminal: true,
            ..DelegateCapabilities::default()
        },
        fail_reads: true,
        ..Recording::default()
    });
    let (t, ws, _g) = turn_through(delegate.clone()).await;
    let text = t.text();
    assert!(
        text.contains("read error: -32002 Resource not found"),
        "{text}"
    );
    assert!(text.contains("terminal exit 4: editor says hi"), "{text}");
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).expect("Hecate wrote it"),
        "one\ntwo\n"
    );
    assert_eq!(
        delegate.calls()[1..],
        [
            format!("create echo hi in {}", ws.display()),
            "wait ed-1".to_string(),
            "output ed-1".to_string(),
            "release ed-1".to_string(),
        ]
    );
}

/// An agent that reads a file before creating it (Gemini CLI does) gets empty
/// content from an editor that does not have it, as when Hecate serves the file
/// itself, and its write then goes through.
#[tokio::test]
async fn a_forwarded_read_of_a_file_not_created_yet_is_empty_content() {
    let delegate = Arc::new(Recording::files_only());
    let script = r#"{"turns": [{"actions": [
        {"fs_read": {"path": "fresh.txt"}},
        {"fs_write": {"path": "fresh.txt", "content": "made\n"}},
        {"fs_read": {"path": "fresh.txt"}}
    ]}]}"#;
    let (t, ws, _g) = turn_with(delegate.clone(), script).await;
    let text = t.text();
    assert!(!text.contains("read error"), "{text}");
    assert!(text.contains("read: made\n"), "{text}");
    let fresh = ws.join("fresh.txt");
    assert_eq!(
        delegate.calls(),
        [
            format!("read {} None None", fresh.display()),
            format!("write {}", fresh.display()),
            format!("read {} None None", fresh.display()),
        ]
    );
}
