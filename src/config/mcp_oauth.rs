//! `[mcp_servers.NAME.oauth]`: how Hecate identifies itself when it signs in
//! to an OAuth-protected HTTP upstream: a pre-registered `client_id` (with the
//! name of the environment variable holding its secret, never the secret), a
//! client ID metadata document URL, the scopes to ask for and a fixed
//! loopback redirect port. Checked here; used by `hecate mcp login` and by
//! every refresh.

use super::error::ConfigError;
use crate::adapters::mcp::oauth::OAuthClientSettings;
use serde::Deserialize;
use std::path::Path;

/// `[mcp_servers.NAME.oauth]`: the OAuth client of one HTTP upstream. Every
/// key is optional; without any, the client registers itself dynamically and
/// asks for the scopes the server advertises.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpOAuthSection {
    /// A client registered at the authorization server out of band; with it,
    /// no registration happens.
    pub client_id: Option<String>,
    /// The environment variable holding that client's secret (a confidential
    /// client), read at login and refresh time.
    pub client_secret_env: Option<String>,
    /// The HTTPS URL of Hecate's client ID metadata document, used as the
    /// client id when the authorization server supports such documents.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for (default: the server's `scopes_supported`).
    pub scopes: Option<Vec<String>>,
    /// The loopback port of the redirect URI `http://127.0.0.1:PORT/callback`,
    /// for a client registered with that fixed URI (default: a random port).
    pub redirect_port: Option<u16>,
}

/// The client settings of server `name`, checked: a section only on an HTTP
/// server that sends no `Authorization` header of its own, `client_secret_env`
/// only with `client_id` and a usable variable name, an HTTPS document URL
/// with a path, scopes without spaces, a port above 0.
pub(super) fn client_settings(
    path: &Path,
    name: &str,
    section: Option<&McpOAuthSection>,
    http: bool,
    sends_authorization: bool,
) -> Result<OAuthClientSettings, ConfigError> {
    let Some(s) = section else {
        return Ok(OAuthClientSettings::default());
    };
    let bad = |message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message: format!("[mcp_servers.{name}.oauth] {message}"),
    };
    if !http {
        return Err(bad(
            "applies to HTTP servers (`url`) only: a stdio server takes no OAuth sign-in".into(),
        ));
    }
    if sends_authorization {
        return Err(bad(
            "cannot be combined with an `Authorization` header in `headers`, which replaces the sign-in"
                .into(),
        ));
    }
    let text = |key: &str, v: &Option<String>| match v.as_deref().map(str::trim) {
        None => Ok(None),
        Some("") => Err(bad(format!("{key} must not be empty"))),
        Some(v) => Ok(Some(v.to_string())),
    };
    let client_id = text("client_id", &s.client_id)?;
    let client_secret_env = text("client_secret_env", &s.client_secret_env)?;
    if let Some(var) = &client_secret_env {
        if client_id.is_none() {
            return Err(bad(
                "client_secret_env needs client_id: a secret belongs to a pre-registered client"
                    .into(),
            ));
        }
        let valid = !var.starts_with(|c: char| c.is_ascii_digit())
            && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(bad(format!(
                "client_secret_env {var:?} is not an environment variable name (it names the variable, not the secret)"
            )));
        }
    }
    let client_metadata_url = text("client_metadata_url", &s.client_metadata_url)?;
    if let Some(url) = &client_metadata_url {
        let usable = reqwest::Url::parse(url).is_ok_and(|u| {
            u.scheme() == "https"
                && u.host_str().is_some()
                && u.path() != "/"
                && u.fragment().is_none()
        });
        if !usable {
            return Err(bad(format!(
                "client_metadata_url {url:?} must be an https URL with a path (the document's address, which becomes the client id)"
            )));
        }
    }
    let scopes = s.scopes.clone().unwrap_or_default();
    if let Some(scope) = scopes
        .iter()
        .find(|v| v.is_empty() || v.contains(char::is_whitespace))
    {
        return Err(bad(format!(
            "scopes: {scope:?} is not one scope (list them one per string)"
        )));
    }
    if s.redirect_port == Some(0) {
        return Err(bad(
            "redirect_port must be above 0 (leave it out for a random port)".into(),
        ));
    }
    Ok(OAuthClientSettings {
        client_id,
        client_secret_env,
        client_metadata_url,
        scopes,
        redirect_port: s.redirect_port,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml: &str) -> McpOAuthSection {
        toml::from_str(toml).expect("parses")
    }

    fn check(toml: &str) -> Result<OAuthClientSettings, ConfigError> {
        client_settings(
            Path::new("config.toml"),
            "gh",
            Some(&parse(toml)),
            true,
            false,
        )
    }

    #[test]
    fn a_full_section_becomes_the_client_settings() {
        let s = check(
            "client_id = \"hecate\"\nclient_secret_env = \"GH_SECRET\"\n\
             client_metadata_url = \"https://hecate.example/oauth/client.json\"\n\
             scopes = [\"repo\", \"read:org\"]\nredirect_port = 8765\n",
        )
        .expect("valid");
        assert_eq!(
            s,
            OAuthClientSettings {
                client_id: Some("hecate".into()),
                client_secret_env: Some("GH_SECRET".into()),
                client_metadata_url: Some("https://hecate.example/oauth/client.json".into()),
                scopes: vec!["repo".into(), "read:org".into()],
                redirect_port: Some(8765),
            }
        );
        let none = client_settings(Path::new("c.toml"), "gh", None, false, true).expect("none");
        assert_eq!(none, OAuthClientSettings::default());
        assert_eq!(check("").expect("empty"), OAuthClientSettings::default());
    }

    #[test]
    fn unusable_values_name_the_key() {
        for (toml, needle) in [
            ("client_secret_env = \"S\"", "needs client_id"),
            (
                "client_id = \"a\"\nclient_secret_env = \"hunter2 secret\"",
                "client_secret_env",
            ),
            ("client_id = \"\"", "client_id must not be empty"),
            (
                "client_metadata_url = \"http://hecate.example/c.json\"",
                "client_metadata_url",
            ),
            (
                "client_metadata_url = \"https://hecate.example/\"",
                "client_metadata_url",
            ),
            ("scopes = [\"a b\"]", "scopes"),
            ("redirect_port = 0", "redirect_port"),
        ] {
            let e = check(toml).expect_err(toml);
            let text = e.to_string();
            assert!(text.contains("[mcp_servers.gh.oauth]"), "{text}");
            assert!(text.contains(needle), "{needle} in {text}");
        }
        assert!(toml::from_str::<McpOAuthSection>("client_secret = \"x\"").is_err());
        let stdio = client_settings(Path::new("c"), "gh", Some(&parse("")), false, false);
        assert!(stdio.expect_err("stdio").to_string().contains("HTTP"));
        let header = client_settings(Path::new("c"), "gh", Some(&parse("")), true, true);
        assert!(
            header
                .expect_err("header")
                .to_string()
                .contains("Authorization")
        );
    }
}
