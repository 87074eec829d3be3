//! `hecate mcp call`: one tool call to an MCP server through the engine — the
//! same path as the hub's aggregated tools (client pool, policy gate, audit
//! record in `hecate mcp calls`). The server is a configured upstream
//! (`--server NAME`, its policy applies) or an ad-hoc one (`--url URL` or
//! `-- COMMAND [ARGS...]`, called as the upstream `call` with policy `auto`).
//!
//! Progress and logging notifications of the call go to stderr; the result goes
//! to stdout (its text blocks, or the whole `CallToolResult` with
//! `--format json`). A tool error (`isError: true`) exits with status 1.

use super::super::output::{Format, print_resource, print_text};
use super::super::{AppContext, GlobalArgs};
use super::ad_hoc::AdHocServer;
use crate::domain::error::HecateError;
use crate::engine::{McpCallOptions, ToolPolicy, UpstreamNotice, UpstreamServer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The alias an ad-hoc server (`--url`, `-- COMMAND`) is registered under.
const AD_HOC: &str = "call";

/// JSON-RPC "method not found", the answer to upstream requests nobody can take.
const METHOD_NOT_FOUND: i32 = -32601;

/// Arguments of `hecate mcp call`.
#[derive(Debug, clap::Args)]
pub struct CallArgs {
    /// The tool's own name on the server (not the hub's `NAME__tool`).
    pub tool: String,
    /// The tool's arguments as a JSON object.
    #[arg(long)]
    pub args: Option<String>,
    /// A configured upstream (`[mcp_servers.NAME]`); its policy applies.
    #[arg(long, conflicts_with = "url")]
    pub server: Option<String>,
    /// A server to call ad hoc instead.
    #[command(flatten)]
    pub ad_hoc: AdHocServer,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// The ad-hoc server the arguments describe, if any.
fn ad_hoc(a: &CallArgs) -> anyhow::Result<Option<UpstreamServer>> {
    let Some(spec) = a.ad_hoc.spec()? else {
        return Ok(None);
    };
    Ok(Some(UpstreamServer {
        name: AD_HOC.into(),
        spec,
        policy: ToolPolicy::Auto,
        policy_configured: false,
        tool_policies: BTreeMap::new(),
        call_timeout: None,
        oauth: Default::default(),
    }))
}

fn parse_arguments(raw: Option<&str>) -> anyhow::Result<Option<Map<String, Value>>> {
    let Some(raw) = raw else { return Ok(None) };
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(m)) => Ok(Some(m)),
        Ok(_) => Err(HecateError::invalid("--args must be a JSON object").into()),
        Err(e) => Err(HecateError::invalid(format!("--args is not JSON: {e}")).into()),
    }
}

/// Prints progress and logging to stderr; refuses upstream requests (sampling,
/// elicitation), which a one-shot command cannot answer.
async fn relay_notices(mut rx: mpsc::UnboundedReceiver<UpstreamNotice>) {
    while let Some(n) = rx.recv().await {
        match n {
            UpstreamNotice::Progress {
                progress,
                total,
                message,
            } => {
                let total = total.map(|t| format!("/{t}")).unwrap_or_default();
                let message = message.map(|m| format!(" {m}")).unwrap_or_default();
                eprintln!("progress {progress}{total}{message}");
            }
            UpstreamNotice::Log {
                level,
                logger,
                data,
            } => {
                let logger = logger.map(|l| format!(" {l}:")).unwrap_or_default();
                let text = data
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| data.to_string());
                eprintln!("[{level}]{logger} {text}");
            }
            UpstreamNotice::Request { method, reply, .. } => {
                let _ = reply.send(Err((
                    METHOD_NOT_FOUND,
                    format!("{method}: hecate mcp call cannot answer requests"),
                )));
            }
        }
    }
}

/// The text of a `CallToolResult`: text blocks as they are, other blocks as JSON.
fn result_text(result: &Value) -> String {
    let mut out = String::new();
    for block in result["content"].as_array().into_iter().flatten() {
        match block["text"].as_str() {
            Some(t) if block["type"] == "text" => out.push_str(t),
            _ => out.push_str(&block.to_string()),
        }
        out.push('\n');
    }
    if out.is_empty()
        && let Some(s) = result.get("structuredContent")
    {
        out.push_str(&s.to_string());
        out.push('\n');
    }
    out
}

/// Runs `hecate mcp call`; the exit status is 1 for a tool error.
pub async fn run(cli: &GlobalArgs, a: &CallArgs) -> anyhow::Result<i32> {
    let arguments = parse_arguments(a.args.as_deref())?;
    let ad_hoc = ad_hoc(a)?;
    let server = match (&a.server, &ad_hoc) {
        (Some(name), None) => name.clone(),
        (None, Some(s)) => s.name.clone(),
        _ => anyhow::bail!("give one of --server NAME, --url URL or -- COMMAND [ARGS...]"),
    };
    let ctx = AppContext::build(cli).await?;
    // Only the server called is registered, so no other upstream is started.
    let servers: Vec<UpstreamServer> = match ad_hoc {
        Some(s) => vec![s],
        None => ctx
            .config
            .mcp_servers()?
            .into_iter()
            .filter(|s| s.name == server)
            .collect(),
    };
    if servers.is_empty() {
        return Err(HecateError::not_found("MCP server", &server).into());
    }
    ctx.engine.mcp().configure(&ctx.namespace, servers).await?;
    let result = call(&ctx, &server, &a.tool, arguments).await;
    ctx.engine.shutdown().await;
    let result = result?;
    match a.format {
        Format::Json => print_resource("mcp_tool_result", &result)?,
        Format::Text => print_text(&result_text(&result))?,
    }
    let is_error = result["isError"].as_bool().unwrap_or(false);
    Ok(if is_error { 1 } else { 0 })
}

async fn call(
    ctx: &AppContext,
    server: &str,
    tool: &str,
    arguments: Option<Map<String, Value>>,
) -> anyhow::Result<Value> {
    let catalog = ctx.engine.mcp().tools().await;
    if let Some(f) = catalog.failures.iter().find(|f| f.server == server) {
        return Err(f.error.clone().into());
    }
    let Some(exposed) = catalog
        .tools
        .iter()
        .find(|t| t.server == server && t.tool == tool)
        .map(|t| t.exposed.clone())
    else {
        return Err(HecateError::not_found("tool", tool)
            .with_detail("server", server)
            .into());
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let relay = tokio::spawn(relay_notices(rx));
    let cancel = CancellationToken::new();
    let on_interrupt = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        })
    };
    let opts = McpCallOptions {
        client: "hecate mcp call (cli)".into(),
        notices: Some(tx),
        cancel,
        prompter: None,
    };
    let result = ctx
        .engine
        .mcp()
        .call_tool(&ctx.namespace, &exposed, arguments, opts)
        .await;
    on_interrupt.abort();
    let _ = relay.await;
    Ok(result?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_must_be_a_json_object() {
        assert!(parse_arguments(None).expect("none").is_none());
        let m = parse_arguments(Some(r#"{"a": 1}"#))
            .expect("object")
            .expect("some");
        assert_eq!(m["a"], json!(1));
        assert!(parse_arguments(Some("[1]")).is_err());
        assert!(parse_arguments(Some("{")).is_err());
    }

    #[test]
    fn result_text_prints_text_blocks_then_structured_content() {
        let r = json!({"content": [{"type": "text", "text": "hi"},
                                   {"type": "image", "data": "x", "mimeType": "image/png"}]});
        let text = result_text(&r);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "hi");
        let image: Value = serde_json::from_str(lines[1]).expect("a JSON block");
        assert_eq!(image["mimeType"], "image/png");
        let s = json!({"content": [], "structuredContent": {"n": 1}});
        assert_eq!(result_text(&s), "{\"n\":1}\n");
    }
}
