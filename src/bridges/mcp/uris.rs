//! The URIs of Hecate's own MCP resources: the scheme, the session list, the
//! adapters, and one session's transcript (also a template).

use crate::domain::ids::SessionId;

/// The scheme of Hecate's own resources.
pub const SCHEME: &str = "hecate://";
/// The session list resource.
pub const SESSIONS_URI: &str = "hecate://sessions";
/// The adapters resource.
pub const ADAPTERS_URI: &str = "hecate://adapters";
/// The session transcript template.
pub const SESSION_TEMPLATE: &str = "hecate://sessions/{id}";

/// The URI of one session's transcript resource.
pub fn session_uri(id: &SessionId) -> String {
    format!("{SESSIONS_URI}/{id}")
}
