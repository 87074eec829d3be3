//! `[server.idp]`: the team's identity provider, whose OAuth access tokens (JWTs
//! signed with the keys of its JWKS) `hecate serve` accepts beside the static
//! token and the named keys, and which its RFC 9728 metadata names.

use super::error::ConfigError;
use crate::domain::api_key::{DEFAULT_TOKEN_ALGORITHMS, IdpSettings, TOKEN_ALGORITHMS};
use crate::domain::loopback::is_loopback_host;
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;

/// Clock skew tolerated on `exp` and `nbf` unless `leeway_secs` says otherwise.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);
/// How long fetched keys are used unless `jwks_cache_secs` says otherwise.
pub const DEFAULT_JWKS_CACHE: Duration = Duration::from_secs(300);
/// The least time between two key fetches unless `jwks_refresh_secs` says otherwise.
pub const DEFAULT_JWKS_REFRESH: Duration = Duration::from_secs(10);
/// The limit on each request to the identity provider unless `fetch_timeout_ms` says
/// otherwise.
pub const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// `[server.idp]` as written in the file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdpSection {
    /// The issuer identifier; a token's `iss` must equal it exactly.
    pub issuer: String,
    /// This server's resource identifier (`https://hecate.example/mcp`); a token's
    /// `aud` must contain it.
    pub audience: String,
    /// The JWKS location; by default the `jwks_uri` of the issuer's OpenID or
    /// RFC 8414 discovery document.
    pub jwks_url: Option<String>,
    /// Accepted JWS algorithms (default `["RS256", "ES256", "EdDSA"]`).
    pub algorithms: Option<Vec<String>>,
    /// The claim holding the granted scopes (default `scope`).
    pub scope_claim: Option<String>,
    /// The prefix of Hecate's scopes among the granted ones (default `hecate:`).
    pub scope_prefix: Option<String>,
    /// Clock skew tolerated on `exp` and `nbf`, in seconds (default 60, at most 600).
    pub leeway_secs: Option<u64>,
    /// How long fetched keys are used before they are fetched again, in seconds
    /// (default 300, at least 1).
    pub jwks_cache_secs: Option<u64>,
    /// The least time between two key fetches, in seconds (default 10): a token
    /// with an unknown `kid` fetches the keys again at most this often.
    pub jwks_refresh_secs: Option<u64>,
    /// The limit on each request to the identity provider, in milliseconds
    /// (default 5000; 100 to 60000).
    pub fetch_timeout_ms: Option<u64>,
    /// The `resource_name` of the protected-resource metadata (default `Hecate`).
    pub resource_name: Option<String>,
}

impl IdpSection {
    /// The identity provider the section describes, checked (errors name the
    /// config file at `path`): an `http(s)` issuer and JWKS URL (plain `http`
    /// only on a loopback host), a non-empty audience and scope prefix, known
    /// asymmetric algorithms, bounded durations.
    pub fn settings(&self, path: &Path) -> Result<IdpSettings, ConfigError> {
        let s = self;
        let bad = |message: String| ConfigError::Parse {
            path: path.to_path_buf(),
            message: format!("[server.idp] {message}"),
        };
        let issuer = s.issuer.trim().to_string();
        check_url("issuer", &issuer).map_err(bad)?;
        let audience = s.audience.trim().to_string();
        if audience.is_empty() {
            return Err(bad(
                "audience must name this server's resource identifier, like https://hecate.example/mcp"
                    .into(),
            ));
        }
        let jwks_url = match s.jwks_url.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(url) => {
                check_url("jwks_url", url).map_err(bad)?;
                Some(url.to_string())
            }
        };
        let algorithms = match &s.algorithms {
            None => DEFAULT_TOKEN_ALGORITHMS.map(String::from).to_vec(),
            Some(list) if list.is_empty() => {
                return Err(bad("algorithms must name at least one algorithm".into()));
            }
            Some(list) => {
                for a in list {
                    if !TOKEN_ALGORITHMS.contains(&a.as_str()) {
                        return Err(bad(format!(
                            "algorithm {a:?} is not accepted: use {} (never none or HS*)",
                            TOKEN_ALGORITHMS.join(", ")
                        )));
                    }
                }
                list.clone()
            }
        };
        let text = |v: &Option<String>, key: &str, default: &str| match v.as_deref() {
            None => Ok(default.to_string()),
            Some(t) if t.trim().is_empty() => Err(bad(format!("{key} must not be empty"))),
            Some(t) => Ok(t.trim().to_string()),
        };
        let secs = |v: Option<u64>, key: &str, default: Duration, range: (u64, u64)| match v {
            None => Ok(default),
            Some(n) if n < range.0 || n > range.1 => Err(bad(format!(
                "{key} must be from {} to {}",
                range.0, range.1
            ))),
            Some(n) => Ok(Duration::from_secs(n)),
        };
        let fetch_timeout = match s.fetch_timeout_ms {
            None => DEFAULT_FETCH_TIMEOUT,
            Some(ms) if (100..=60_000).contains(&ms) => Duration::from_millis(ms),
            Some(_) => return Err(bad("fetch_timeout_ms must be from 100 to 60000".into())),
        };
        Ok(IdpSettings {
            issuer,
            audience,
            jwks_url,
            algorithms,
            scope_claim: text(&s.scope_claim, "scope_claim", "scope")?,
            scope_prefix: text(&s.scope_prefix, "scope_prefix", "hecate:")?,
            leeway: secs(s.leeway_secs, "leeway_secs", DEFAULT_LEEWAY, (0, 600))?,
            jwks_cache: secs(
                s.jwks_cache_secs,
                "jwks_cache_secs",
                DEFAULT_JWKS_CACHE,
                (1, 86_400),
            )?,
            jwks_refresh: secs(
                s.jwks_refresh_secs,
                "jwks_refresh_secs",
                DEFAULT_JWKS_REFRESH,
                (0, 3_600),
            )?,
            fetch_timeout,
            resource_name: text(&s.resource_name, "resource_name", "Hecate")?,
        })
    }
}

/// Whether `url` is an `https` URL, or an `http` one on a loopback host.
fn check_url(key: &str, url: &str) -> Result<(), String> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| format!("{key} {url:?} is not a URL: {e}"))?;
    let loopback = is_loopback_host(parsed.host_str().unwrap_or_default());
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        "http" => Err(format!(
            "{key} {url:?} must use https (plain http only on a loopback host)"
        )),
        other => Err(format!("{key} {url:?} has scheme {other:?}; use https")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Config;
    use super::*;
    use std::collections::HashMap;

    /// `[server.idp]` of a config file holding `toml_text`, checked.
    fn idp(toml_text: &str) -> Result<Option<IdpSettings>, ConfigError> {
        let c = config(toml_text);
        c.file
            .server
            .idp
            .as_ref()
            .map(|s| s.settings(&c.path))
            .transpose()
    }

    fn config(toml_text: &str) -> Config {
        let dir = std::env::temp_dir().join(format!("hecate-idp-cfg-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("config.toml");
        std::fs::write(&path, toml_text).expect("write");
        Config::load(&path, &HashMap::new()).expect("load")
    }

    #[test]
    fn the_section_is_optional_and_checked() {
        assert_eq!(idp("").expect("none"), None);
        let team = idp(
            "[server.idp]\nissuer = \"https://idp.example/realms/team\"\naudience = \"https://hecate.example/mcp\"\n",
        )
        .expect("ok")
        .expect("some");
        assert_eq!(team.issuer, "https://idp.example/realms/team");
        assert_eq!(team.algorithms, ["RS256", "ES256", "EdDSA"]);
        assert_eq!(team.scope_claim, "scope");
        assert_eq!(team.scope_prefix, "hecate:");
        assert_eq!(team.leeway, DEFAULT_LEEWAY);
        assert_eq!(team.jwks_url, None);
        let local = idp(
            "[server.idp]\nissuer = \"http://127.0.0.1:9/\"\naudience = \"x\"\njwks_url = \"http://localhost:9/jwks\"\nalgorithms = [\"ES256\"]\nfetch_timeout_ms = 250\n",
        )
        .expect("ok")
        .expect("some");
        assert_eq!(local.algorithms, ["ES256"]);
        assert_eq!(local.fetch_timeout, Duration::from_millis(250));
        for (body, needle) in [
            ("issuer = \"http://idp.example\"\naudience = \"a\"", "https"),
            ("issuer = \"idp\"\naudience = \"a\"", "not a URL"),
            (
                "issuer = \"https://idp.example\"\naudience = \" \"",
                "audience",
            ),
            (
                "issuer = \"https://idp.example\"\naudience = \"a\"\nalgorithms = [\"HS256\"]",
                "HS256",
            ),
            (
                "issuer = \"https://idp.example\"\naudience = \"a\"\nalgorithms = [\"none\"]",
                "none",
            ),
            (
                "issuer = \"https://idp.example\"\naudience = \"a\"\nleeway_secs = 3600",
                "leeway_secs",
            ),
            (
                "issuer = \"https://idp.example\"\naudience = \"a\"\nscope_prefix = \"\"",
                "scope_prefix",
            ),
        ] {
            let e = idp(&format!("[server.idp]\n{body}\n"))
                .expect_err(body)
                .to_string();
            assert!(
                e.contains(needle) && e.contains("[server.idp]"),
                "{body}: {e}"
            );
        }
    }
}
