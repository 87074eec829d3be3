//! The push notification config operations both bindings share — Create, Get,
//! List and Delete — on the tasks of one agent. A task id the agent does not
//! have (another agent's included) is `TaskNotFound`, as is a config id the
//! task does not have on Get; Delete of an unknown config succeeds.

use super::validate::{bind, checked};
use crate::a2a_wire::{
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig, TaskPushNotificationConfigRequest,
};
use crate::bridges::a2a::agents::ExposedAgent;
use crate::bridges::a2a::error::A2aError;
use crate::bridges::a2a::state::A2aState;
use crate::bridges::a2a::stored;

/// Registers `config` for its task (`taskId`); answers it as kept.
pub async fn create(
    state: &A2aState,
    agent: &ExposedAgent,
    config: TaskPushNotificationConfig,
) -> Result<TaskPushNotificationConfig, A2aError> {
    let task_id = task_of(&config.task_id)?;
    stored::find(state, &agent.name, &task_id).await?;
    let config = bind(checked(config)?, &task_id);
    stored::add_push(state, &agent.name, &task_id, config, false).await
}

/// The config `id` of task `taskId`.
pub async fn get(
    state: &A2aState,
    agent: &ExposedAgent,
    req: &TaskPushNotificationConfigRequest,
) -> Result<TaskPushNotificationConfig, A2aError> {
    let task_id = task_of(&req.task_id)?;
    let id = config_of(&req.id)?;
    stored::push_configs(state, &agent.name, &task_id)
        .await?
        .into_iter()
        .find(|c| c.id == id)
        .ok_or_else(|| {
            A2aError::TaskNotFound(format!(
                "task {task_id} has no push notification config {id}"
            ))
        })
}

/// Every config of task `taskId` (one page: a task keeps few).
pub async fn list(
    state: &A2aState,
    agent: &ExposedAgent,
    req: &ListTaskPushNotificationConfigsRequest,
) -> Result<ListTaskPushNotificationConfigsResponse, A2aError> {
    let task_id = task_of(&req.task_id)?;
    if let Some(n) = req.page_size.filter(|n| *n < 0) {
        return Err(A2aError::InvalidParams(format!("pageSize {n} is negative")));
    }
    Ok(ListTaskPushNotificationConfigsResponse {
        configs: stored::push_configs(state, &agent.name, &task_id).await?,
        next_page_token: String::new(),
    })
}

/// Forgets the config `id` of task `taskId`; nothing more is posted to it.
pub async fn delete(
    state: &A2aState,
    agent: &ExposedAgent,
    req: &TaskPushNotificationConfigRequest,
) -> Result<(), A2aError> {
    let task_id = task_of(&req.task_id)?;
    let id = config_of(&req.id)?;
    stored::remove_push(state, &agent.name, &task_id, &id).await
}

/// The task id a request names.
fn task_of(id: &str) -> Result<String, A2aError> {
    let id = id.trim();
    if id.is_empty() {
        return Err(A2aError::InvalidParams(
            "taskId names the task whose push notification configs to use".into(),
        ));
    }
    Ok(id.to_string())
}

/// The config id a request names.
fn config_of(id: &str) -> Result<String, A2aError> {
    if id.is_empty() {
        return Err(A2aError::InvalidParams(
            "id names the push notification config".into(),
        ));
    }
    Ok(id.to_string())
}
