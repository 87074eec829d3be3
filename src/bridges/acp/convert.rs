//! Conversions between ACP schema values and the engine's vocabulary.

use crate::domain::error::{ErrorType, HecateError};
use crate::domain::mcp::McpServerConfig;
use crate::domain::message::ContentBlock;
use crate::domain::prompt_content::resource_text;
use crate::domain::session::{RuntimeKind, Session};
use crate::engine::targets::TargetRef;
use agent_client_protocol::v1::schema::{
    ContentBlock as AcpBlock, EmbeddedResourceResource, McpServer,
};
use agent_client_protocol::{Error, ErrorCode};

/// Appends `piece` to `text` on a line of its own.
fn push_line(text: &mut String, piece: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(piece);
}

/// The plain text of a prompt plus its rich blocks (only kept when richer than
/// text). The text inlines embedded text resources and names every other
/// block (`[image: image/png]`, `[resource: URI]`), so a prompt of one image is
/// not empty and a transcript shows what was sent. A block kind this SDK knows
/// and Hecate does not is refused, never dropped.
pub fn prompt_content(blocks: &[AcpBlock]) -> Result<(String, Vec<ContentBlock>), Error> {
    let mut text = String::new();
    let mut rich = Vec::new();
    for b in blocks {
        let block = match b {
            AcpBlock::Text(t) => {
                text.push_str(&t.text);
                ContentBlock::Text {
                    text: t.text.clone(),
                }
            }
            AcpBlock::Image(i) => {
                push_line(&mut text, &format!("[image: {}]", i.mime_type));
                ContentBlock::Image {
                    mime_type: i.mime_type.clone(),
                    data: Some(i.data.clone()),
                    uri: i.uri.clone(),
                }
            }
            AcpBlock::Audio(a) => {
                push_line(&mut text, &format!("[audio: {}]", a.mime_type));
                ContentBlock::Audio {
                    mime_type: a.mime_type.clone(),
                    data: a.data.clone(),
                }
            }
            AcpBlock::ResourceLink(l) => {
                push_line(&mut text, &resource_text(&l.uri, None));
                ContentBlock::Resource {
                    uri: l.uri.clone(),
                    text: None,
                    blob: None,
                    mime_type: l.mime_type.clone(),
                }
            }
            AcpBlock::Resource(r) => {
                let (uri, body, blob, mime_type) = match &r.resource {
                    EmbeddedResourceResource::TextResourceContents(t) => {
                        (&t.uri, Some(t.text.clone()), None, &t.mime_type)
                    }
                    EmbeddedResourceResource::BlobResourceContents(b) => {
                        (&b.uri, None, Some(b.blob.clone()), &b.mime_type)
                    }
                    _ => return Err(unknown_block("resource")),
                };
                push_line(&mut text, &resource_text(uri, body.as_deref()));
                ContentBlock::Resource {
                    uri: uri.clone(),
                    text: body,
                    blob,
                    mime_type: mime_type.clone(),
                }
            }
            _ => return Err(unknown_block("unknown")),
        };
        rich.push(block);
    }
    if rich.iter().all(|b| matches!(b, ContentBlock::Text { .. })) {
        rich.clear();
    }
    Ok((text, rich))
}

/// The refusal of a content block Hecate cannot read.
fn unknown_block(block: &str) -> Error {
    Error::new(
        ErrorCode::INVALID_PARAMS,
        format!("Invalid params: Hecate cannot read a prompt block of kind {block}"),
    )
    .data(serde_json::json!({"reason": "content_unsupported", "block": block}))
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
        // An upstream MCP server's sign-in, not Hecate's: ACP's AUTH_REQUIRED would
        // send the editor to `authenticate` with Hecate, which cannot fix it. The
        // stable `type` and the fix (`operator_action`) are in `data`.
        ErrorType::AuthRequired => ErrorCode::INTERNAL_ERROR,
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
        AudioContent, BlobResourceContents, EmbeddedResource, ImageContent, ResourceLink,
        TextResourceContents,
    };

    #[test]
    fn plain_text_prompts_keep_no_blocks_and_resources_are_inlined() {
        let (text, rich) =
            prompt_content(&[AcpBlock::from("a"), AcpBlock::from("b")]).expect("text");
        assert_eq!((text.as_str(), rich.len()), ("ab", 0));
        let resource = EmbeddedResource::new(EmbeddedResourceResource::TextResourceContents(
            TextResourceContents::new("fn main() {}", "file:///w/main.rs"),
        ));
        let (text, rich) = prompt_content(&[
            AcpBlock::from("look at"),
            AcpBlock::Resource(resource),
            AcpBlock::ResourceLink(ResourceLink::new("lib.rs", "file:///w/lib.rs")),
        ])
        .expect("resources");
        assert_eq!(
            text,
            "look at\n<resource uri=\"file:///w/main.rs\">\nfn main() {}\n</resource>\n\
             [resource: file:///w/lib.rs]"
        );
        assert_eq!(rich.len(), 3);
        assert!(
            matches!(&rich[2], ContentBlock::Resource { text: None, blob: None, uri, .. } if uri == "file:///w/lib.rs")
        );
    }

    #[test]
    fn images_audio_and_binary_resources_are_kept_and_named_in_the_text() {
        let blob = EmbeddedResource::new(EmbeddedResourceResource::BlobResourceContents(
            BlobResourceContents::new("JVBERi0=", "file:///w/a.pdf").mime_type("application/pdf"),
        ));
        let (text, rich) = prompt_content(&[
            AcpBlock::Image(ImageContent::new("iVBORw0=", "image/png")),
            AcpBlock::Audio(AudioContent::new("UklGRg==", "audio/wav")),
            AcpBlock::Resource(blob),
        ])
        .expect("media");
        assert_eq!(
            text,
            "[image: image/png]\n[audio: audio/wav]\n[resource: file:///w/a.pdf]"
        );
        assert_eq!(
            rich,
            vec![
                ContentBlock::Image {
                    mime_type: "image/png".into(),
                    data: Some("iVBORw0=".into()),
                    uri: None
                },
                ContentBlock::Audio {
                    mime_type: "audio/wav".into(),
                    data: "UklGRg==".into()
                },
                ContentBlock::Resource {
                    uri: "file:///w/a.pdf".into(),
                    text: None,
                    blob: Some("JVBERi0=".into()),
                    mime_type: Some("application/pdf".into())
                },
            ]
        );
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

    #[test]
    fn an_upstream_sign_in_is_not_acps_auth_required() {
        let e = to_rpc(
            &HecateError::new(
                ErrorType::AuthRequired,
                "upstream MCP server \"gh\" needs a sign-in",
            )
            .with_detail("server", "gh")
            .with_operator_action("Run `hecate mcp login gh`."),
        );
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
        let data = e.data.expect("data");
        assert_eq!(data["type"], "auth_required");
        assert_eq!(data["server"], "gh");
        assert!(data.get("authRequired").is_none(), "{data}");
        assert_eq!(data["operator_action"], "Run `hecate mcp login gh`.");
    }
}
