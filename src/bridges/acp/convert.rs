//! Conversions between ACP schema values and the engine's vocabulary.

use crate::domain::error::{ErrorType, HecateError};
use crate::domain::mcp::McpServerConfig;
use crate::domain::message::ContentBlock;
use crate::domain::session::{RuntimeKind, Session};
use crate::engine::targets::TargetRef;
use agent_client_protocol::v1::schema::{ContentBlock as AcpBlock, McpServer};
use agent_client_protocol::{Error, ErrorCode};

/// The plain text of a prompt plus its rich blocks (only kept when richer than text).
pub fn prompt_content(blocks: &[AcpBlock]) -> (String, Vec<ContentBlock>) {
    let mut text = String::new();
    let mut rich = Vec::new();
    let mut only_text = true;
    for b in blocks {
        match b {
            AcpBlock::Text(t) => {
                text.push_str(&t.text);
                rich.push(ContentBlock::Text {
                    text: t.text.clone(),
                });
            }
            AcpBlock::Image(i) => {
                only_text = false;
                rich.push(ContentBlock::Image {
                    mime_type: i.mime_type.clone(),
                    data: Some(i.data.clone()),
                    uri: i.uri.clone(),
                });
            }
            AcpBlock::ResourceLink(l) => {
                only_text = false;
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&format!("[resource: {}]", l.uri));
                rich.push(ContentBlock::Resource {
                    uri: l.uri.clone(),
                    text: None,
                    mime_type: l.mime_type.clone(),
                });
            }
            AcpBlock::Resource(r) => {
                only_text = false;
                let v = serde_json::to_value(&r.resource).unwrap_or_default();
                let uri = v["uri"].as_str().unwrap_or_default().to_string();
                let body = v["text"].as_str().map(str::to_string);
                if let Some(b) = &body {
                    text.push_str(&format!("\n<resource uri=\"{uri}\">\n{b}\n</resource>\n"));
                }
                rich.push(ContentBlock::Resource {
                    uri,
                    text: body,
                    mime_type: v["mimeType"].as_str().map(str::to_string),
                });
            }
            _ => only_text = false,
        }
    }
    if only_text {
        rich.clear();
    }
    (text, rich)
}

/// The target a stored session was last answered by.
pub fn target_of(session: &Session) -> Option<TargetRef> {
    match session.runtime_kind {
        RuntimeKind::ExternalAgent => Some(TargetRef::External {
            adapter_id: session.adapter_id.clone()?,
        }),
        RuntimeKind::Agent => Some(TargetRef::Hecate {
            model: Some((session.provider.clone()?, session.model.clone()?)),
        }),
        RuntimeKind::Model => Some(TargetRef::Model {
            provider: session.provider.clone()?,
            model: session.model.clone()?,
        }),
    }
}

/// An editor's MCP server in the engine's terms.
pub fn mcp_server(s: &McpServer) -> Option<McpServerConfig> {
    let v = serde_json::to_value(s).ok()?;
    let name = v["name"].as_str()?.to_string();
    let pairs = |key: &str| -> Vec<(String, String)> {
        v[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|h| {
                Some((
                    h["name"].as_str()?.to_string(),
                    h["value"].as_str()?.to_string(),
                ))
            })
            .collect()
    };
    match s {
        McpServer::Stdio(st) => Some(McpServerConfig::Stdio {
            name,
            command: st.command.display().to_string(),
            args: st.args.clone(),
            env: pairs("env"),
        }),
        McpServer::Http(h) => Some(McpServerConfig::Http {
            name,
            url: h.url.clone(),
            headers: pairs("headers"),
        }),
        McpServer::Sse(h) => Some(McpServerConfig::Sse {
            name,
            url: h.url.clone(),
            headers: pairs("headers"),
        }),
        _ => None,
    }
}

/// A Hecate error as a JSON-RPC error for the editor: readable message, stable
/// `type` in `data`; auth and not-found get their ACP codes.
pub fn to_rpc(e: &HecateError) -> Error {
    let mut data = serde_json::to_value(e).unwrap_or_default();
    if e.details.get("reason").and_then(|r| r.as_str()) == Some("agent_auth_required") {
        data["authRequired"] = serde_json::json!(true);
        return Error::new(
            ErrorCode::AUTH_REQUIRED,
            format!("Authentication required: {}", e.message),
        )
        .data(data);
    }
    let code = match e.error_type {
        ErrorType::NotFound => ErrorCode::RESOURCE_NOT_FOUND,
        ErrorType::InvalidRequest
        | ErrorType::RuntimeKindInvalid
        | ErrorType::HistoryStrategyInvalid
        | ErrorType::WorkspaceRequired
        | ErrorType::ModelRequired => ErrorCode::INVALID_PARAMS,
        _ => ErrorCode::INTERNAL_ERROR,
    };
    Error::new(code, format!("{} {}", e.user_message, e.message)).data(data)
}

/// The error sent when nothing is configured to answer.
pub fn nothing_configured() -> Error {
    Error::new(
        ErrorCode::AUTH_REQUIRED,
        "Authentication required: Hecate has no model provider or external agent configured. \
         Run `hecate doctor` to see the config path, then add a provider (or install an agent).",
    )
    .data(serde_json::json!({"authRequired": true, "action": "hecate doctor"}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, EmbeddedResourceResource, ResourceLink, TextResourceContents,
    };

    #[test]
    fn plain_text_prompts_keep_no_blocks_and_resources_are_inlined() {
        let (text, rich) = prompt_content(&[AcpBlock::from("a"), AcpBlock::from("b")]);
        assert_eq!((text.as_str(), rich.len()), ("ab", 0));
        let resource = EmbeddedResource::new(EmbeddedResourceResource::TextResourceContents(
            TextResourceContents::new("fn main() {}", "file:///w/main.rs"),
        ));
        let (text, rich) = prompt_content(&[
            AcpBlock::from("look at"),
            AcpBlock::Resource(resource),
            AcpBlock::ResourceLink(ResourceLink::new("lib.rs", "file:///w/lib.rs")),
        ]);
        assert!(text.contains("<resource uri=\"file:///w/main.rs\">\nfn main() {}"));
        assert!(text.ends_with("[resource: file:///w/lib.rs]"), "{text}");
        assert_eq!(rich.len(), 3);
    }

    #[test]
    fn errors_keep_their_type_and_get_acp_codes() {
        let e = to_rpc(&HecateError::not_found("session", "x"));
        assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND);
        assert_eq!(
            e.data.as_ref().map(|d| d["type"].clone()),
            Some(serde_json::json!("not_found"))
        );
        let auth = HecateError::new(ErrorType::GatewayError, "log in first")
            .with_detail("reason", "agent_auth_required");
        let e = to_rpc(&auth);
        assert_eq!(e.code, ErrorCode::AUTH_REQUIRED);
        assert!(e.message.starts_with("Authentication required"));
        assert_eq!(
            e.data.as_ref().map(|d| d["authRequired"].clone()),
            Some(serde_json::json!(true))
        );
        assert_eq!(nothing_configured().code, ErrorCode::AUTH_REQUIRED);
    }
}
