//! The identity provider's signing keys: its JWKS, found at `[server.idp]
//! jwks_url` or through the issuer's discovery document (OpenID Connect
//! discovery, then RFC 8414), fetched with bounded time-outs and body size,
//! cached for `jwks_cache`, and fetched again for a `kid` nobody knows (a key
//! rotation) at most once per `jwks_refresh`. A failed fetch keeps the keys
//! fetched before; with none, tokens are refused `jwks_unavailable`.

use super::refusal::TokenRefusal;
use crate::domain::api_key::IdpSettings;
use crate::domain::loopback::is_loopback_host;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};
use serde_json::Value;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// Largest discovery document or JWKS read, in bytes.
pub const MAX_DOCUMENT_BYTES: usize = 512 * 1024;

/// One signing key of the JWKS, ready to check signatures.
#[derive(Clone)]
struct SigningKey {
    kid: Option<String>,
    /// The `alg` the JWK pins, if any.
    alg: Option<Algorithm>,
    /// The algorithms the key's type and curve can check.
    family: AlgorithmFamily,
    curve: Option<EllipticCurve>,
    key: DecodingKey,
}

impl SigningKey {
    /// Whether the key can check a signature made with `alg`.
    fn fits(&self, alg: Algorithm) -> bool {
        let curve_fits = match (alg, &self.curve) {
            (Algorithm::ES256, Some(c)) => *c == EllipticCurve::P256,
            (Algorithm::ES384, Some(c)) => *c == EllipticCurve::P384,
            (Algorithm::EdDSA, Some(c)) => *c == EllipticCurve::Ed25519,
            (_, None) => true,
            _ => false,
        };
        self.family == alg.family() && self.alg.is_none_or(|a| a == alg) && curve_fits
    }
}

/// The keys a token's signature is checked against.
pub enum Candidates {
    /// Keys that fit the token's `kid` and algorithm.
    Keys(Vec<DecodingKey>),
    /// The `kid` is known but its key is for another algorithm.
    WrongKeyType,
    /// No key fits.
    None,
}

fn select(keys: &[SigningKey], kid: Option<&str>, alg: Algorithm) -> Candidates {
    let named: Vec<&SigningKey> = keys
        .iter()
        .filter(|k| kid.is_none_or(|id| k.kid.as_deref() == Some(id)))
        .collect();
    let fitting: Vec<DecodingKey> = named
        .iter()
        .filter(|k| k.fits(alg))
        .map(|k| k.key.clone())
        .collect();
    match (fitting.is_empty(), named.is_empty()) {
        (false, _) => Candidates::Keys(fitting),
        (true, false) if kid.is_some() => Candidates::WrongKeyType,
        _ => Candidates::None,
    }
}

struct Cached {
    keys: Vec<SigningKey>,
    fetched: Instant,
}

#[derive(Default)]
struct State {
    /// The JWKS location found by discovery.
    discovered: Option<String>,
    cached: Option<Cached>,
    last_attempt: Option<Instant>,
    last_error: Option<String>,
}

/// The keys of one identity provider.
pub struct Keys {
    settings: Arc<IdpSettings>,
    client: OnceLock<Result<reqwest::Client, String>>,
    state: tokio::sync::Mutex<State>,
}

impl Keys {
    /// Keys of the provider `settings` names; nothing is fetched until a token
    /// needs them.
    pub fn new(settings: Arc<IdpSettings>) -> Self {
        Self {
            settings,
            client: OnceLock::new(),
            state: tokio::sync::Mutex::new(State::default()),
        }
    }

    /// The keys a token signed with `alg` under `kid` may have been signed with:
    /// from the cache while it is fresh, fetched again when it is stale or the
    /// `kid` is unknown (each at most once per `jwks_refresh`).
    pub async fn candidates(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Candidates, TokenRefusal> {
        let mut st = self.state.lock().await;
        let stale = st
            .cached
            .as_ref()
            .is_none_or(|c| c.fetched.elapsed() >= self.settings.jwks_cache);
        if stale && self.may_fetch(&st) {
            self.refresh(&mut st).await;
        }
        let Some(cached) = &st.cached else {
            return Err(TokenRefusal::JwksUnavailable(
                st.last_error
                    .clone()
                    .unwrap_or_else(|| "no keys were fetched yet".into()),
            ));
        };
        match select(&cached.keys, kid, alg) {
            Candidates::None if kid.is_some() && self.may_fetch(&st) => {
                self.refresh(&mut st).await;
                Ok(st
                    .cached
                    .as_ref()
                    .map_or(Candidates::None, |c| select(&c.keys, kid, alg)))
            }
            found => Ok(found),
        }
    }

    fn may_fetch(&self, st: &State) -> bool {
        st.last_attempt
            .is_none_or(|t| t.elapsed() >= self.settings.jwks_refresh)
    }

    async fn refresh(&self, st: &mut State) {
        st.last_attempt = Some(Instant::now());
        match self.fetch(st).await {
            Ok(keys) => {
                st.cached = Some(Cached {
                    keys,
                    fetched: Instant::now(),
                });
                st.last_error = None;
            }
            Err(e) => {
                tracing::warn!(
                    issuer = %self.settings.issuer,
                    error = %e,
                    "the identity provider's keys could not be fetched; access tokens are checked \
                     against the keys fetched before, if any"
                );
                st.last_error = Some(e);
            }
        }
    }

    async fn fetch(&self, st: &mut State) -> Result<Vec<SigningKey>, String> {
        let url = match (&self.settings.jwks_url, &st.discovered) {
            (Some(url), _) | (None, Some(url)) => url.clone(),
            (None, None) => {
                let url = self.discover().await?;
                st.discovered = Some(url.clone());
                url
            }
        };
        let jwks = self.get_json(&url).await?;
        let keys = parse_jwks(&jwks);
        if keys.is_empty() {
            return Err(format!(
                "the JWKS at {url} has no signing key this server can use (RSA, P-256, P-384 or Ed25519)"
            ));
        }
        Ok(keys)
    }

    /// The `jwks_uri` of the issuer's discovery document: OpenID Connect's
    /// `{issuer}/.well-known/openid-configuration`, else RFC 8414's
    /// `/.well-known/oauth-authorization-server{path}`; the document must name
    /// the configured issuer exactly.
    async fn discover(&self) -> Result<String, String> {
        let issuer = &self.settings.issuer;
        let mut errors = Vec::new();
        for url in discovery_urls(issuer)? {
            let doc = match self.get_json(&url).await {
                Ok(doc) => doc,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            let named = doc.get("issuer").and_then(Value::as_str).unwrap_or("");
            if named != issuer {
                return Err(format!(
                    "the discovery document at {url} names issuer {named:?}, not {issuer:?}"
                ));
            }
            let jwks = doc
                .get("jwks_uri")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("the discovery document at {url} has no jwks_uri"))?;
            check_fetchable(jwks)?;
            return Ok(jwks.to_string());
        }
        Err(format!("no discovery document: {}", errors.join("; ")))
    }

    fn client(&self) -> Result<reqwest::Client, String> {
        let timeout = self.settings.fetch_timeout;
        self.client
            .get_or_init(|| {
                // The binary installs ring at startup; a process that did not
                // (a library user, a unit test) gets it here instead of a panic.
                let _ = rustls::crypto::ring::default_provider().install_default();
                reqwest::Client::builder()
                    .connect_timeout(timeout)
                    .timeout(timeout)
                    .redirect(reqwest::redirect::Policy::limited(3))
                    .build()
                    .map_err(|e| format!("the HTTP client could not be built: {e}"))
            })
            .clone()
    }

    /// GETs a JSON document of at most [`MAX_DOCUMENT_BYTES`].
    async fn get_json(&self, url: &str) -> Result<Value, String> {
        let mut response = self
            .client()?
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("GET {url}: {}", self.describe(&e)))?;
        if !response.status().is_success() {
            return Err(format!("GET {url} answered {}", response.status()));
        }
        if response
            .content_length()
            .is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64)
        {
            return Err(format!("GET {url}: larger than {MAX_DOCUMENT_BYTES} bytes"));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| format!("GET {url}: {}", self.describe(&e)))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_DOCUMENT_BYTES {
                return Err(format!("GET {url}: larger than {MAX_DOCUMENT_BYTES} bytes"));
            }
        }
        serde_json::from_slice(&body).map_err(|e| format!("GET {url}: not JSON: {e}"))
    }

    fn describe(&self, e: &reqwest::Error) -> String {
        if e.is_timeout() {
            return format!(
                "no answer within {} ms",
                self.settings.fetch_timeout.as_millis()
            );
        }
        let mut text = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            text.push_str(": ");
            text.push_str(&s.to_string());
            source = s.source();
        }
        text
    }
}

/// The two discovery locations of `issuer`, OpenID Connect's first.
fn discovery_urls(issuer: &str) -> Result<Vec<String>, String> {
    let parsed =
        reqwest::Url::parse(issuer).map_err(|e| format!("issuer {issuer:?} is not a URL: {e}"))?;
    let path = parsed.path().trim_end_matches('/');
    Ok(vec![
        format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        ),
        format!(
            "{}/.well-known/oauth-authorization-server{path}",
            parsed.origin().ascii_serialization()
        ),
    ])
}

/// Refuses a discovered JWKS location that is neither `https` nor `http` on a
/// loopback host.
fn check_fetchable(url: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("jwks_uri {url:?}: {e}"))?;
    let loopback = is_loopback_host(parsed.host_str().unwrap_or_default());
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(format!(
            "jwks_uri {url:?} must use https (plain http only on a loopback host)"
        )),
    }
}

/// The usable signing keys of a JWKS document: RSA, EC P-256/P-384 and
/// Ed25519 keys not marked for encryption; symmetric (`oct`) keys and keys of
/// other types or algorithms are skipped.
fn parse_jwks(doc: &Value) -> Vec<SigningKey> {
    let Some(list) = doc.get("keys").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|v| serde_json::from_value::<Jwk>(v.clone()).ok())
        .filter(|jwk| jwk.common.public_key_use != Some(PublicKeyUse::Encryption))
        .filter_map(|jwk| {
            let (family, curve) = match &jwk.algorithm {
                AlgorithmParameters::RSA(_) => (AlgorithmFamily::Rsa, None),
                AlgorithmParameters::EllipticCurve(p)
                    if matches!(p.curve, EllipticCurve::P256 | EllipticCurve::P384) =>
                {
                    (AlgorithmFamily::Ec, Some(p.curve.clone()))
                }
                AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
                    (AlgorithmFamily::Ed, Some(p.curve.clone()))
                }
                _ => return None,
            };
            let alg = match jwk.common.key_algorithm {
                None => None,
                Some(a) => Some(Algorithm::try_from(a).ok()?),
            };
            Some(SigningKey {
                kid: jwk.common.key_id.clone(),
                alg,
                family,
                curve,
                key: DecodingKey::from_jwk(&jwk).ok()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_usable_keys_of_a_jwks_and_how_a_token_picks_them() {
        let doc = json!({"keys": [
            {"kty": "EC", "crv": "P-256", "kid": "ec", "use": "sig", "alg": "ES256",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "OKP", "crv": "Ed25519", "kid": "ed",
             "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
            {"kty": "RSA", "kid": "enc", "use": "enc", "n": "AQAB", "e": "AQAB"},
            {"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
            {"kty": "RSA", "kid": "oaep", "alg": "RSA-OAEP", "n": "AQAB", "e": "AQAB"},
            {"kty": "EC", "crv": "P-521", "kid": "p521", "x": "AA", "y": "AA"},
            {"kty": "weird"}
        ]});
        let keys = parse_jwks(&doc);
        let kids: Vec<_> = keys.iter().filter_map(|k| k.kid.as_deref()).collect();
        assert_eq!(kids, ["ec", "ed"]);
        assert!(matches!(
            select(&keys, Some("ec"), Algorithm::ES256),
            Candidates::Keys(k) if k.len() == 1
        ));
        assert!(matches!(
            select(&keys, Some("ec"), Algorithm::RS256),
            Candidates::WrongKeyType
        ));
        assert!(matches!(
            select(&keys, Some("ec"), Algorithm::ES384),
            Candidates::WrongKeyType
        ));
        assert!(matches!(
            select(&keys, Some("gone"), Algorithm::ES256),
            Candidates::None
        ));
        assert!(matches!(
            select(&keys, None, Algorithm::EdDSA),
            Candidates::Keys(k) if k.len() == 1
        ));
        assert!(parse_jwks(&json!({"nokeys": []})).is_empty());
    }

    #[test]
    fn discovery_locations_and_fetchable_urls() {
        assert_eq!(
            discovery_urls("https://idp.example/realms/team/").expect("urls"),
            [
                "https://idp.example/realms/team/.well-known/openid-configuration",
                "https://idp.example/.well-known/oauth-authorization-server/realms/team",
            ]
        );
        assert!(check_fetchable("https://idp.example/jwks").is_ok());
        assert!(check_fetchable("http://127.0.0.1:9/jwks").is_ok());
        assert!(check_fetchable("http://idp.example/jwks").is_err());
        assert!(check_fetchable("file:///etc/passwd").is_err());
    }
}
