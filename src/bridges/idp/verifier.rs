//! Checks one access token: a JWT whose algorithm is accepted (never `none` or
//! HS*), whose `iss` is the configured issuer exactly, whose signature verifies
//! with a key of the issuer's JWKS, which has not expired (`exp` required, `nbf`
//! honoured, both with the leeway), whose `aud` contains this server's resource
//! and which names a subject. Its granted `hecate:*` scopes become the holder's
//! [`KeyScope`](crate::domain::api_key::KeyScope).

use super::crypto;
use super::keys::{Candidates, Keys};
use super::refusal::TokenRefusal;
use crate::domain::api_key::{IdpSettings, TokenHolder};
use axum::http::{HeaderMap, header};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value, json};
use std::str::FromStr;
use std::sync::Arc;

/// The well-known path of RFC 9728 protected-resource metadata.
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The identity provider a server trusts, with its cached keys.
pub struct IdentityProvider {
    settings: Arc<IdpSettings>,
    keys: Keys,
}

impl std::fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("issuer", &self.settings.issuer)
            .field("audience", &self.settings.audience)
            .finish()
    }
}

impl IdentityProvider {
    /// The provider `settings` describes; its keys are fetched when the first
    /// token needs them.
    pub fn new(settings: IdpSettings) -> Self {
        crypto::install();
        let settings = Arc::new(settings);
        Self {
            keys: Keys::new(settings.clone()),
            settings,
        }
    }

    /// What the provider was configured with.
    pub fn settings(&self) -> &IdpSettings {
        &self.settings
    }

    /// Checks `token` and answers its holder, or why it is refused.
    pub async fn verify(&self, token: &str) -> Result<TokenHolder, TokenRefusal> {
        let mut segments = token.split('.');
        let (Some(head), Some(body), Some(_), None) = (
            segments.next(),
            segments.next(),
            segments.next(),
            segments.next(),
        ) else {
            return Err(TokenRefusal::Malformed(
                "not three dot-separated segments".into(),
            ));
        };
        let header = json_segment(head, "header")?;
        let alg = header
            .get("alg")
            .and_then(Value::as_str)
            .ok_or_else(|| TokenRefusal::Malformed("the header has no alg".into()))?;
        if !self.settings.algorithms.iter().any(|a| a == alg) {
            return Err(TokenRefusal::AlgorithmNotAllowed(alg.to_string()));
        }
        let alg = Algorithm::from_str(alg)
            .map_err(|_| TokenRefusal::AlgorithmNotAllowed(alg.to_string()))?;
        if header.contains_key("crit") {
            return Err(TokenRefusal::Malformed(
                "critical header parameters (crit) are not supported".into(),
            ));
        }
        let kid = header.get("kid").and_then(Value::as_str);
        // The issuer is compared before any key is looked up, so a token of
        // another provider is named as such and never triggers a key fetch.
        let unverified = json_segment(body, "claims")?;
        let iss = unverified
            .get("iss")
            .and_then(Value::as_str)
            .ok_or_else(|| TokenRefusal::MissingClaim("iss".into()))?;
        if iss != self.settings.issuer {
            return Err(TokenRefusal::WrongIssuer {
                found: iss.to_string(),
                expected: self.settings.issuer.clone(),
            });
        }
        let keys = match self.keys.candidates(kid, alg).await? {
            Candidates::Keys(keys) => keys,
            Candidates::WrongKeyType => return Err(TokenRefusal::BadSignature),
            Candidates::None => {
                return Err(TokenRefusal::UnknownKid(
                    kid.unwrap_or("(none; no key fits)").to_string(),
                ));
            }
        };
        let claims = self.checked_claims(token, alg, &keys)?;
        self.check_audience(&claims)?;
        let subject = claims
            .get("sub")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| TokenRefusal::MissingClaim("sub".into()))?;
        let granted = self.granted(&claims)?;
        let scope = self
            .settings
            .granted_scope(&granted)
            .map_err(|e| TokenRefusal::BadScope(e.to_string()))?;
        Ok(TokenHolder {
            subject: subject.to_string(),
            issuer: iss.to_string(),
            scope,
        })
    }

    /// The claims once the signature verified with one of `keys` and `exp`
    /// and `nbf` hold.
    fn checked_claims(
        &self,
        token: &str,
        alg: Algorithm,
        keys: &[jsonwebtoken::DecodingKey],
    ) -> Result<Map<String, Value>, TokenRefusal> {
        let mut validation = Validation::new(alg);
        validation.leeway = self.settings.leeway.as_secs();
        validation.validate_nbf = true;
        validation.validate_aud = false;
        validation.set_required_spec_claims(&["exp"]);
        let mut refusal = TokenRefusal::BadSignature;
        for key in keys {
            match jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation) {
                Ok(data) => return Ok(data.claims),
                Err(e) => {
                    refusal = match e.into_kind() {
                        ErrorKind::InvalidSignature
                        | ErrorKind::InvalidAlgorithm
                        | ErrorKind::InvalidKeyFormat
                        | ErrorKind::InvalidRsaKey(_)
                        | ErrorKind::InvalidEcdsaKey
                        | ErrorKind::InvalidEddsaKey => continue,
                        ErrorKind::ExpiredSignature => TokenRefusal::Expired,
                        ErrorKind::ImmatureSignature => TokenRefusal::NotYetValid,
                        ErrorKind::MissingRequiredClaim(c) | ErrorKind::InvalidClaimFormat(c) => {
                            TokenRefusal::MissingClaim(c)
                        }
                        other => TokenRefusal::Malformed(
                            jsonwebtoken::errors::Error::from(other).to_string(),
                        ),
                    };
                    break;
                }
            }
        }
        Err(refusal)
    }

    /// `aud` must contain the configured audience; a token naming other
    /// absolute URIs was issued for another resource (RFC 8707 indicators are
    /// absolute URIs), one naming none of them has the wrong audience.
    fn check_audience(&self, claims: &Map<String, Value>) -> Result<(), TokenRefusal> {
        let found: Vec<String> = match claims.get("aud") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(list)) => list
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            _ => return Err(TokenRefusal::MissingClaim("aud".into())),
        };
        let expected = &self.settings.audience;
        if found.iter().any(|a| a == expected) {
            return Ok(());
        }
        let names_resources = found.iter().any(|a| reqwest::Url::parse(a).is_ok());
        Err(if names_resources {
            TokenRefusal::OtherResource {
                found,
                expected: expected.clone(),
            }
        } else {
            TokenRefusal::WrongAudience {
                found,
                expected: expected.clone(),
            }
        })
    }

    /// The scopes the token grants: the configured claim, a space-separated
    /// string or an array of strings (absent: none).
    fn granted(&self, claims: &Map<String, Value>) -> Result<Vec<String>, TokenRefusal> {
        let claim = &self.settings.scope_claim;
        match claims.get(claim) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(s.split_whitespace().map(str::to_string).collect()),
            Some(Value::Array(list)) => list
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    TokenRefusal::BadScope(format!(
                        "claim {claim:?} holds a value that is not a string"
                    ))
                }),
            Some(_) => Err(TokenRefusal::BadScope(format!(
                "claim {claim:?} is neither a string nor an array of strings"
            ))),
        }
    }

    /// The RFC 9728 metadata document: this server as a protected resource
    /// whose tokens the configured issuer grants.
    pub fn metadata(&self) -> Value {
        json!({
            "resource": self.settings.audience,
            "authorization_servers": [self.settings.issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": self.settings.scopes_supported(),
            "resource_name": self.settings.resource_name,
        })
    }

    /// Where the metadata of the surface mounted at `suffix` (`/mcp`,
    /// `/hecate/v1`) is: on the audience's origin when the audience is an
    /// `http(s)` URL, else on the `Host` the request named.
    pub fn metadata_url(&self, suffix: &str, headers: &HeaderMap) -> String {
        let base = reqwest::Url::parse(&self.settings.audience)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_else(|| {
                // Only a plain authority goes into the quoted header value.
                let host = headers
                    .get(header::HOST)
                    .and_then(|v| v.to_str().ok())
                    .filter(|h| {
                        !h.is_empty()
                            && h.bytes().all(|b| {
                                b.is_ascii_alphanumeric()
                                    || matches!(b, b'.' | b'-' | b':' | b'[' | b']')
                            })
                    })
                    .unwrap_or("localhost");
                format!("http://{host}")
            });
        format!("{base}{WELL_KNOWN}{suffix}")
    }
}

/// One base64url segment of a JWT as a JSON object.
fn json_segment(segment: &str, what: &str) -> Result<Map<String, Value>, TokenRefusal> {
    let bytes = B64
        .decode(segment.trim_end_matches('='))
        .map_err(|_| TokenRefusal::Malformed(format!("the {what} is not base64url")))?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(TokenRefusal::Malformed(format!(
            "the {what} is not a JSON object"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::api_key::{DEFAULT_TOKEN_ALGORITHMS, Role};
    use std::time::Duration;

    fn idp(audience: &str) -> IdentityProvider {
        IdentityProvider::new(IdpSettings {
            issuer: "https://idp.example".into(),
            audience: audience.into(),
            // Nothing listens there: a test that reaches the keys fails fast.
            jwks_url: Some("http://127.0.0.1:9/jwks".into()),
            algorithms: DEFAULT_TOKEN_ALGORITHMS.map(String::from).to_vec(),
            scope_claim: "scope".into(),
            scope_prefix: "hecate:".into(),
            leeway: Duration::from_secs(60),
            jwks_cache: Duration::from_secs(300),
            jwks_refresh: Duration::from_secs(10),
            fetch_timeout: Duration::from_millis(200),
            resource_name: "Hecate".into(),
        })
    }

    fn jwt(header: Value, claims: Value) -> String {
        format!(
            "{}.{}.{}",
            B64.encode(header.to_string()),
            B64.encode(claims.to_string()),
            B64.encode(b"sig")
        )
    }

    #[tokio::test]
    async fn refusals_before_any_key_is_fetched() {
        let p = idp("https://hecate.example/mcp");
        let code = |t: &str| {
            let p = &p;
            let t = t.to_string();
            async move { p.verify(&t).await.expect_err("refused").code() }
        };
        assert_eq!(code("not-a-jwt").await, "malformed");
        assert_eq!(code("a.b.c").await, "malformed");
        let claims = json!({"iss": "https://idp.example", "sub": "a", "exp": 4_000_000_000u64});
        assert_eq!(
            code(&jwt(json!({"alg": "none"}), claims.clone())).await,
            "algorithm_not_allowed"
        );
        assert_eq!(
            code(&jwt(json!({"alg": "HS256"}), claims.clone())).await,
            "algorithm_not_allowed"
        );
        assert_eq!(
            code(&jwt(json!({"alg": "RS384"}), claims.clone())).await,
            "algorithm_not_allowed",
            "not among the configured algorithms"
        );
        assert_eq!(
            code(&jwt(
                json!({"alg": "RS256"}),
                json!({"iss": "https://evil.example", "sub": "a"})
            ))
            .await,
            "wrong_issuer"
        );
        assert_eq!(
            code(&jwt(json!({"alg": "RS256"}), json!({"sub": "a"}))).await,
            "missing_claim"
        );
        // The keys cannot be fetched: a clear refusal, never a panic.
        let down = p
            .verify(&jwt(json!({"alg": "RS256", "kid": "k"}), claims))
            .await
            .expect_err("no keys");
        assert_eq!(down.code(), "jwks_unavailable", "{down}");
        assert!(down.to_string().contains("127.0.0.1:9"), "{down}");
    }

    #[test]
    fn audiences_scopes_and_metadata() {
        let p = idp("https://hecate.example/mcp");
        let aud = |v: Value| {
            let mut m = Map::new();
            m.insert("aud".into(), v);
            p.check_audience(&m).map_err(|e| e.code())
        };
        assert_eq!(aud(json!("https://hecate.example/mcp")), Ok(()));
        assert_eq!(aud(json!(["x", "https://hecate.example/mcp"])), Ok(()));
        assert_eq!(aud(json!("account")), Err("wrong_audience"));
        assert_eq!(
            aud(json!(["https://other.example/mcp"])),
            Err("other_resource")
        );
        assert_eq!(aud(json!(7)), Err("missing_claim"));
        let granted = |v: Value| {
            let mut m = Map::new();
            m.insert("scope".into(), v);
            p.granted(&m).map_err(|e| e.code())
        };
        assert_eq!(
            granted(json!("openid hecate:operator")),
            Ok(vec!["openid".to_string(), "hecate:operator".to_string()])
        );
        assert_eq!(granted(json!(["hecate:admin"])).map(|g| g.len()), Ok(1));
        assert_eq!(granted(json!({"a": 1})), Err("bad_scope"));
        assert_eq!(
            p.settings()
                .granted_scope(&granted(json!("hecate:admin")).expect("granted"))
                .expect("scope")
                .role,
            Role::Admin
        );
        let m = p.metadata();
        assert_eq!(m["resource"], "https://hecate.example/mcp");
        assert_eq!(m["authorization_servers"][0], "https://idp.example");
        assert_eq!(m["bearer_methods_supported"][0], "header");
        assert_eq!(
            p.metadata_url("/mcp", &HeaderMap::new()),
            "https://hecate.example/.well-known/oauth-protected-resource/mcp"
        );
        let mut h = HeaderMap::new();
        h.insert(header::HOST, "127.0.0.1:8765".parse().expect("host"));
        assert_eq!(
            idp("api://hecate").metadata_url("/hecate/v1", &h),
            "http://127.0.0.1:8765/.well-known/oauth-protected-resource/hecate/v1"
        );
    }
}
