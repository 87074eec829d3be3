//! Wire types of `/hecate/v1/keys`: named API keys, their scope and state.

use crate::domain::api_key::{ApiKey, KeyState, Role};
use crate::domain::time::now_millis;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A named API key, without its secret.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct KeyDto {
    /// Key id; the key's token starts with it.
    pub id: String,
    /// Its name, unique among keys not revoked.
    pub name: String,
    /// `read`, `operator` or `admin`.
    #[schema(value_type = String)]
    pub role: Role,
    /// The scope items, as `hecate keys create --scope` takes them.
    pub scope: Vec<String>,
    /// `active`, `expired` or `revoked`.
    #[schema(value_type = String)]
    pub state: KeyState,
    /// Who created it (`admin` or `key:NAME`).
    pub created_by: String,
    /// Creation time.
    pub created_at: String,
    /// When it stops working.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// When it was revoked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    /// When it was last used, to the minute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
}

impl From<&ApiKey> for KeyDto {
    fn from(k: &ApiKey) -> Self {
        Self {
            id: k.id.to_string(),
            name: k.name.clone(),
            role: k.scope.role,
            scope: k.scope.items(),
            state: k.state(now_millis()),
            created_by: k.created_by.clone(),
            created_at: k.created_at.clone(),
            expires_at: k.expires_at.clone(),
            revoked_at: k.revoked_at.clone(),
            last_used_at: k.last_used_at.clone(),
        }
    }
}

/// Body of `POST /hecate/v1/keys`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateKeyRequest {
    /// The key's name: letters, digits, `-`, `_`, `.` or `@`.
    pub name: String,
    /// Scope items: one role (`read`, the default, `operator` or `admin`) and any
    /// of `namespace:NAME`, `server:NAME` (`hecate` for Hecate's own tools) and
    /// `tool:SERVER/TOOL`.
    #[serde(default)]
    pub scope: Vec<String>,
    /// Lifetime, as `90m`, `12h` or `30d`; no expiry when absent.
    #[serde(default)]
    pub expires_in: Option<String>,
}

/// A key just created, with its token: the only time the token is shown.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CreatedKeyResponse {
    /// Always `api_key`.
    pub object: String,
    /// The key.
    pub data: KeyDto,
    /// The token to send as `Authorization: Bearer <token>`; not stored.
    pub token: String,
}

/// One key.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct KeyResponse {
    /// Always `api_key`.
    pub object: String,
    /// The key.
    pub data: KeyDto,
}

/// Every key, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct KeyListResponse {
    /// Always `api_keys`.
    pub object: String,
    /// The keys, revoked and expired ones included.
    pub data: Vec<KeyDto>,
}
