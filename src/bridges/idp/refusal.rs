//! Why an identity provider's access token was refused, each case with a stable
//! reason code (the `reason` of the 401) and the next step for whoever holds it.

/// Why an access token was refused (always a 401 `unauthorized`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenRefusal {
    /// Not a JWT: not three base64url segments, or a header or claims that are
    /// not JSON objects.
    #[error("the access token is not a well-formed JWT: {0}")]
    Malformed(String),
    /// Signed with an algorithm that is not accepted (`none`, `HS256`, or one
    /// missing from `[server.idp] algorithms`).
    #[error("the access token is signed with {0:?}, which this server does not accept")]
    AlgorithmNotAllowed(String),
    /// No key of the identity provider's JWKS has the token's `kid`, even after
    /// fetching the keys again.
    #[error("no key of the identity provider has the access token's kid {0:?}")]
    UnknownKid(String),
    /// The signature does not verify with the identity provider's key.
    #[error("the access token's signature does not verify with the identity provider's key")]
    BadSignature,
    /// The token's `exp` has passed (beyond the leeway).
    #[error("the access token expired")]
    Expired,
    /// The token's `nbf` is still ahead (beyond the leeway).
    #[error("the access token is not valid yet (nbf is in the future)")]
    NotYetValid,
    /// `iss` is not the configured issuer.
    #[error("the access token was issued by {found:?}, not by {expected:?}")]
    WrongIssuer {
        /// The token's issuer.
        found: String,
        /// `[server.idp] issuer`.
        expected: String,
    },
    /// `aud` names neither this server's resource nor any resource URI at all
    /// (a client id, an API name).
    #[error("the access token's audience {found:?} does not include {expected:?}")]
    WrongAudience {
        /// The token's audiences.
        found: Vec<String>,
        /// `[server.idp] audience`.
        expected: String,
    },
    /// `aud` names other resources (absolute URIs, as RFC 8707 resource
    /// indicators are): the token was issued for another resource server.
    #[error("the access token was issued for {found:?}, not for this resource {expected:?}")]
    OtherResource {
        /// The resources the token names.
        found: Vec<String>,
        /// `[server.idp] audience`.
        expected: String,
    },
    /// A claim the server needs (`exp`, `sub`, `iss`, `aud`) is absent or not usable.
    #[error("the access token has no usable {0:?} claim")]
    MissingClaim(String),
    /// A granted `hecate:*` scope is malformed (a malformed limit is refused
    /// rather than ignored, which would widen the token's reach).
    #[error("the access token's scope is not usable: {0}")]
    BadScope(String),
    /// The identity provider's keys could not be fetched (and none are cached).
    #[error("the identity provider's keys could not be fetched: {0}")]
    JwksUnavailable(String),
}

impl TokenRefusal {
    /// The stable reason code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Malformed(_) => "malformed",
            Self::AlgorithmNotAllowed(_) => "algorithm_not_allowed",
            Self::UnknownKid(_) => "unknown_kid",
            Self::BadSignature => "bad_signature",
            Self::Expired => "expired",
            Self::NotYetValid => "not_yet_valid",
            Self::WrongIssuer { .. } => "wrong_issuer",
            Self::WrongAudience { .. } => "wrong_audience",
            Self::OtherResource { .. } => "other_resource",
            Self::MissingClaim(_) => "missing_claim",
            Self::BadScope(_) => "bad_scope",
            Self::JwksUnavailable(_) => "jwks_unavailable",
        }
    }

    /// A short summary safe to show to a user.
    pub fn user_message(&self) -> &'static str {
        match self {
            Self::Expired => "This access token has expired.",
            Self::JwksUnavailable(_) => {
                "The identity provider's keys could not be fetched, so the access token could not be checked."
            }
            Self::WrongAudience { .. } | Self::OtherResource { .. } => {
                "This access token was issued for another resource."
            }
            _ => "This access token is not valid on this Hecate server.",
        }
    }

    /// The recommended next step.
    pub fn operator_action(&self) -> &'static str {
        match self {
            Self::Expired | Self::NotYetValid => {
                "Get a new access token from the identity provider (for not_yet_valid, check both clocks)."
            }
            Self::WrongAudience { .. } | Self::OtherResource { .. } => {
                "Request the token for this server's resource: `[server.idp] audience`, the `resource` of /.well-known/oauth-protected-resource."
            }
            Self::WrongIssuer { .. } => {
                "Sign in with the identity provider `[server.idp] issuer` names."
            }
            Self::UnknownKid(_) | Self::BadSignature => {
                "Use a token the identity provider signed with its current keys; check `[server.idp] issuer` and `jwks_url`."
            }
            Self::JwksUnavailable(_) => {
                "Check that the identity provider's JWKS (`[server.idp] jwks_url`, or its discovery document) is reachable from this server; then retry."
            }
            Self::MissingClaim(_) | Self::BadScope(_) => {
                "Ask the identity provider's admin to issue tokens with `sub`, `exp` and well-formed `hecate:*` scopes."
            }
            Self::Malformed(_) | Self::AlgorithmNotAllowed(_) => {
                "Send an access token the identity provider issued, as `Authorization: Bearer <token>`, signed with one of `[server.idp] algorithms`."
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_has_its_own_reason() {
        let all = [
            TokenRefusal::Malformed("x".into()),
            TokenRefusal::AlgorithmNotAllowed("none".into()),
            TokenRefusal::UnknownKid("k".into()),
            TokenRefusal::BadSignature,
            TokenRefusal::Expired,
            TokenRefusal::NotYetValid,
            TokenRefusal::WrongIssuer {
                found: "a".into(),
                expected: "b".into(),
            },
            TokenRefusal::WrongAudience {
                found: vec![],
                expected: "b".into(),
            },
            TokenRefusal::OtherResource {
                found: vec![],
                expected: "b".into(),
            },
            TokenRefusal::MissingClaim("sub".into()),
            TokenRefusal::BadScope("x".into()),
            TokenRefusal::JwksUnavailable("down".into()),
        ];
        let codes: std::collections::BTreeSet<&str> = all.iter().map(TokenRefusal::code).collect();
        assert_eq!(codes.len(), all.len());
        assert!(all.iter().all(|r| !r.operator_action().is_empty()));
    }
}
