//! Who calls the chat operations: anonymous, an app by its key, or a user by
//! token, matched against the configured `[chat.apps.*]` and `[chat.users.*]`.

use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::flow::ChatIdentity;

/// A configured app: its id, key and the agents it may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppCredential {
    /// The app id memory is keyed on.
    pub app_id: String,
    /// The secret the app sends.
    pub key: String,
    /// Agents it may use (empty: all).
    pub agents: Vec<String>,
}

/// A configured user: its id and token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserCredential {
    /// The user id memory is keyed on.
    pub user_id: String,
    /// The bearer token the user sends.
    pub token: String,
}

/// What a caller presented.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatCredentials {
    /// An app key, when sent.
    pub app_key: Option<String>,
    /// A user token, when sent.
    pub user_token: Option<String>,
}

/// The configured apps and users.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatAccess {
    /// Apps by key.
    pub apps: Vec<AppCredential>,
    /// Users by token.
    pub users: Vec<UserCredential>,
}

/// Compares two secrets in time independent of where they differ.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

impl ChatAccess {
    /// The identity `creds` prove: an app key wins over a user token; neither is
    /// anonymous; an unknown one is `chat.identity_invalid`.
    pub fn identify(&self, creds: &ChatCredentials) -> Result<ChatIdentity> {
        if let Some(key) = creds.app_key.as_deref() {
            return self
                .apps
                .iter()
                .find(|a| same_secret(&a.key, key))
                .map(|a| ChatIdentity::App {
                    app_id: a.app_id.clone(),
                    agents: a.agents.clone(),
                })
                .ok_or_else(|| {
                    HecateError::new(
                        ErrorType::ChatIdentityInvalid,
                        "the app key matches no configured app",
                    )
                });
        }
        if let Some(token) = creds.user_token.as_deref() {
            return self
                .users
                .iter()
                .find(|u| same_secret(&u.token, token))
                .map(|u| ChatIdentity::User {
                    user_id: u.user_id.clone(),
                })
                .ok_or_else(|| {
                    HecateError::new(
                        ErrorType::ChatIdentityInvalid,
                        "the user token matches no configured user",
                    )
                });
        }
        Ok(ChatIdentity::Anonymous)
    }

    /// Whether a user token `token` is configured (bridges use it to tell a
    /// user's bearer token from the server's).
    pub fn is_user_token(&self, token: &str) -> bool {
        self.users.iter().any(|u| same_secret(&u.token, token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_tokens_resolve_and_unknown_ones_are_refused() {
        let access = ChatAccess {
            apps: vec![AppCredential {
                app_id: "shop".into(),
                key: "k1".into(),
                agents: vec![],
            }],
            users: vec![UserCredential {
                user_id: "ann".into(),
                token: "t1".into(),
            }],
        };
        let id = |app: Option<&str>, user: Option<&str>| {
            access.identify(&ChatCredentials {
                app_key: app.map(str::to_string),
                user_token: user.map(str::to_string),
            })
        };
        assert_eq!(id(None, None).expect("anon"), ChatIdentity::Anonymous);
        assert_eq!(id(Some("k1"), None).expect("app").app_id(), "shop");
        assert_eq!(
            id(None, Some("t1")).expect("user"),
            ChatIdentity::User {
                user_id: "ann".into()
            }
        );
        for bad in [
            id(Some("k2"), None),
            id(None, Some("t2")),
            id(Some("t1"), None),
        ] {
            assert_eq!(
                bad.expect_err("unknown").error_type,
                ErrorType::ChatIdentityInvalid
            );
        }
        assert!(access.is_user_token("t1") && !access.is_user_token("k1"));
    }
}
