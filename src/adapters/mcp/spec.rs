//! Upstream transport definitions: what the configuration says (with `$VAR`
//! secret references) and the resolved transport actually spawned or dialled,
//! whose hash keys the pool (the alias is not part of it).

use super::error::McpClientError;
use crate::domain::redact::redact_url;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

/// How to reach an upstream MCP server, as configured (references unresolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerSpec {
    /// A child process speaking MCP on stdio.
    Stdio {
        /// Program to run.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment; values may reference `$VAR` / `${VAR}`.
        env: BTreeMap<String, String>,
        /// Working directory (Hecate's own when absent).
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint URL.
        url: String,
        /// Headers sent with every request; values may reference `$VAR`.
        headers: BTreeMap<String, String>,
    },
}

/// A transport with every secret reference resolved.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum ResolvedTransport {
    /// A child process.
    Stdio {
        /// Program.
        command: String,
        /// Arguments.
        args: Vec<String>,
        /// The explicit environment (added to the sanitized base environment).
        env: Vec<(String, String)>,
        /// Working directory.
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// URL.
        url: String,
        /// Headers.
        headers: Vec<(String, String)>,
    },
}

impl std::fmt::Debug for ResolvedTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Values may hold secrets: only names are shown.
        match self {
            Self::Stdio {
                command, args, env, ..
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.iter().map(|(k, _)| k).collect::<Vec<_>>())
                .finish(),
            Self::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", url)
                .field(
                    "headers",
                    &headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                )
                .finish(),
        }
    }
}

impl ResolvedTransport {
    /// The pool key: a hash of everything that decides what is spawned or dialled.
    pub fn key(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.hash(&mut h);
        h.finish()
    }

    /// A short human label (program or URL), without secrets.
    pub fn label(&self) -> String {
        match self {
            Self::Stdio { command, .. } => command.clone(),
            Self::Http { url, .. } => url.clone(),
        }
    }
}

/// Whether header `names` include an `Authorization` of the configuration's
/// own: such an HTTP server never signs in through OAuth.
pub fn sets_authorization<'a>(names: impl IntoIterator<Item = &'a String>) -> bool {
    names
        .into_iter()
        .any(|k| k.eq_ignore_ascii_case("authorization"))
}

impl ServerSpec {
    /// Whether this is an HTTP server that signs in through OAuth: one whose
    /// configuration sends no `Authorization` header of its own.
    pub fn signs_in(&self) -> bool {
        match self {
            Self::Http { headers, .. } => !sets_authorization(headers.keys()),
            Self::Stdio { .. } => false,
        }
    }

    /// Resolves every `$VAR` reference against `env`; an unset or empty variable is
    /// an error naming it (never a literal `$VAR` sent upstream).
    pub fn resolve(
        &self,
        env: &HashMap<String, String>,
    ) -> Result<ResolvedTransport, McpClientError> {
        match self {
            Self::Stdio {
                command,
                args,
                env: extra,
                cwd,
            } => {
                if command.trim().is_empty() {
                    return Err(McpClientError::Config("the command is empty".into()));
                }
                let env = extra
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), interpolate(v, env)?)))
                    .collect::<Result<Vec<_>, McpClientError>>()?;
                Ok(ResolvedTransport::Stdio {
                    command: command.clone(),
                    args: args.clone(),
                    env,
                    cwd: cwd.clone(),
                })
            }
            Self::Http { url, headers } => {
                let shown = redact_url(url);
                let parsed = reqwest::Url::parse(url)
                    .map_err(|e| McpClientError::Config(format!("url {shown:?}: {e}")))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(McpClientError::Config(format!(
                        "url {shown:?} must be http or https"
                    )));
                }
                let headers = headers
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), interpolate(v, env)?)))
                    .collect::<Result<Vec<_>, McpClientError>>()?;
                Ok(ResolvedTransport::Http {
                    url: url.clone(),
                    headers,
                })
            }
        }
    }
}

/// Replaces `$NAME` and `${NAME}` with their values from `env`; `$$` is a literal `$`.
pub fn interpolate(value: &str, env: &HashMap<String, String>) -> Result<String, McpClientError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
            continue;
        }
        let (name, tail) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => (&inner[..end], &inner[end + 1..]),
                None => {
                    return Err(McpClientError::Config(format!(
                        "unterminated ${{ in {value:?}"
                    )));
                }
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        match env.get(name).filter(|v| !v.is_empty()) {
            Some(v) => out.push_str(v),
            None => {
                return Err(McpClientError::Secret {
                    name: name.to_string(),
                });
            }
        }
        rest = tail;
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> HashMap<String, String> {
        [("TOKEN", "s3cret"), ("EMPTY", "")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn references_resolve_anywhere_in_a_value() {
        assert_eq!(
            interpolate("Bearer $TOKEN", &env()).expect("ok"),
            "Bearer s3cret"
        );
        assert_eq!(interpolate("${TOKEN}x", &env()).expect("ok"), "s3cretx");
        assert_eq!(interpolate("a$$b", &env()).expect("ok"), "a$b");
        assert_eq!(interpolate("plain", &env()).expect("ok"), "plain");
        match interpolate("$MISSING", &env()) {
            Err(McpClientError::Secret { name }) => assert_eq!(name, "MISSING"),
            other => panic!("unexpected {other:?}"),
        }
        assert!(interpolate("$EMPTY", &env()).is_err());
    }

    #[test]
    fn key_ignores_the_alias_and_follows_resolved_values() {
        let spec = |v: &str| ServerSpec::Http {
            url: "http://127.0.0.1:1/mcp".into(),
            headers: [("Authorization".to_string(), v.to_string())].into(),
        };
        let a = spec("Bearer $TOKEN").resolve(&env()).expect("a");
        let b = spec("Bearer s3cret").resolve(&env()).expect("b");
        assert_eq!(a.key(), b.key(), "same resolved transport, same entry");
        let c = spec("Bearer other").resolve(&env()).expect("c");
        assert_ne!(a.key(), c.key());
        assert!(!format!("{a:?}").contains("s3cret"), "Debug hides values");
    }
}
