//! The operator console: its page at `/` and its files under `/console/`, embedded
//! at build time (`build.rs` lists `console/`) or, while developing it, read from
//! the folder `HECATE_CONSOLE_DIR` names. Served with a strict Content Security
//! Policy and the same Host and Origin checks as the API, but no token: the page
//! must load before it can ask for one.

use super::envelope::ApiError;
use crate::bridges::access::Guard;
use axum::Router;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::{Digest, Sha256};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/console_assets.rs"));
}

/// The policy every console response carries: scripts, styles and connections to
/// this origin only, no inline code, no framing, no form posts elsewhere.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// Where the console's files come from.
#[derive(Debug, Clone, Default)]
pub enum ConsoleSource {
    /// The copy built into the binary.
    #[default]
    Embedded,
    /// A folder read on every request (console development).
    Folder(PathBuf),
}

/// One console file ready to send.
struct Asset {
    bytes: Vec<u8>,
    etag: String,
}

impl ConsoleSource {
    /// The file at `path` (relative, `/`-separated), if the console has it.
    fn read(&self, path: &str) -> Option<Asset> {
        if !is_plain_relative(path) {
            return None;
        }
        let bytes = match self {
            Self::Embedded => embedded::CONSOLE_ASSETS
                .iter()
                .find(|(name, _)| *name == path)
                .map(|(_, bytes)| bytes.to_vec())?,
            Self::Folder(root) => std::fs::read(root.join(path)).ok()?,
        };
        let etag = format!("\"{}\"", hex::encode(&Sha256::digest(&bytes)[..12]));
        Some(Asset { bytes, etag })
    }
}

/// Whether `path` names a file inside the console folder: no root, no `..`, no
/// empty or dot segments, no backslashes.
fn is_plain_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\\')
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        && path.split('/').all(|s| !s.is_empty() && s != ".")
}

/// The media type of a console file, by its extension.
fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("woff2") => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// The console's routes, for merging into the server's router.
pub fn router<S: Clone + Send + Sync + 'static>(
    guard: Arc<Guard>,
    source: ConsoleSource,
) -> Router<S> {
    Router::new()
        .route("/", get(page))
        .route("/console/{*path}", get(file))
        .layer(axum::middleware::from_fn_with_state(guard, host_check))
        .with_state(Arc::new(source))
}

async fn host_check(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    match guard.check_host(req.uri(), req.headers()) {
        Ok(()) => next.run(req).await,
        Err(denial) => ApiError::from(denial).into_response(),
    }
}

async fn page(State(source): State<Arc<ConsoleSource>>, headers: HeaderMap) -> Response {
    send(&source, "index.html", &headers)
}

async fn file(
    State(source): State<Arc<ConsoleSource>>,
    UrlPath(path): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    send(&source, &path, &headers)
}

fn send(source: &ConsoleSource, path: &str, request: &HeaderMap) -> Response {
    let Some(asset) = source.read(path) else {
        return ApiError::no_route(&format!("/console/{path}")).into_response();
    };
    let unchanged = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == asset.etag));
    let mut response = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        asset.bytes.into_response()
    };
    let headers = response.headers_mut();
    if !unchanged {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(content_type(path)),
        );
    }
    if let Ok(etag) = HeaderValue::from_str(&asset.etag) {
        headers.insert(header::ETAG, etag);
    }
    for (name, value) in [
        (header::CACHE_CONTROL, "no-cache"),
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_name_console_files() {
        for ok in [
            "index.html",
            "src/app.js",
            "vendor/eventsource-parser/parse.js",
        ] {
            assert!(is_plain_relative(ok), "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../Cargo.toml",
            "src/../../x",
            "a//b",
            "./a",
            "a\\b",
            "src/",
        ] {
            assert!(!is_plain_relative(bad), "{bad}");
        }
    }

    #[test]
    fn the_embedded_copy_holds_the_page() {
        let page = ConsoleSource::Embedded
            .read("index.html")
            .expect("index.html is embedded");
        assert!(String::from_utf8_lossy(&page.bytes).contains("<html"));
        assert!(ConsoleSource::Embedded.read("../Cargo.toml").is_none());
    }

    #[test]
    fn a_folder_copy_is_read_inside_the_folder_only() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("index.html"), "<html>dev</html>").expect("write");
        let source = ConsoleSource::Folder(dir.path().join("."));
        assert_eq!(
            source.read("index.html").expect("read").bytes,
            b"<html>dev</html>"
        );
        assert!(source.read("../index.html").is_none());
        assert_eq!(content_type("a/b.js"), "text/javascript; charset=utf-8");
    }
}
