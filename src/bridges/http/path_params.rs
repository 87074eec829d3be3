//! The path parameters of the `/hecate/v1` routes, one struct per path shape.
//! Each struct is both what a handler extracts and what its OpenAPI operation
//! lists (`params(TaskRunPath)`), so names and descriptions are written once.
//! A field's doc comment is its parameter's description in the document.

use serde::Deserialize;
use utoipa::IntoParams;

/// `{id}` of an Agent Chat session.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SessionPath {
    /// Session id
    pub id: String,
}

/// `{id}` and `{approval_id}`: an approval of an Agent Chat session.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SessionApprovalPath {
    /// Session id
    pub id: String,
    /// Approval id
    pub approval_id: String,
}

/// `{id}` and `{message_id}`: an assistant message of an Agent Chat session.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct MessagePath {
    /// Session id
    pub id: String,
    /// Assistant message id
    pub message_id: String,
}

/// `{id}`, `{message_id}` and `{path}`: one file an assistant message's turn changed.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct MessageFilePath {
    /// Session id
    pub id: String,
    /// Assistant message id
    pub message_id: String,
    /// The file's repository path, URL-encoded
    pub path: String,
}

/// `{key}` of a named API key: its id or its name.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct KeyPath {
    /// Key id or name
    pub key: String,
}

/// `{grant_id}` of a standing grant.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct GrantPath {
    /// Grant id
    pub grant_id: String,
}

/// `{id}` of an external-agent adapter.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct AdapterPath {
    /// Adapter id
    pub id: String,
}

/// `{chatId}` of a client-hosted chat.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ChatPath {
    /// Chat id
    #[serde(rename = "chatId")]
    pub chat_id: String,
}

/// `{id}` of a gateway chat session.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ChatSessionPath {
    /// Chat session id
    pub id: String,
}

/// `{id}` of a task.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TaskPath {
    /// Task id
    pub id: String,
}

/// `{id}` and `{approval_id}`: an approval gate of a task.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TaskApprovalPath {
    /// Task id
    pub id: String,
    /// Approval id
    pub approval_id: String,
}

/// `{id}` and `{run_id}`: a run of a task.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TaskRunPath {
    /// Task id
    pub id: String,
    /// Run id
    pub run_id: String,
}

/// `{id}`, `{run_id}` and `{step_id}`: one step of a run.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TaskStepPath {
    /// Task id
    pub id: String,
    /// Run id
    pub run_id: String,
    /// Step id
    pub step_id: String,
}

/// `{id}`, `{run_id}` and `{artifact_id}`: one artifact of a run.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TaskArtifactPath {
    /// Task id
    pub id: String,
    /// Run id
    pub run_id: String,
    /// Artifact id
    pub artifact_id: String,
}

/// `{id}`, `{run_id}` and `{artifact_id}`: one patch of a run (a patch is an artifact).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TaskPatchPath {
    /// Task id
    pub id: String,
    /// Run id
    pub run_id: String,
    /// Patch artifact id
    pub artifact_id: String,
}
