//! Conversions between Hecate's domain types and ACP schema types: prompt content,
//! MCP server specs, permission requests and stop reasons.

use crate::domain::ids::{RunId, SessionId};
use crate::domain::mcp::McpServerConfig;
use crate::domain::message::ContentBlock as DomainBlock;
use crate::domain::permission::{
    PermissionKind, PermissionOption as DomainOption, PermissionOutcome, PermissionRequest,
};
use agent_client_protocol::v1::schema::{
    AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource, EmbeddedResourceResource,
    EnvVariable, HttpHeader, ImageContent, McpServer, McpServerHttp, McpServerSse, McpServerStdio,
    PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest, ResourceLink,
    SelectedPermissionOutcome, StopReason as AcpStopReason, TextContent, TextResourceContents,
};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Why a turn ended, as the agent reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The agent finished its answer.
    EndTurn,
    /// The model hit its token limit.
    MaxTokens,
    /// The agent hit its own request limit for the turn.
    MaxTurnRequests,
    /// The model refused.
    Refusal,
    /// The turn was cancelled.
    Cancelled,
}

impl From<AcpStopReason> for StopReason {
    fn from(r: AcpStopReason) -> Self {
        match r {
            AcpStopReason::EndTurn => Self::EndTurn,
            AcpStopReason::MaxTokens => Self::MaxTokens,
            AcpStopReason::MaxTurnRequests => Self::MaxTurnRequests,
            AcpStopReason::Refusal => Self::Refusal,
            AcpStopReason::Cancelled => Self::Cancelled,
            _ => Self::EndTurn,
        }
    }
}

/// The ACP form of an MCP server a session should be able to use.
pub fn mcp_server(server: &McpServerConfig) -> McpServer {
    let headers = |h: &[(String, String)]| {
        h.iter()
            .map(|(k, v)| HttpHeader::new(k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    match server {
        McpServerConfig::Stdio {
            name,
            command,
            args,
            env,
        } => McpServer::Stdio(
            McpServerStdio::new(name.clone(), PathBuf::from(command))
                .args(args.clone())
                .env(
                    env.iter()
                        .map(|(k, v)| EnvVariable::new(k.clone(), v.clone()))
                        .collect(),
                ),
        ),
        McpServerConfig::Http {
            name,
            url,
            headers: h,
        } => McpServer::Http(McpServerHttp::new(name.clone(), url.clone()).headers(headers(h))),
        McpServerConfig::Sse {
            name,
            url,
            headers: h,
        } => McpServer::Sse(McpServerSse::new(name.clone(), url.clone()).headers(headers(h))),
    }
}

fn resource_name(uri: &str) -> String {
    uri.rsplit('/')
        .find(|s| !s.is_empty())
        .unwrap_or(uri)
        .to_string()
}

/// Converts prompt content (already fitted to what the agent takes): text,
/// images, audio and resources map directly, an image known only by its URI
/// becomes a resource link; a tool result becomes text; thinking and tool-use
/// blocks have no prompt form and are left out.
pub fn prompt_blocks(blocks: &[DomainBlock]) -> Vec<ContentBlock> {
    blocks
        .iter()
        .filter_map(|b| match b {
            DomainBlock::Text { text } => Some(ContentBlock::Text(TextContent::new(text.clone()))),
            DomainBlock::Image {
                mime_type,
                data: Some(data),
                uri,
            } => Some(ContentBlock::Image(
                ImageContent::new(data.clone(), mime_type.clone()).uri(uri.clone()),
            )),
            DomainBlock::Image {
                mime_type,
                data: None,
                uri: Some(uri),
            } => Some(link(uri, Some(mime_type.clone()))),
            DomainBlock::Image { .. } => None,
            DomainBlock::Audio { mime_type, data } => Some(ContentBlock::Audio(AudioContent::new(
                data.clone(),
                mime_type.clone(),
            ))),
            DomainBlock::Resource {
                uri,
                text: Some(text),
                mime_type,
                ..
            } => Some(embedded(EmbeddedResourceResource::TextResourceContents(
                TextResourceContents::new(text.clone(), uri.clone()).mime_type(mime_type.clone()),
            ))),
            DomainBlock::Resource {
                uri,
                blob: Some(blob),
                mime_type,
                ..
            } => Some(embedded(EmbeddedResourceResource::BlobResourceContents(
                BlobResourceContents::new(blob.clone(), uri.clone()).mime_type(mime_type.clone()),
            ))),
            DomainBlock::Resource { uri, mime_type, .. } => Some(link(uri, mime_type.clone())),
            DomainBlock::ToolResult { content, .. } => {
                Some(ContentBlock::Text(TextContent::new(content.clone())))
            }
            DomainBlock::Thinking { .. } | DomainBlock::ToolUse { .. } => None,
        })
        .collect()
}

/// A resource link to `uri`, named by its last path segment.
fn link(uri: &str, mime_type: Option<String>) -> ContentBlock {
    ContentBlock::ResourceLink(ResourceLink::new(resource_name(uri), uri).mime_type(mime_type))
}

/// An embedded resource block.
fn embedded(resource: EmbeddedResourceResource) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource::new(resource))
}

/// Maps an ACP option kind to Hecate's meaning of it.
pub fn permission_kind(kind: PermissionOptionKind) -> PermissionKind {
    match kind {
        PermissionOptionKind::AllowOnce => PermissionKind::AllowOnce,
        PermissionOptionKind::AllowAlways => PermissionKind::AllowAlways,
        PermissionOptionKind::RejectAlways => PermissionKind::RejectAlways,
        _ => PermissionKind::RejectOnce,
    }
}

/// Builds the domain permission request (option ids verbatim) for a turn.
pub fn permission_request(
    req: &RequestPermissionRequest,
    session_id: SessionId,
    run_id: RunId,
) -> PermissionRequest {
    let fields = &req.tool_call.fields;
    let tool_kind = fields
        .kind
        .as_ref()
        .and_then(|k| serde_json::to_value(k).ok())
        .and_then(|v| v.as_str().map(str::to_string));
    PermissionRequest {
        session_id,
        run_id,
        tool_call_id: req.tool_call.tool_call_id.0.to_string(),
        title: fields.title.clone().unwrap_or_default(),
        tool_kind,
        raw: serde_json::to_value(&req.tool_call).unwrap_or_default(),
        options: req
            .options
            .iter()
            .map(|o| DomainOption {
                id: o.option_id.0.to_string(),
                name: o.name.clone(),
                kind: permission_kind(o.kind),
            })
            .collect(),
    }
}

/// Maps an answer to the ACP outcome; an id the agent did not offer cancels.
pub fn permission_outcome(
    req: &RequestPermissionRequest,
    outcome: PermissionOutcome,
) -> RequestPermissionOutcome {
    match outcome {
        PermissionOutcome::Selected { option_id }
            if req.options.iter().any(|o| *o.option_id.0 == *option_id) =>
        {
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option_id))
        }
        PermissionOutcome::Selected { option_id } => {
            tracing::warn!(%option_id, "permission answer names an option the agent did not offer");
            RequestPermissionOutcome::Cancelled
        }
        PermissionOutcome::Cancelled => RequestPermissionOutcome::Cancelled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        PermissionOption, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
    };
    use serde_json::json;

    #[test]
    fn prompt_blocks_map_and_drop() {
        let blocks = vec![
            DomainBlock::Text { text: "hi".into() },
            DomainBlock::Thinking {
                thinking: "x".into(),
                signature: None,
            },
            DomainBlock::Resource {
                uri: "file:///w/a.rs".into(),
                text: Some("fn main(){}".into()),
                blob: None,
                mime_type: None,
            },
            DomainBlock::Resource {
                uri: "file:///w/b.rs".into(),
                text: None,
                blob: None,
                mime_type: None,
            },
            DomainBlock::Image {
                mime_type: "image/png".into(),
                data: Some("iVBORw0=".into()),
                uri: None,
            },
            DomainBlock::Audio {
                mime_type: "audio/wav".into(),
                data: "UklGRg==".into(),
            },
            DomainBlock::Resource {
                uri: "file:///w/c.pdf".into(),
                text: None,
                blob: Some("JVBERi0=".into()),
                mime_type: Some("application/pdf".into()),
            },
        ];
        let out = prompt_blocks(&blocks);
        assert_eq!(out.len(), 6);
        let v = serde_json::to_value(&out).expect("json");
        assert_eq!(v[0]["type"], "text");
        assert_eq!(v[1]["type"], "resource");
        assert_eq!(v[1]["resource"]["text"], "fn main(){}");
        assert_eq!(v[2]["type"], "resource_link");
        assert_eq!(v[2]["name"], "b.rs");
        assert_eq!(
            (&v[3]["type"], &v[3]["mimeType"], &v[3]["data"]),
            (&json!("image"), &json!("image/png"), &json!("iVBORw0="))
        );
        assert_eq!(
            (&v[4]["type"], &v[4]["data"]),
            (&json!("audio"), &json!("UklGRg=="))
        );
        assert_eq!(v[5]["resource"]["blob"], "JVBERi0=");
        assert_eq!(v[5]["resource"]["mimeType"], "application/pdf");
    }

    #[test]
    fn permission_mapping_keeps_ids_and_maps_kinds() {
        let req = RequestPermissionRequest::new(
            "s1",
            ToolCallUpdate::new(
                "call_1",
                ToolCallUpdateFields::new()
                    .title("Run ls".to_string())
                    .kind(ToolKind::Execute),
            ),
            vec![
                PermissionOption::new("proceed_once", "Yes", PermissionOptionKind::AllowOnce),
                PermissionOption::new(
                    "proceed_always",
                    "Always",
                    PermissionOptionKind::AllowAlways,
                ),
                PermissionOption::new("cancel", "No", PermissionOptionKind::RejectOnce),
                PermissionOption::new("never", "Never", PermissionOptionKind::RejectAlways),
            ],
        );
        let d = permission_request(&req, SessionId::from("agent_chat_1"), RunId::from("run_1"));
        assert_eq!(d.tool_call_id, "call_1");
        assert_eq!(d.title, "Run ls");
        assert_eq!(d.tool_kind.as_deref(), Some("execute"));
        let kinds: Vec<_> = d.options.iter().map(|o| (o.id.as_str(), o.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("proceed_once", PermissionKind::AllowOnce),
                ("proceed_always", PermissionKind::AllowAlways),
                ("cancel", PermissionKind::RejectOnce),
                ("never", PermissionKind::RejectAlways),
            ]
        );
        let ok = permission_outcome(
            &req,
            PermissionOutcome::Selected {
                option_id: "cancel".into(),
            },
        );
        assert!(matches!(ok, RequestPermissionOutcome::Selected(s) if &*s.option_id.0 == "cancel"));
        let bogus = permission_outcome(
            &req,
            PermissionOutcome::Selected {
                option_id: "nope".into(),
            },
        );
        assert!(matches!(bogus, RequestPermissionOutcome::Cancelled));
    }

    #[test]
    fn mcp_specs_serialize_as_acp() {
        let s = McpServerConfig::Stdio {
            name: "fs".into(),
            command: "/bin/mcp".into(),
            args: vec!["--x".into()],
            env: vec![("K".into(), "V".into())],
        };
        let v = serde_json::to_value(mcp_server(&s)).expect("json");
        assert_eq!(v["name"], "fs");
        assert_eq!(v["env"][0]["name"], "K");
        let h = McpServerConfig::Http {
            name: "h".into(),
            url: "http://127.0.0.1/mcp".into(),
            headers: vec![],
        };
        let v = serde_json::to_value(mcp_server(&h)).expect("json");
        assert_eq!(v["type"], "http");
    }
}
