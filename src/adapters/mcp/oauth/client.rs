//! Who Hecate is to an upstream's authorization server: the configured client
//! (`[mcp_servers.NAME.oauth]`), its secret read from the environment when it
//! is needed, and the choice between a pre-registered client, a client ID
//! metadata document and dynamic registration, in the MCP authorization spec's
//! order.

use super::vault::OAuthError;
use rmcp::transport::auth::AuthorizationMetadata;

/// How Hecate identifies itself to one server's authorization server, as
/// `[mcp_servers.NAME.oauth]` says. Holds the name of the variable with the
/// client secret, never the secret.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthClientSettings {
    /// A client registered out of band; registration is then skipped.
    pub client_id: Option<String>,
    /// The environment variable holding the secret of a confidential
    /// `client_id`, read at login and refresh time.
    pub client_secret_env: Option<String>,
    /// The HTTPS URL of Hecate's client ID metadata document, used as the
    /// client id when the authorization server supports such documents.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for (the protected resource's `scopes_supported` when empty).
    pub scopes: Vec<String>,
    /// The fixed loopback port of the redirect URI (an ephemeral one when absent).
    pub redirect_port: Option<u16>,
}

/// A client secret read from the environment. Its `Debug` output never shows it.
#[derive(Clone)]
pub struct ClientSecret(String);

impl ClientSecret {
    /// The secret itself, for the token endpoint only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientSecret([redacted])")
    }
}

impl OAuthClientSettings {
    /// The client secret of `server` from its `client_secret_env` in `env`:
    /// `None` without such a variable configured; an error when it names one
    /// that is unset or empty.
    pub fn secret_from(
        &self,
        server: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<ClientSecret>, OAuthError> {
        let Some(var) = self.client_secret_env.as_deref() else {
            return Ok(None);
        };
        match env(var).filter(|v| !v.is_empty()) {
            Some(secret) => Ok(Some(ClientSecret(secret))),
            None => Err(OAuthError::SecretMissing {
                server: server.to_string(),
                var: var.to_string(),
            }),
        }
    }

    /// [`OAuthClientSettings::secret_from`] the process environment.
    pub fn secret(&self, server: &str) -> Result<Option<ClientSecret>, OAuthError> {
        self.secret_from(server, |var| std::env::var(var).ok())
    }
}

/// How the client is identified to the authorization server for one login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientChoice {
    /// The configured `client_id` (with its secret for a confidential client).
    Preregistered {
        /// The client id.
        client_id: String,
        /// Whether it authenticates at the token endpoint with the secret of
        /// `client_secret_env` (a confidential client).
        confidential: bool,
    },
    /// The client ID metadata document at this URL is the client id.
    MetadataDocument {
        /// The document's URL.
        url: String,
    },
    /// The client registers itself at the authorization server's endpoint.
    DynamicRegistration,
}

impl ClientChoice {
    /// How the choice is named in the login's output and in errors.
    pub fn describe(&self) -> &'static str {
        match self {
            Self::Preregistered {
                confidential: true, ..
            } => "pre-registered confidential client",
            Self::Preregistered {
                confidential: false,
                ..
            } => "pre-registered public client",
            Self::MetadataDocument { .. } => "client ID metadata document",
            Self::DynamicRegistration => "dynamic client registration",
        }
    }
}

/// What the authorization server's metadata offers for identifying a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerOffers {
    /// `client_id_metadata_document_supported: true`.
    pub metadata_documents: bool,
    /// A `registration_endpoint` is published.
    pub registration: bool,
}

impl ServerOffers {
    /// What `metadata` offers.
    pub fn of(metadata: &AuthorizationMetadata) -> Self {
        Self {
            metadata_documents: metadata
                .additional_fields
                .get("client_id_metadata_document_supported")
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
            registration: metadata.registration_endpoint.is_some(),
        }
    }
}

/// Chooses how to identify the client, in the MCP authorization spec's order:
/// the configured `client_id`, else the client ID metadata document when one
/// is configured and the server supports them, else dynamic registration when
/// the server offers it; else [`OAuthError::NoClient`], which names the three
/// ways out.
pub fn choose_client(
    server: &str,
    issuer: &str,
    settings: &OAuthClientSettings,
    offers: ServerOffers,
) -> Result<ClientChoice, OAuthError> {
    if let Some(client_id) = &settings.client_id {
        return Ok(ClientChoice::Preregistered {
            client_id: client_id.clone(),
            confidential: settings.client_secret_env.is_some(),
        });
    }
    if let Some(url) = &settings.client_metadata_url
        && offers.metadata_documents
    {
        return Ok(ClientChoice::MetadataDocument { url: url.clone() });
    }
    if offers.registration {
        return Ok(ClientChoice::DynamicRegistration);
    }
    let documents = match (&settings.client_metadata_url, offers.metadata_documents) {
        (Some(_), false) => "does not support client ID metadata documents",
        (None, true) => {
            "supports client ID metadata documents but no client_metadata_url is configured"
        }
        _ => "takes no client ID metadata document",
    };
    Err(OAuthError::NoClient {
        server: server.to_string(),
        issuer: issuer.to_string(),
        detail: format!(
            "no client_id is configured, the authorization server {documents}, and it offers no dynamic client registration"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(id: bool, cimd: bool) -> OAuthClientSettings {
        OAuthClientSettings {
            client_id: id.then(|| "static".to_string()),
            client_metadata_url: cimd.then(|| "https://hecate.example/client.json".to_string()),
            ..OAuthClientSettings::default()
        }
    }

    fn offers(metadata_documents: bool, registration: bool) -> ServerOffers {
        ServerOffers {
            metadata_documents,
            registration,
        }
    }

    #[test]
    fn client_id_comes_first_then_metadata_document_then_registration() {
        let pre = ClientChoice::Preregistered {
            client_id: "static".into(),
            confidential: false,
        };
        let doc = ClientChoice::MetadataDocument {
            url: "https://hecate.example/client.json".into(),
        };
        let choose = |s, o| choose_client("x", "https://as", &s, o).expect("a client");
        for o in [
            offers(true, true),
            offers(true, false),
            offers(false, true),
            offers(false, false),
        ] {
            assert_eq!(choose(settings(true, true), o), pre, "{o:?}");
            assert_eq!(choose(settings(true, false), o), pre, "{o:?}");
        }
        assert_eq!(choose(settings(false, true), offers(true, true)), doc);
        assert_eq!(choose(settings(false, true), offers(true, false)), doc);
        assert_eq!(
            choose(settings(false, true), offers(false, true)),
            ClientChoice::DynamicRegistration,
            "a server without metadata documents falls back to registration"
        );
        assert_eq!(
            choose(settings(false, false), offers(true, true)),
            ClientChoice::DynamicRegistration,
            "no document configured: registration"
        );
    }

    #[test]
    fn no_way_to_identify_the_client_names_the_three_options() {
        for (s, o) in [
            (settings(false, false), offers(false, false)),
            (settings(false, true), offers(false, false)),
            (settings(false, false), offers(true, false)),
        ] {
            let e = choose_client("gh", "https://as.example", &s, o).expect_err("no client");
            assert!(matches!(e, OAuthError::NoClient { .. }), "{e:?}");
            let text = e.to_string();
            for needle in [
                "client_id",
                "client ID metadata document",
                "dynamic client registration",
                "https://as.example",
                "\"gh\"",
            ] {
                assert!(text.contains(needle), "{needle} in {text}");
            }
        }
    }

    #[test]
    fn a_secret_is_read_from_its_variable_and_never_shown() {
        let s = OAuthClientSettings {
            client_id: Some("static".into()),
            client_secret_env: Some("GH_SECRET".into()),
            ..OAuthClientSettings::default()
        };
        let secret = s
            .secret_from("gh", |v| {
                (v == "GH_SECRET").then(|| "s3cr3t-value".to_string())
            })
            .expect("read")
            .expect("a secret");
        assert_eq!(secret.expose(), "s3cr3t-value");
        assert!(!format!("{secret:?}").contains("s3cr3t"));
        assert!(!format!("{s:?}").contains("s3cr3t"));
        let choice = choose_client("gh", "", &s, ServerOffers::default()).expect("pre");
        assert!(!format!("{choice:?}").contains("s3cr3t"));
        assert_eq!(choice.describe(), "pre-registered confidential client");

        let e = s.secret_from("gh", |_| None).expect_err("unset");
        assert!(matches!(e, OAuthError::SecretMissing { .. }));
        assert!(e.to_string().contains("GH_SECRET"), "{e}");
        let e = s
            .secret_from("gh", |_| Some(String::new()))
            .expect_err("empty");
        assert!(e.to_string().contains("GH_SECRET"), "{e}");
        assert_eq!(
            OAuthClientSettings::default()
                .secret_from("gh", |_| Some("x".into()))
                .expect("none configured")
                .map(|s| s.expose().to_string()),
            None
        );
    }
}
