//! Prompts: a few that help an agent use Hecate (delegate a task, review a
//! session, an overview), plus the upstreams' prompts, namespaced like tools.

use super::errors::protocol_error;
use super::server::HecateMcp;
use super::uris::{SESSIONS_URI, session_uri};
use crate::domain::api_key::{Identity, OWN_TOOLS_SERVER};
use crate::domain::error::ErrorType;
use crate::domain::ids::SessionId;
use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::{Map, Value};

fn arg(args: &Option<Map<String, Value>>, name: &str) -> Option<String> {
    args.as_ref()
        .and_then(|a| a.get(name))
        .and_then(|v| v.as_str())
        .map(str::to_string)
        .filter(|s| !s.trim().is_empty())
}

fn missing(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("argument {name:?} is required"), None)
}

impl HecateMcp {
    fn own_prompts() -> Vec<Prompt> {
        vec![
            Prompt::new(
                "delegate_task",
                Some("Hand a task to another coding agent or model through Hecate and report back"),
                Some(vec![
                    PromptArgument::new("task")
                        .with_description("What to do")
                        .with_required(true),
                    PromptArgument::new("target")
                        .with_description("agent:ID or model:PROVIDER/MODEL (see list_adapters)")
                        .with_required(false),
                    PromptArgument::new("workspace")
                        .with_description("The directory the agent works in")
                        .with_required(false),
                ]),
            ),
            Prompt::new(
                "review_session",
                Some("Summarize a Hecate session: what was asked, what was done, what is left"),
                Some(vec![
                    PromptArgument::new("session_id")
                        .with_description("The session to review")
                        .with_required(true),
                ]),
            ),
            Prompt::new(
                "hecate_overview",
                Some("How to use Hecate's tools, resources and approvals"),
                None::<Vec<PromptArgument>>,
            ),
        ]
    }

    /// Prompts this connection lists to `identity`.
    pub(crate) async fn prompts(&self, identity: &Identity) -> Vec<Prompt> {
        let mut out = if self.is_hub() && identity.allows_server(OWN_TOOLS_SERVER) {
            Self::own_prompts()
        } else {
            Vec::new()
        };
        for (server, original, _exposed, def) in self.engine.mcp().prompts().await {
            if !identity.allows_server(&server) {
                continue;
            }
            if let Some(u) = &self.opts.upstream {
                if *u != server {
                    continue;
                }
                let mut def = def;
                if let Some(o) = def.as_object_mut() {
                    o.insert("name".into(), Value::String(original));
                }
                if let Ok(p) = serde_json::from_value::<Prompt>(def) {
                    out.push(p);
                }
            } else if let Ok(p) = serde_json::from_value::<Prompt>(def) {
                out.push(p);
            }
        }
        out
    }

    /// Builds or fetches one prompt for `identity` (one it may not see is not found).
    pub(crate) async fn prompt(
        &self,
        name: &str,
        args: Option<Map<String, Value>>,
        identity: &Identity,
    ) -> Result<GetPromptResult, ErrorData> {
        let not_found = || ErrorData::invalid_params(format!("prompt {name} not found"), None);
        if self.is_hub() && identity.allows_server(OWN_TOOLS_SERVER) {
            match name {
                "delegate_task" => {
                    let task = arg(&args, "task").ok_or_else(|| missing("task"))?;
                    let target = arg(&args, "target")
                        .unwrap_or_else(|| "an agent from list_adapters (agent:ID)".into());
                    let ws = arg(&args, "workspace")
                        .map(|w| format!(" in the workspace {w}"))
                        .unwrap_or_default();
                    let text = format!(
                        "Delegate this task with Hecate's ask_agent tool, target {target}{ws}:\n\n{task}\n\n\
                         When it returns, report the answer, the files it changed (files_changed) and the \
                         session_id so the work can be continued. If it fails, say why (error.type)."
                    );
                    return Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                        Role::User,
                        text,
                    )])
                    .with_description("Delegate a task through Hecate"));
                }
                "review_session" => {
                    let id = arg(&args, "session_id").ok_or_else(|| missing("session_id"))?;
                    let sid = SessionId::from(id.as_str());
                    let t = self.engine.transcript(self.ns(), &sid).await.map_err(|e| {
                        if e.error_type == ErrorType::NotFound {
                            ErrorData::invalid_params(e.message.clone(), None)
                        } else {
                            protocol_error(&e)
                        }
                    })?;
                    let body = serde_json::to_string_pretty(&t).unwrap_or_default();
                    return Ok(GetPromptResult::new(vec![
                        PromptMessage::new_resource(
                            Role::User,
                            session_uri(&sid),
                            Some("application/json".into()),
                            Some(body),
                            None,
                            None,
                            None,
                        ),
                        PromptMessage::new_text(
                            Role::User,
                            "Summarize this Hecate session: what was asked, what the agent or model did \
                             (tools, files changed), how each turn ended, and what is left to do.",
                        ),
                    ])
                    .with_description("Review a Hecate session"));
                }
                "hecate_overview" => {
                    let text = format!(
                        "Hecate tools: list_sessions, search_sessions, get_session, get_transcript, \
                         create_session, send_message, ask_agent, cancel_turn, list_approvals, \
                         resolve_approval, list_grants, revoke_grant, list_adapters, probe_adapter, \
                         upstream_status; durable tasks: create_task, list_tasks, get_task, start_task, \
                         get_task_run, list_task_events, resolve_task_approval, cancel_task_run. \
                         Upstream MCP servers appear as SERVER__tool. Resources: \
                         {SESSIONS_URI}, {SESSIONS_URI}/{{id}} (subscribe for live updates), hecate://adapters."
                    );
                    return Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                        Role::User,
                        text,
                    )]));
                }
                _ => {}
            }
        }
        let exposed = match &self.opts.upstream {
            None => name.to_string(),
            Some(server) => self
                .engine
                .mcp()
                .prompts()
                .await
                .into_iter()
                .find(|(s, o, _, _)| s == server && o == name)
                .map(|(_, _, e, _)| e)
                .unwrap_or_else(|| format!("{server}__{name}")),
        };
        if identity.scope().is_some_and(|s| s.limits_tools()) {
            let owner = self
                .engine
                .mcp()
                .prompts()
                .await
                .into_iter()
                .find(|(_, _, e, _)| *e == exposed)
                .map(|(s, _, _, _)| s);
            if !owner.is_some_and(|s| identity.allows_server(&s)) {
                return Err(not_found());
            }
        }
        match self.engine.mcp().get_prompt(&exposed, args).await {
            Ok(v) => serde_json::from_value::<GetPromptResult>(v)
                .map_err(|e| ErrorData::internal_error(format!("upstream prompt: {e}"), None)),
            Err(e) if e.error_type == ErrorType::NotFound => Err(not_found()),
            Err(e) => Err(protocol_error(&e)),
        }
    }
}
