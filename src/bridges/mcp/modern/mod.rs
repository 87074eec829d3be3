//! What protocol revision 2026-07-28 adds to the server, where rmcp leaves it
//! to the handler: multi round-trip `tools/call` (`rounds`; `progress` sends a call's
//! progress to the round the client waits on), the
//! `subscriptions/listen` stream of session and resource updates (`listen`),
//! and the trace context a request carries in `_meta` (`trace`). rmcp itself
//! answers `server/discover`, validates per-request `_meta` and serves such
//! requests without a session.

pub(crate) mod listen;
pub(crate) mod progress;
pub(crate) mod rounds;
pub(crate) mod trace;

use rmcp::RoleServer;
use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;

/// Whether the request is made under revision 2026-07-28 or later (its `_meta`
/// names the revision, or the connection started under it), where the server
/// may not send requests to the client.
pub(crate) fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}
