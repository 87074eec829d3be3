//! `update_plan`: the model shares its plan (entries with a priority and a
//! status); the loop shows it to every surface. Nothing in the workspace
//! changes.

use super::{ToolError, ToolOutcome};
use crate::domain::plan::{PlanEntry, summary};
use serde::Deserialize;

/// The most entries one plan may hold.
const MAX_ENTRIES: usize = 100;

/// Arguments of `update_plan`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PlanArgs {
    entries: Vec<PlanEntry>,
}

/// Takes the plan: refused when an entry says nothing or there are too many.
pub(super) fn update_plan(a: PlanArgs) -> Result<ToolOutcome, ToolError> {
    if a.entries.len() > MAX_ENTRIES {
        return Err(ToolError::Refused(format!(
            "a plan holds at most {MAX_ENTRIES} entries; this one has {}",
            a.entries.len()
        )));
    }
    if let Some(i) = a.entries.iter().position(|e| e.content.trim().is_empty()) {
        return Err(ToolError::Refused(format!(
            "plan entry {} has no content",
            i + 1
        )));
    }
    Ok(ToolOutcome {
        plan: Some(a.entries.clone()),
        ..ToolOutcome::text(format!("plan updated: {}", summary(&a.entries)))
    })
}

#[cfg(test)]
mod tests {
    use super::super::{ToolEnv, run};
    use crate::adapters::sandbox::Confinement;
    use crate::domain::message::ToolCall;
    use crate::domain::plan::PlanStatus;
    use std::time::Duration;
    use tokio_util::sync::CancellationToken;

    async fn call(arguments: &str) -> super::ToolOutcome {
        let env = ToolEnv {
            workspace: std::env::temp_dir(),
            allowed_root: std::env::temp_dir(),
            additional: Vec::new(),
            confinement: Confinement::none(),
            env: Vec::new(),
            timeout: Duration::from_secs(5),
            http: Default::default(),
            access: Default::default(),
        };
        let call = ToolCall {
            id: "c1".into(),
            name: "update_plan".into(),
            arguments: arguments.into(),
        };
        run(&env, &call, &CancellationToken::new()).await
    }

    #[tokio::test]
    async fn a_plan_is_taken_whole_and_bad_plans_are_error_results() {
        let ok = call(
            r#"{"entries": [{"content": "Read", "priority": "high", "status": "completed"},
                            {"content": "Edit", "priority": "low", "status": "in_progress"}]}"#,
        )
        .await;
        assert!(!ok.is_error, "{}", ok.content);
        assert_eq!(ok.content, "plan updated: 1 of 2 done; now: Edit");
        let plan = ok.plan.expect("plan");
        assert_eq!(plan[1].status, PlanStatus::InProgress);
        let cleared = call(r#"{"entries": []}"#).await;
        assert_eq!(cleared.plan, Some(Vec::new()));
        for bad in [
            r#"{"entries": [{"content": "x", "priority": "urgent", "status": "pending"}]}"#,
            r#"{"entries": [{"content": " ", "priority": "high", "status": "pending"}]}"#,
            r#"{"plan": []}"#,
        ] {
            let out = call(bad).await;
            assert!(out.is_error && out.plan.is_none(), "{bad}: {}", out.content);
        }
    }
}
