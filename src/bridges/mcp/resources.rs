//! Resources: Hecate's own (`hecate://sessions`, `hecate://sessions/{id}` as a
//! template, `hecate://adapters` with their health) and the upstreams',
//! listed verbatim and read through the engine.

use super::errors::{protocol_error, resource_not_found};
use super::server::HecateMcp;
use super::uris::{ADAPTERS_URI, SCHEME, SESSION_TEMPLATE, SESSIONS_URI};
use crate::domain::api_key::{Identity, OWN_TOOLS_SERVER};
use crate::domain::error::ErrorType;
use crate::domain::ids::SessionId;
use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde_json::{Value, json};

fn json_contents(uri: &str, v: &Value) -> ReadResourceResult {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    ReadResourceResult::new(vec![
        ResourceContents::text(text, uri.to_string()).with_mime_type("application/json"),
    ])
}

impl HecateMcp {
    /// Resources this connection lists to `identity`.
    pub(crate) async fn resources(&self, identity: &Identity) -> Vec<Resource> {
        let mut out = Vec::new();
        if self.is_hub() && identity.allows_server(OWN_TOOLS_SERVER) {
            out.push(
                Resource::new(SESSIONS_URI, "sessions")
                    .with_title("Hecate sessions")
                    .with_description("The sessions of this namespace, newest first")
                    .with_mime_type("application/json"),
            );
            out.push(
                Resource::new(ADAPTERS_URI, "adapters")
                    .with_title("External agents and their health")
                    .with_description("Catalog agents with availability and version")
                    .with_mime_type("application/json"),
            );
        }
        for (server, r) in self.engine.mcp().resources().await {
            if self.opts.upstream.as_ref().is_some_and(|u| *u != server)
                || !identity.allows_server(&server)
            {
                continue;
            }
            if let Ok(res) = serde_json::from_value::<Resource>(r) {
                out.push(res);
            }
        }
        out
    }

    /// Resource templates this connection lists to `identity`.
    pub(crate) async fn resource_templates(&self, identity: &Identity) -> Vec<ResourceTemplate> {
        let mut out = Vec::new();
        if self.is_hub() && identity.allows_server(OWN_TOOLS_SERVER) {
            out.push(
                ResourceTemplate::new(SESSION_TEMPLATE, "session")
                    .with_title("A Hecate session")
                    .with_description("One session's header, messages and runs; subscribe to follow a running turn")
                    .with_mime_type("application/json"),
            );
        }
        for (server, t) in self.engine.mcp().resource_templates().await {
            if self.opts.upstream.as_ref().is_some_and(|u| *u != server)
                || !identity.allows_server(&server)
            {
                continue;
            }
            if let Ok(t) = serde_json::from_value::<ResourceTemplate>(t) {
                out.push(t);
            }
        }
        out
    }

    /// Reads one resource for `identity` (one it may not see is not found).
    pub(crate) async fn read(
        &self,
        uri: &str,
        identity: &Identity,
    ) -> Result<ReadResourceResult, ErrorData> {
        if !self.may_see_resource(identity, uri) {
            return Err(resource_not_found(uri));
        }
        if self.is_hub() && uri.starts_with(SCHEME) {
            return self.read_own(uri).await;
        }
        let allowed = |server: &str| identity.allows_server(server);
        match self.engine.mcp().read_resource_from(uri, &allowed).await {
            Ok(v) => serde_json::from_value::<ReadResourceResult>(v)
                .map_err(|e| ErrorData::internal_error(format!("upstream resource: {e}"), None)),
            Err(e) if e.error_type == ErrorType::NotFound => Err(resource_not_found(uri)),
            Err(e) => Err(protocol_error(&e)),
        }
    }

    async fn read_own(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        if uri == SESSIONS_URI {
            let list = self
                .engine
                .list_sessions(self.ns(), 200)
                .await
                .map_err(|e| protocol_error(&e))?;
            return Ok(json_contents(uri, &json!({ "sessions": list })));
        }
        if uri == ADAPTERS_URI {
            let list = self
                .engine
                .agents()
                .list()
                .await
                .map_err(|e| protocol_error(&e))?;
            return Ok(json_contents(uri, &json!({ "adapters": list })));
        }
        if let Some(id) = uri.strip_prefix(&format!("{SESSIONS_URI}/"))
            && !id.is_empty()
            && !id.contains('/')
        {
            return match self
                .engine
                .transcript(self.ns(), &SessionId::from(id))
                .await
            {
                Ok(t) => Ok(json_contents(
                    uri,
                    &serde_json::to_value(&t).unwrap_or_default(),
                )),
                Err(e) if e.error_type == ErrorType::NotFound => Err(resource_not_found(uri)),
                Err(e) => Err(protocol_error(&e)),
            };
        }
        Err(resource_not_found(uri))
    }
}
