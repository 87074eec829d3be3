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
use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

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
    bytes: Cow<'static, [u8]>,
    etag: Cow<'static, str>,
}

/// The validator of `bytes`: a prefix of their SHA-256.
fn etag_of(bytes: &[u8]) -> String {
    format!("\"{}\"", hex::encode(&Sha256::digest(bytes)[..12]))
}

/// The embedded files' validators, worked out once (same order as the table).
fn embedded_etags() -> &'static [String] {
    static ETAGS: OnceLock<Vec<String>> = OnceLock::new();
    ETAGS.get_or_init(|| {
        embedded::CONSOLE_ASSETS
            .iter()
            .map(|(_, bytes)| etag_of(bytes))
            .collect()
    })
}

impl ConsoleSource {
    /// The file at `path` (relative, `/`-separated), if the console has it. The
    /// embedded copy is sent as it is, its validator computed once; a folder is
    /// read (and hashed) on every request.
    fn read(&self, path: &str) -> Option<Asset> {
        if !is_plain_relative(path) {
            return None;
        }
        match self {
            Self::Embedded => {
                let i = embedded::CONSOLE_ASSETS
                    .iter()
                    .position(|(name, _)| *name == path)?;
                Some(Asset {
                    bytes: Cow::Borrowed(embedded::CONSOLE_ASSETS[i].1),
                    etag: Cow::Borrowed(embedded_etags()[i].as_str()),
                })
            }
            Self::Folder(root) => {
                let bytes = std::fs::read(root.join(path)).ok()?;
                let etag = etag_of(&bytes);
                Some(Asset {
                    bytes: Cow::Owned(bytes),
                    etag: Cow::Owned(etag),
                })
            }
        }
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
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == asset.etag.as_ref()));
    let mut response = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        match asset.bytes {
            Cow::Borrowed(b) => b.into_response(),
            Cow::Owned(b) => b.into_response(),
        }
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
            source.read("index.html").expect("read").bytes.as_ref(),
            b"<html>dev</html>"
        );
        assert!(source.read("../index.html").is_none());
        assert_eq!(content_type("a/b.js"), "text/javascript; charset=utf-8");
    }
}
