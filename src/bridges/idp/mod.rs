//! OAuth access tokens of the team's identity provider (`[server.idp]`): JWTs
//! checked against the issuer's JWKS ([`IdentityProvider::verify`]; signatures
//! on ring, [`crypto`]), whose holder acts with the scope its granted
//! `hecate:*` scopes map to, and the RFC 9728 protected-resource metadata that
//! tells OAuth clients where to get one ([`metadata`]). The access guard
//! ([`crate::bridges::access`]) asks the provider about every bearer that is
//! neither the static token nor a named key.

mod crypto;
mod keys;
pub mod metadata;
mod refusal;
mod verifier;

pub use refusal::TokenRefusal;
pub use verifier::{IdentityProvider, WELL_KNOWN};
