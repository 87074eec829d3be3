//! Which wire format a `/v1` request's errors are answered in.

use super::handlers;
use crate::model_wire::WireFormat;
use axum::extract::Request;

/// The wire format a request's errors are answered in: Anthropic for
/// `/v1/messages` and for any request carrying `anthropic-version`, else OpenAI.
pub(super) fn format_of(req: &Request) -> WireFormat {
    if req.uri().path().ends_with("/messages") || handlers::speaks_anthropic(req.headers()) {
        WireFormat::Anthropic
    } else {
        WireFormat::OpenAi
    }
}
