//! The OAuth client of upstream MCP servers (the MCP authorization spec), built
//! on rmcp's `auth` support: discovery from the server's `401` (RFC 9728
//! protected-resource metadata, then RFC 8414 / OpenID discovery with the
//! issuer checked), PKCE, the client identified as configured (a pre-registered
//! `client_id` with its secret from the environment, a client ID metadata
//! document, or dynamic registration, in that order), the `resource`
//! parameter, the `iss` check of the redirect, and refresh before expiry.
//! Tokens live behind [`TokenVault`], which the engine backs with the store, so
//! this module keeps no token on disk of its own and hands none to children.

mod client;
mod credentials;
mod login;
mod transport;
mod vault;

pub use client::{ClientChoice, ClientSecret, OAuthClientSettings, ServerOffers, choose_client};
pub use credentials::VaultCredentials;
pub use login::{LoginOptions, LoginOutcome, login};
pub use transport::OAuthSettings;
pub(crate) use transport::{AuthFlag, OAuthTarget, authorized_client};
pub use vault::{OAuthError, SignIn, TokenVault, VaultEntry, login_fix, read_sign_in, sign_in};
