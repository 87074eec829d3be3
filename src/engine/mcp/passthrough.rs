//! Upstream resources, resource templates, prompts and completions passed
//! through the hub: listed from every non-blocked upstream (prompts namespaced
//! like tools), and read or fetched from the upstream that owns them. Resource
//! subscriptions are in `mcp_subscriptions`.

use super::types::{LIST_TIMEOUT, ToolPolicy, UpstreamServer, client_error, expose_names};
use crate::adapters::mcp::tool_def::{annotate, name_of};
use crate::domain::error::{HecateError, Result};
use crate::engine::Mcp;
use serde_json::{Map, Value};

/// What `gather` asks each upstream to list.
#[derive(Debug, Clone, Copy)]
enum Listing {
    Resources,
    ResourceTemplates,
    Prompts,
}

impl<'e> Mcp<'e> {
    /// What every non-blocked upstream lists of `kind`, with the name of the server
    /// that listed it, in configuration order; an upstream that cannot be reached
    /// or refuses the list is left out.
    async fn gather(self, kind: Listing) -> Vec<(String, Vec<Value>)> {
        let mut out = Vec::new();
        for s in self
            .servers()
            .iter()
            .filter(|s| s.policy != ToolPolicy::Block)
        {
            let Ok(lease) = self.lease(s).await else {
                continue;
            };
            let listed = match kind {
                Listing::Resources => lease.list_resources(LIST_TIMEOUT).await,
                Listing::ResourceTemplates => lease.list_resource_templates(LIST_TIMEOUT).await,
                Listing::Prompts => lease.list_prompts(LIST_TIMEOUT).await,
            };
            if let Ok(list) = listed {
                out.push((s.name.clone(), list));
            }
        }
        out
    }

    /// The resources of every non-blocked upstream, each listed verbatim with the
    /// alias of the server that owns it.
    pub async fn resources(self) -> Vec<(String, Value)> {
        let mut out = Vec::new();
        for (server, list) in self.gather(Listing::Resources).await {
            let mut owners = self
                .engine
                .mcp_hub()
                .resource_owner
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            for r in list {
                if let Some(uri) = r.get("uri").and_then(Value::as_str) {
                    owners.insert(uri.to_string(), server.clone());
                }
                out.push((server.clone(), r));
            }
        }
        out
    }

    /// The resource templates of every non-blocked upstream.
    pub async fn resource_templates(self) -> Vec<(String, Value)> {
        let mut out = Vec::new();
        for (server, list) in self.gather(Listing::ResourceTemplates).await {
            out.extend(list.into_iter().map(|t| (server.clone(), t)));
        }
        out
    }

    /// Reads an upstream resource: from the server that listed it, else from the
    /// first non-blocked server that can read it (`not_found` when none can).
    pub async fn read_resource(self, uri: &str) -> Result<Value> {
        self.read_resource_from(uri, &|_| true).await
    }

    /// The upstream that listed `uri` in its resources, once they were listed.
    pub fn resource_owner(self, uri: &str) -> Option<String> {
        self.engine
            .mcp_hub()
            .resource_owner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(uri)
            .cloned()
    }

    /// [`Self::read_resource`] asking only the upstreams `allowed` names (a
    /// caller whose key sees some servers only).
    pub async fn read_resource_from(
        self,
        uri: &str,
        allowed: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<Value> {
        let owner = self.resource_owner(uri);
        let servers = self.servers();
        let mut order: Vec<&UpstreamServer> = servers
            .iter()
            .filter(|s| s.policy != ToolPolicy::Block && allowed(&s.name))
            .collect();
        order.sort_by_key(|s| Some(&s.name) != owner.as_ref());
        for s in order {
            let Ok(lease) = self.lease(s).await else {
                continue;
            };
            if let Ok(v) = lease.read_resource(uri, LIST_TIMEOUT).await {
                return Ok(v);
            }
        }
        Err(HecateError::not_found("resource", uri))
    }

    /// The prompts of every non-blocked upstream, namespaced like tools: each is
    /// `(server, original name, exposed name, definition)`.
    pub async fn prompts(self) -> Vec<(String, String, String, Value)> {
        let mut raw = Vec::new();
        for (server, list) in self.gather(Listing::Prompts).await {
            raw.extend(list.into_iter().map(|p| (server.clone(), name_of(&p), p)));
        }
        let pairs: Vec<(String, String)> =
            raw.iter().map(|(s, n, _)| (s.clone(), n.clone())).collect();
        let exposed = expose_names(&pairs);
        raw.into_iter()
            .zip(exposed)
            .map(|((s, n, p), e)| {
                let def = annotate(p, &e, &s, &n);
                (s, n, e, def)
            })
            .collect()
    }

    /// Asks upstream `server` for completions; params and result are the MCP
    /// `completion/complete` JSON.
    pub async fn complete(self, server: &str, params: Value) -> Result<Value> {
        let s = self.mcp_server(server)?;
        let lease = self.lease(&s).await?;
        lease
            .complete(params, LIST_TIMEOUT)
            .await
            .map_err(|e| client_error(server, &e))
    }

    /// Gets an upstream prompt by its exposed name; `not_found` when no upstream
    /// prompt has that name.
    pub async fn get_prompt(
        self,
        exposed: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<Value> {
        let Some((server, original, _, _)) = self
            .prompts()
            .await
            .into_iter()
            .find(|(_, _, e, _)| e == exposed)
        else {
            return Err(HecateError::not_found("prompt", exposed));
        };
        let s = self.mcp_server(&server)?;
        let lease = self.lease(&s).await?;
        lease
            .get_prompt(&original, arguments, LIST_TIMEOUT)
            .await
            .map_err(|e| client_error(&server, &e))
    }
}
