//! `fs/read_text_file` and `fs/write_text_file`, confined to the session workspace
//! and the additional directories the editor granted it.
//! A missing file inside the workspace reads as empty (Gemini reads before it
//! writes); a refused path answers a JSON-RPC error and leaves a diagnostic; a
//! write reports the changed file. When the turn's client serves files itself (an
//! editor), confined requests are forwarded to it instead (`editor.rs`).

use crate::adapters::acp::services::editor;
use crate::adapters::acp::services::routes::ConnectionState;
use crate::adapters::sandbox::paths::PathRejection;
use crate::domain::event::RuntimeEvent;
use agent_client_protocol::v1::schema::{
    ReadTextFileRequest, ReadTextFileResponse, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Error as RpcError, ErrorCode};
use serde_json::json;
use std::path::Path;

fn rejected(shared: &ConnectionState, native_id: &str, r: PathRejection) -> RpcError {
    shared.emit(
        native_id,
        RuntimeEvent::Raw {
            data: json!({ "rejected_path": r.path, "reason": r.reason }),
        },
    );
    tracing::warn!(path = %r.path, reason = %r.reason, "refused an agent path");
    RpcError::new(
        ErrorCode::INVALID_PARAMS,
        format!("path {} refused: {}", r.path, r.reason),
    )
    .data(json!({ "path": r.path, "reason": r.reason }))
}

fn io_error(path: &Path, e: &std::io::Error) -> RpcError {
    RpcError::new(
        ErrorCode::INTERNAL_ERROR,
        format!("{}: {e}", path.display()),
    )
}

/// Selects `limit` lines starting at 1-based `line` (line endings kept).
pub(crate) fn slice_lines(content: &str, line: Option<u32>, limit: Option<u32>) -> String {
    if line.is_none() && limit.is_none() {
        return content.to_string();
    }
    let skip = line.map_or(0, |l| l.saturating_sub(1) as usize);
    let take = limit.map_or(usize::MAX, |l| l as usize);
    content
        .split_inclusive('\n')
        .skip(skip)
        .take(take)
        .collect()
}

/// Serves `fs/read_text_file`.
pub(crate) async fn read_text_file(
    shared: &ConnectionState,
    req: &ReadTextFileRequest,
) -> Result<ReadTextFileResponse, RpcError> {
    let native = req.session_id.0.as_ref();
    let path = shared
        .confine(&req.path)
        .map_err(|r| rejected(shared, native, r))?;
    if let Some(d) = shared.delegate(native, |c| c.read_text_file) {
        return editor::read_text_file(shared, native, d, path, req).await;
    }
    let bytes = match tokio::fs::read(&path.real).await {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io_error(&req.path, &e)),
    };
    let content = String::from_utf8_lossy(&bytes);
    Ok(ReadTextFileResponse::new(slice_lines(
        &content, req.line, req.limit,
    )))
}

/// Serves `fs/write_text_file` (parent directories are created inside the workspace).
pub(crate) async fn write_text_file(
    shared: &ConnectionState,
    req: &WriteTextFileRequest,
) -> Result<WriteTextFileResponse, RpcError> {
    let native = req.session_id.0.as_ref();
    let path = shared
        .confine(&req.path)
        .map_err(|r| rejected(shared, native, r))?;
    if path.real.is_dir() {
        return Err(RpcError::new(
            ErrorCode::INVALID_PARAMS,
            format!("{} is a directory", req.path.display()),
        ));
    }
    let existed = tokio::fs::try_exists(&path.real).await.unwrap_or(false);
    if let Some(d) = shared.delegate(native, |c| c.write_text_file) {
        return editor::write_text_file(shared, native, d, path, existed, req).await;
    }
    if let Some(parent) = path.real.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| io_error(&req.path, &e))?;
    }
    tokio::fs::write(&path.real, req.content.as_bytes())
        .await
        .map_err(|e| io_error(&req.path, &e))?;
    shared.emit(
        native,
        RuntimeEvent::FileChanged {
            path: path.relative.to_string_lossy().into_owned(),
            change: if existed { "modified" } else { "added" }.to_string(),
        },
    );
    Ok(WriteTextFileResponse::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_slicing() {
        let c = "a\nb\nc\nd";
        assert_eq!(slice_lines(c, None, None), c);
        assert_eq!(slice_lines(c, Some(2), Some(2)), "b\nc\n");
        assert_eq!(slice_lines(c, Some(3), None), "c\nd");
        assert_eq!(slice_lines(c, None, Some(1)), "a\n");
        assert_eq!(slice_lines(c, Some(10), Some(1)), "");
    }
}
