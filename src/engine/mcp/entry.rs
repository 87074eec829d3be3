//! One MCP server entry as a task's `mcp_servers` item or a probe body names
//! it: `name`, one transport (`command` with `args`/`env`, or `url` with
//! `headers`; `$VAR` references left for the pool to resolve) and an
//! `approval_policy`. Parsing only; bringing the server up is the pool's job.

use super::types::{ServerSpec, ToolPolicy};
use crate::domain::error::HecateError;
use crate::domain::mcp::McpServerConfig;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// A parsed server entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEntry {
    /// The alias its tools are exposed under (`mcp__NAME__tool`).
    pub name: String,
    /// How to reach it, secret references unresolved.
    pub spec: ServerSpec,
    /// What happens to calls of its tools.
    pub policy: ToolPolicy,
    /// Whether the entry named `approval_policy` (otherwise a tool that calls
    /// itself destructive asks for approval).
    pub policy_configured: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    approval_policy: Option<String>,
}

/// Whether `name` may be a server alias: letters, digits, `-` and `_`, no `__`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.contains("__")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Parses one entry; `default_name` is used when it names none (a task's
/// entries pass `None`, so a name is required). Errors name the field.
pub fn parse(value: &Value, default_name: Option<&str>) -> Result<ServerEntry, HecateError> {
    let bad = |field: &str, msg: String| HecateError::invalid(msg).with_detail("field", field);
    let raw: Raw = serde_json::from_value(value.clone())
        .map_err(|e| bad("mcp_servers", format!("invalid MCP server entry: {e}")))?;
    let name = match (raw.name, default_name) {
        (Some(n), _) => n.trim().to_string(),
        (None, Some(d)) => d.to_string(),
        (None, None) => return Err(bad("name", "an MCP server entry needs a name".into())),
    };
    if !valid_name(&name) {
        return Err(bad(
            "name",
            format!("MCP server name {name:?} must be letters, digits, '-' or '_' (no \"__\")"),
        ));
    }
    let policy_configured = raw
        .approval_policy
        .as_deref()
        .is_some_and(|p| !p.is_empty());
    let policy = match raw.approval_policy.as_deref() {
        None | Some("") => ToolPolicy::Auto,
        Some(p) => ToolPolicy::parse(p).ok_or_else(|| {
            bad(
                "approval_policy",
                format!("approval_policy {p:?} is not auto, require_approval or block"),
            )
        })?,
    };
    let command = raw.command.filter(|c| !c.trim().is_empty());
    let url = raw.url.filter(|u| !u.trim().is_empty());
    let spec = match (command, url) {
        (Some(command), None) => {
            if !raw.headers.is_empty() {
                return Err(bad("headers", "headers go with url, not command".into()));
            }
            ServerSpec::Stdio {
                command,
                args: raw.args,
                env: raw.env,
                cwd: None,
            }
        }
        (None, Some(url)) => {
            if !raw.args.is_empty() || !raw.env.is_empty() {
                return Err(bad("args", "args and env go with command, not url".into()));
            }
            ServerSpec::Http {
                url,
                headers: raw.headers,
            }
        }
        (Some(_), Some(_)) => {
            return Err(bad(
                "command",
                format!("MCP server {name:?} names both command and url; pick one transport"),
            ));
        }
        (None, None) => {
            return Err(bad(
                "command",
                format!("MCP server {name:?} needs command (stdio) or url (Streamable HTTP)"),
            ));
        }
    };
    Ok(ServerEntry {
        name,
        spec,
        policy,
        policy_configured,
    })
}

/// Parses a task's entries; names must be unique. The error names the entry.
pub fn parse_all(values: &[Value]) -> Result<Vec<ServerEntry>, HecateError> {
    let mut out: Vec<ServerEntry> = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        let at = |field: &str| match field {
            "mcp_servers" => format!("mcp_servers[{i}]"),
            f => format!("mcp_servers[{i}].{f}"),
        };
        let e = parse(v, None).map_err(|e| {
            let field = at(e
                .details
                .get("field")
                .and_then(Value::as_str)
                .unwrap_or("mcp_servers"));
            HecateError {
                message: format!("mcp_servers[{i}]: {}", e.message),
                ..e
            }
            .with_detail("field", field)
        })?;
        if out.iter().any(|o| o.name == e.name) {
            return Err(HecateError::invalid(format!(
                "mcp_servers[{i}]: the name {:?} is used twice",
                e.name
            ))
            .with_detail("field", at("name")));
        }
        out.push(e);
    }
    Ok(out)
}

/// A server alias made from any name: characters outside letters, digits, `-`
/// and `_` become `_`, runs of `_` collapse (no `__`); empty names become `mcp`.
fn alias(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.trim().chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    if out.is_empty() { "mcp".into() } else { out }
}

/// The task entries for the MCP servers a client handed to a session (an
/// editor's `session/new`), in order, each name made a valid alias and its
/// calls allowed (`auto`; the task's approval policy still applies). Names
/// that make the same alias get `-2`, `-3`, ... so every alias is unique.
/// Legacy SSE servers have no task transport: they are left out and their
/// names answered second.
pub fn from_session_servers(servers: &[McpServerConfig]) -> (Vec<Value>, Vec<String>) {
    let (mut entries, mut skipped) = (Vec::new(), Vec::new());
    let mut taken = std::collections::HashSet::new();
    for s in servers {
        let Some(mut entry) = from_session_server(s) else {
            skipped.push(s.name().to_string());
            continue;
        };
        let base = entry["name"].as_str().unwrap_or_default().to_string();
        let mut name = base.clone();
        for n in 2.. {
            if taken.insert(name.clone()) {
                break;
            }
            name = format!("{base}-{n}");
        }
        entry["name"] = Value::String(name);
        entries.push(entry);
    }
    (entries, skipped)
}

/// The task entry for one MCP server a client handed to a session; `None`
/// for a legacy SSE server.
fn from_session_server(s: &McpServerConfig) -> Option<Value> {
    let pairs = |p: &[(String, String)]| -> serde_json::Map<String, Value> {
        p.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect()
    };
    match s {
        McpServerConfig::Stdio {
            name,
            command,
            args,
            env,
        } => Some(
            json!({"name": alias(name), "command": command, "args": args,
                         "env": pairs(env)}),
        ),
        McpServerConfig::Http { name, url, headers } => {
            Some(json!({"name": alias(name), "url": url, "headers": pairs(headers)}))
        }
        McpServerConfig::Sse { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_sessions_servers_become_task_entries() {
        let stdio = McpServerConfig::Stdio {
            name: "my files.v2".into(),
            command: "node".into(),
            args: vec!["srv.js".into()],
            env: vec![("K".into(), "v".into())],
        };
        let e = parse(&from_session_server(&stdio).expect("stdio"), None).expect("valid");
        assert_eq!(e.name, "my_files_v2");
        assert!(matches!(e.spec, ServerSpec::Stdio { ref env, .. } if env["K"] == "v"));
        let http = McpServerConfig::Http {
            name: "a__b".into(),
            url: "http://127.0.0.1:1/mcp".into(),
            headers: vec![("Authorization".into(), "Bearer x".into())],
        };
        let h = parse(&from_session_server(&http).expect("http"), None).expect("valid");
        assert_eq!((h.name.as_str(), h.policy), ("a_b", ToolPolicy::Auto));
        let sse = McpServerConfig::Sse {
            name: "old".into(),
            url: "http://h".into(),
            headers: vec![],
        };
        assert_eq!(from_session_server(&sse), None);
        assert_eq!(alias(" "), "mcp");
    }

    #[test]
    fn session_servers_whose_names_make_one_alias_get_unique_ones() {
        let stdio = |name: &str| McpServerConfig::Stdio {
            name: name.into(),
            command: "node".into(),
            args: vec![],
            env: vec![],
        };
        let sse = McpServerConfig::Sse {
            name: "old".into(),
            url: "http://h".into(),
            headers: vec![],
        };
        let servers = [stdio("a b"), stdio("a_b"), sse, stdio("a-b"), stdio("a.b")];
        let (entries, skipped) = from_session_servers(&servers);
        let parsed = parse_all(&entries).expect("every alias is unique and valid");
        let names: Vec<&str> = parsed.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a_b", "a_b-2", "a-b", "a_b-3"]);
        assert_eq!(skipped, ["old"]);
    }

    #[test]
    fn entries_pick_one_transport_and_a_policy() {
        let e = parse(
            &json!({"name": "fs", "command": "node", "args": ["x"], "env": {"K": "$V"},
                    "approval_policy": "require_approval"}),
            None,
        )
        .expect("stdio");
        assert_eq!(e.policy, ToolPolicy::RequireApproval);
        assert!(matches!(e.spec, ServerSpec::Stdio { ref env, .. } if env["K"] == "$V"));
        let h = parse(&json!({"url": "http://127.0.0.1:1/mcp"}), Some("probe")).expect("http");
        assert_eq!((h.name.as_str(), h.policy), ("probe", ToolPolicy::Auto));
        for bad in [
            json!({"command": "x"}),
            json!({"name": "a", "command": "x", "url": "http://h"}),
            json!({"name": "a"}),
            json!({"name": "a__b", "command": "x"}),
            json!({"name": "a", "command": "x", "approval_policy": "maybe"}),
            json!({"name": "a", "command": "x", "transport": "stdio"}),
        ] {
            assert!(parse(&bad, None).is_err(), "{bad}");
        }
        let twice = [
            json!({"name": "a", "command": "x"}),
            json!({"name": "a", "url": "http://h"}),
        ];
        assert!(parse_all(&twice).is_err());
    }
}
