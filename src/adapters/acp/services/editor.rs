//! Forwarding an agent's fs and terminal requests to the client that drives the
//! turn (an editor, through the turn's `WorkspaceDelegate`). Paths and terminal
//! working directories are confined to the workspace exactly as when Hecate serves
//! them itself; every forwarded request is recorded as a diagnostic event with
//! `source: "editor"`, and a forwarded write also reports the changed file.

use crate::adapters::acp::services::routes::ConnectionState;
use crate::adapters::sandbox::paths::Confined;
use crate::domain::event::RuntimeEvent;
use crate::domain::workspace::{
    DelegateError, FileRead, TerminalCommand, TerminalExit, WorkspaceDelegate,
};
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, CreateTerminalResponse, ReadTextFileRequest, ReadTextFileResponse,
    TerminalExitStatus, TerminalOutputResponse, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Error as RpcError, ErrorCode};
use serde_json::{Value, json};
use std::sync::Arc;

/// The editor's error as the agent will see it.
pub(crate) fn rpc_error(e: DelegateError) -> RpcError {
    RpcError::new(ErrorCode::new(e.code), e.message).data(e.data)
}

fn record(shared: &ConnectionState, native_id: &str, method: &str, mut detail: Value) {
    detail["source"] = json!("editor");
    detail["method"] = json!(method);
    shared.emit(native_id, RuntimeEvent::Raw { data: detail });
}

fn exit_status(e: &TerminalExit) -> TerminalExitStatus {
    TerminalExitStatus::new()
        .exit_code(e.exit_code)
        .signal(e.signal.clone())
}

/// Forwards a confined `fs/read_text_file`.
pub(crate) async fn read_text_file(
    shared: &ConnectionState,
    native_id: &str,
    delegate: Arc<dyn WorkspaceDelegate>,
    path: Confined,
    req: &ReadTextFileRequest,
) -> Result<ReadTextFileResponse, RpcError> {
    record(
        shared,
        native_id,
        "fs/read_text_file",
        json!({ "path": path.relative.to_string_lossy() }),
    );
    let read = FileRead {
        path: path.real.clone(),
        line: req.line,
        limit: req.limit,
    };
    match delegate.read_text_file(read).await {
        Ok(content) => Ok(ReadTextFileResponse::new(content)),
        // A file that does not exist yet reads as empty, as when Hecate serves the
        // workspace itself: agents read before they create (the editor's "not
        // found" would fail their write). Other errors, and errors about files
        // that do exist, reach the agent as the editor sent them.
        Err(e) if !path.real.exists() => {
            tracing::debug!(path = %path.relative.display(), error = %e.message,
                "the editor has no such file; answering empty content");
            Ok(ReadTextFileResponse::new(String::new()))
        }
        Err(e) => Err(rpc_error(e)),
    }
}

/// Forwards a confined `fs/write_text_file` and reports the changed file.
pub(crate) async fn write_text_file(
    shared: &ConnectionState,
    native_id: &str,
    delegate: Arc<dyn WorkspaceDelegate>,
    path: Confined,
    existed: bool,
    req: &WriteTextFileRequest,
) -> Result<WriteTextFileResponse, RpcError> {
    let relative = path.relative.to_string_lossy().into_owned();
    record(
        shared,
        native_id,
        "fs/write_text_file",
        json!({ "path": relative, "bytes": req.content.len() }),
    );
    delegate
        .write_text_file(path.real, req.content.clone())
        .await
        .map_err(rpc_error)?;
    shared.emit(
        native_id,
        RuntimeEvent::FileChanged {
            path: relative,
            change: if existed { "modified" } else { "added" }.to_string(),
        },
    );
    Ok(WriteTextFileResponse::new())
}

/// Forwards `terminal/create` with its working directory confined (the workspace
/// when the agent names none); the editor's terminal id is remembered.
pub(crate) async fn create_terminal(
    shared: &ConnectionState,
    delegate: Arc<dyn WorkspaceDelegate>,
    req: &CreateTerminalRequest,
) -> Result<CreateTerminalResponse, RpcError> {
    let native_id = req.session_id.0.as_ref();
    let cwd = match &req.cwd {
        Some(c) => {
            shared
                .confine(c)
                .map_err(|r| {
                    RpcError::new(
                        ErrorCode::INVALID_PARAMS,
                        format!("terminal cwd {} rejected: {}", r.path, r.reason),
                    )
                    .data(json!({ "path": r.path, "reason": r.reason }))
                })?
                .real
        }
        None => shared.workspace.clone(),
    };
    record(
        shared,
        native_id,
        "terminal/create",
        json!({ "command": req.command, "args": req.args, "cwd": cwd }),
    );
    let command = TerminalCommand {
        command: req.command.clone(),
        args: req.args.clone(),
        env: req
            .env
            .iter()
            .map(|v| (v.name.clone(), v.value.clone()))
            .collect(),
        cwd,
        output_byte_limit: req.output_byte_limit,
    };
    let id = delegate.create_terminal(command).await.map_err(rpc_error)?;
    shared.set_editor_terminal(&id, Some(delegate));
    Ok(CreateTerminalResponse::new(id))
}

/// Forwards `terminal/output`.
pub(crate) async fn terminal_output(
    delegate: Arc<dyn WorkspaceDelegate>,
    id: &str,
) -> Result<TerminalOutputResponse, RpcError> {
    let out = delegate
        .terminal_output(id.to_string())
        .await
        .map_err(rpc_error)?;
    Ok(TerminalOutputResponse::new(out.output, out.truncated)
        .exit_status(out.exit.as_ref().map(exit_status)))
}

/// Forwards `terminal/wait_for_exit` and records how the command ended.
pub(crate) async fn wait_for_exit(
    shared: &ConnectionState,
    native_id: &str,
    delegate: Arc<dyn WorkspaceDelegate>,
    id: &str,
) -> Result<TerminalExitStatus, RpcError> {
    let exit = delegate
        .wait_for_terminal_exit(id.to_string())
        .await
        .map_err(rpc_error)?;
    record(
        shared,
        native_id,
        "terminal/wait_for_exit",
        json!({ "terminal_id": id, "exit_code": exit.exit_code, "signal": exit.signal }),
    );
    Ok(exit_status(&exit))
}

/// Forwards `terminal/kill`.
pub(crate) async fn kill(delegate: Arc<dyn WorkspaceDelegate>, id: &str) -> Result<(), RpcError> {
    delegate
        .kill_terminal(id.to_string())
        .await
        .map_err(rpc_error)
}

/// Forwards `terminal/release` and forgets the terminal.
pub(crate) async fn release(
    shared: &ConnectionState,
    delegate: Arc<dyn WorkspaceDelegate>,
    id: &str,
) -> Result<(), RpcError> {
    shared.set_editor_terminal(id, None);
    delegate
        .release_terminal(id.to_string())
        .await
        .map_err(rpc_error)
}
