//! The parameters and answers of the message and task operations: send (and
//! stream), get, cancel and subscribe by task id, and list.

use super::message::Message;
use super::push::TaskPushNotificationConfig;
use super::task::{Task, TaskState, known_state};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// The answer of `SendMessage` (Hecate's server always answers the task).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageResponse {
    /// The task the message started or continued.
    pub task: Task,
}

/// How the client wants a send handled.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Output media types the client accepts.
    #[serde(default, alias = "accepted_output_modes")]
    pub accepted_output_modes: Vec<String>,
    /// How many history messages the answer carries.
    #[serde(default, alias = "history_length")]
    pub history_length: Option<i32>,
    /// Answer at once with the working task instead of waiting for its end.
    #[serde(default, alias = "return_immediately")]
    pub return_immediately: bool,
    /// A webhook to notify of the task's updates (also read under the names
    /// earlier drafts used, `pushNotificationConfig`).
    #[serde(
        default,
        alias = "task_push_notification_config",
        alias = "pushNotificationConfig",
        alias = "push_notification_config"
    )]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
}

/// `SendMessage` / `SendStreamingMessage` parameters.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// The tenant (unused by Hecate; one tenant per server).
    #[serde(default)]
    pub tenant: Option<String>,
    /// The message. A client's message must list its parts (even as `[]`).
    #[serde(deserialize_with = "message_with_parts")]
    pub message: Message,
    /// How to handle it.
    #[serde(default)]
    pub configuration: Option<SendMessageConfiguration>,
    /// Free-form metadata.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// Reads a client's message, refusing one without a `parts` field as a message
/// without its content.
fn message_with_parts<'de, D: Deserializer<'de>>(d: D) -> Result<Message, D::Error> {
    let value = Value::deserialize(d)?;
    let has_parts = value.get("parts").is_some();
    let message: Message = serde_json::from_value(value).map_err(serde::de::Error::custom)?;
    if !has_parts {
        return Err(serde::de::Error::missing_field("parts"));
    }
    Ok(message)
}

/// `GetTask` / `CancelTask` / `SubscribeToTask` parameters.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdRequest {
    /// The tenant (unused).
    #[serde(default)]
    pub tenant: Option<String>,
    /// The task id.
    pub id: String,
    /// How many history messages to include (`GetTask`).
    #[serde(default, alias = "history_length")]
    pub history_length: Option<i32>,
}

/// `ListTasks` parameters.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// The tenant (unused).
    #[serde(default)]
    pub tenant: Option<String>,
    /// Only tasks of this conversation.
    #[serde(default, alias = "context_id")]
    pub context_id: Option<String>,
    /// Only tasks in this state (a name this version does not know is refused).
    #[serde(default, deserialize_with = "known_state")]
    pub status: Option<TaskState>,
    /// Most tasks per page.
    #[serde(default, alias = "page_size")]
    pub page_size: Option<i32>,
    /// Where the page starts (from a previous `nextPageToken`).
    #[serde(default, alias = "page_token")]
    pub page_token: Option<String>,
    /// How many history messages each task carries.
    #[serde(default, alias = "history_length")]
    pub history_length: Option<i32>,
    /// Whether tasks carry their artifacts.
    #[serde(default, alias = "include_artifacts")]
    pub include_artifacts: Option<bool>,
}

/// The answer of `ListTasks`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// This page, newest first.
    pub tasks: Vec<Task>,
    /// The token of the next page, empty on the last.
    pub next_page_token: String,
    /// The page size used.
    pub page_size: i32,
    /// How many tasks match in all.
    pub total_size: i32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_send_needs_the_message_parts_listed() {
        let e = serde_json::from_value::<SendMessageRequest>(json!({
            "message": {"messageId": "m", "role": "ROLE_USER"}
        }))
        .expect_err("no parts");
        assert_eq!(e.to_string(), "missing field `parts`");
        let e = serde_json::from_value::<SendMessageRequest>(json!({
            "message": {"messageId": "m", "role": "user", "parts": []}
        }))
        .expect_err("bad role");
        assert!(e.to_string().contains("unknown variant `user`"), "{e}");
        let ok: SendMessageRequest = serde_json::from_value(json!({
            "message": {"messageId": "m", "role": "ROLE_USER", "parts": []},
            "configuration": {"returnImmediately": true,
                "taskPushNotificationConfig": {"url": "https://h/hook", "token": "t"}}
        }))
        .expect("empty parts");
        assert!(ok.message.parts.is_empty());
        let config = ok.configuration.expect("configuration");
        assert!(config.return_immediately);
        let push = config.task_push_notification_config.expect("push");
        assert_eq!(push.url, "https://h/hook");
    }

    #[test]
    fn the_earlier_name_of_the_inline_push_config_is_read_too() {
        let c: SendMessageConfiguration = serde_json::from_value(json!({
            "pushNotificationConfig": {"url": "http://h/x"}
        }))
        .expect("configuration");
        assert_eq!(
            c.task_push_notification_config.map(|p| p.url).as_deref(),
            Some("http://h/x")
        );
    }

    #[test]
    fn a_list_filter_refuses_an_unknown_state() {
        let e = serde_json::from_value::<ListTasksRequest>(json!({"status": "TASK_STATE_NEW"}))
            .expect_err("unknown state");
        assert!(e.to_string().contains("TASK_STATE_WORKING"), "{e}");
        let ok: ListTasksRequest =
            serde_json::from_value(json!({"status": "TASK_STATE_COMPLETED", "page_size": 3}))
                .expect("list");
        assert_eq!(ok.status, Some(TaskState::Completed));
        assert_eq!(ok.page_size, Some(3));
    }
}
