//! Push notifications: the webhook a client registers for a task
//! (`TaskPushNotificationConfig`, with its verification token and the
//! authentication the agent presents), and the parameters and answers of the
//! Create, Get, List and Delete operations on them. The notification itself is
//! a `StreamResponse` posted to the webhook.

use serde::{Deserialize, Serialize};

/// The header a push notification carries the config's `token` in, as both
/// official SDKs send and read it (lowercase; header names are
/// case-insensitive).
pub const NOTIFICATION_TOKEN_HEADER: &str = "x-a2a-notification-token";

/// The media type of a push notification's body.
pub const NOTIFICATION_CONTENT_TYPE: &str = "application/a2a+json";

/// How the agent authenticates to the webhook: an HTTP authentication scheme
/// and its credentials, sent as `Authorization: SCHEME CREDENTIALS`.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticationInfo {
    /// The scheme (`Bearer`, `Basic`, …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scheme: String,
    /// The credentials for it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub credentials: String,
}

impl std::fmt::Debug for AuthenticationInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthenticationInfo")
            .field("scheme", &self.scheme)
            .field("credentials", &redacted(&self.credentials))
            .finish()
    }
}

/// A webhook registered for a task's updates. Its `Debug` form hides the
/// token and the credentials.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// The tenant (unused by Hecate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The config's id within its task (empty when the client leaves it to
    /// the server).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The task it watches.
    #[serde(default, alias = "task_id", skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    /// Where the notifications are posted.
    #[serde(default)]
    pub url: String,
    /// A token the webhook checks, sent in [`NOTIFICATION_TOKEN_HEADER`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// How the agent authenticates to the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

impl std::fmt::Debug for TaskPushNotificationConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskPushNotificationConfig")
            .field("id", &self.id)
            .field("task_id", &self.task_id)
            .field("url", &self.url)
            .field("token", &self.token.as_deref().map(redacted))
            .field("authentication", &self.authentication)
            .finish()
    }
}

/// A secret as debug output shows it.
fn redacted(secret: &str) -> &'static str {
    if secret.is_empty() { "" } else { "<redacted>" }
}

/// `GetTaskPushNotificationConfig` and `DeleteTaskPushNotificationConfig`
/// parameters: one config of one task.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfigRequest {
    /// The tenant (unused).
    #[serde(default)]
    pub tenant: Option<String>,
    /// The task.
    #[serde(default, alias = "task_id")]
    pub task_id: String,
    /// The config's id.
    #[serde(default)]
    pub id: String,
}

/// `ListTaskPushNotificationConfigs` parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsRequest {
    /// The tenant (unused).
    #[serde(default)]
    pub tenant: Option<String>,
    /// The task.
    #[serde(default, alias = "task_id")]
    pub task_id: String,
    /// Most configs per page.
    #[serde(default, alias = "page_size")]
    pub page_size: Option<i32>,
    /// Where the page starts.
    #[serde(default, alias = "page_token")]
    pub page_token: Option<String>,
}

/// The answer of `ListTaskPushNotificationConfigs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsResponse {
    /// The task's configs.
    pub configs: Vec<TaskPushNotificationConfig>,
    /// The token of the next page, empty on the last.
    pub next_page_token: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_config_reads_what_the_python_sdk_sends_and_writes_proto_json() {
        let c: TaskPushNotificationConfig = serde_json::from_value(json!({
            "taskId": "t1", "url": "https://h/hook", "token": "tok",
            "authentication": {"scheme": "Bearer", "credentials": "secret"}
        }))
        .expect("config");
        assert_eq!(c.task_id, "t1");
        assert!(c.id.is_empty());
        let out = serde_json::to_string(&c).expect("json");
        assert_eq!(
            out,
            r#"{"taskId":"t1","url":"https://h/hook","token":"tok","authentication":{"scheme":"Bearer","credentials":"secret"}}"#
        );
    }

    #[test]
    fn debug_output_hides_the_secrets() {
        let c = TaskPushNotificationConfig {
            url: "https://h/hook".into(),
            token: Some("tok-123".into()),
            authentication: Some(AuthenticationInfo {
                scheme: "Bearer".into(),
                credentials: "cred-456".into(),
            }),
            ..TaskPushNotificationConfig::default()
        };
        let shown = format!("{c:?}");
        assert!(
            !shown.contains("tok-123") && !shown.contains("cred-456"),
            "{shown}"
        );
        assert!(shown.contains("<redacted>"), "{shown}");
    }

    #[test]
    fn requests_read_camel_and_snake_case() {
        let g: TaskPushNotificationConfigRequest =
            serde_json::from_value(json!({"task_id": "t", "id": "c"})).expect("get");
        assert_eq!((g.task_id.as_str(), g.id.as_str()), ("t", "c"));
        let l: ListTaskPushNotificationConfigsRequest =
            serde_json::from_value(json!({"taskId": "t", "pageSize": 5})).expect("list");
        assert_eq!(l.page_size, Some(5));
        let answer = ListTaskPushNotificationConfigsResponse {
            configs: Vec::new(),
            next_page_token: String::new(),
        };
        assert_eq!(
            serde_json::to_value(answer).expect("json"),
            json!({"configs": [], "nextPageToken": ""})
        );
    }
}
