//! Approval gates on tool calls: a call of a gated built-in tool (or of an MCP
//! tool whose server says `require_approval`, or any tool under `all_tools`)
//! without a decision parks the run with an `agent_loop_tool_call` approval; approved, it
//! runs when the run is claimed again (no new model turn); rejected, the model
//! gets a refusal as the call's result.

use super::audit::{CallEnd, CallStart};
use super::steps::arguments;
use super::{Loop, Verdict};
use crate::adapters::sandbox::Confinement;
use crate::domain::error::{ErrorType, Result};
use crate::domain::ids::TaskApprovalId;
use crate::domain::message::ToolCall;
use crate::domain::task::{TaskApproval, TaskApprovalKind, TaskApprovalStatus};
use crate::domain::time::now_rfc3339;
use crate::runtimes::agent::catalog::BuiltIn;
use crate::store::tasks::{NewTaskEvent, TaskRunPark};
use serde_json::json;
use std::path::PathBuf;

/// How a command tool's call will be confined, in the words an approval shows
/// (empty for other tools); a confined `shell_exec` also names the additional
/// directories it may write.
fn confined_words(tool: &str, confinement: Confinement, additional: &[PathBuf]) -> String {
    match tool {
        "shell_exec" if confinement.is_needed() && !additional.is_empty() => {
            let dirs: Vec<String> = additional.iter().map(|d| d.display().to_string()).collect();
            format!(
                " (confined: {}; also writable: {})",
                confinement.describe(),
                dirs.join(", ")
            )
        }
        "shell_exec" => format!(" (confined: {})", confinement.describe()),
        "git_exec" => {
            let git = Confinement {
                git_writable: true,
                ..confinement
            };
            let hooks = if confinement.git_writable {
                "hooks on"
            } else {
                "hooks off"
            };
            format!(
                " (confined: {}, {hooks}; git that runs other programs is refused)",
                git.describe()
            )
        }
        _ => String::new(),
    }
}

impl Loop<'_> {
    /// Decides whether `call` runs now, was refused, or must wait.
    pub(super) async fn gate(&mut self, call: &ToolCall) -> Result<Verdict> {
        let policy = &self.rt.inner.config.approval_policy;
        let gated = match (BuiltIn::parse(&call.name), self.mcp.get(&call.name)) {
            (Some(_), _) => policy.gates_tool(&call.name),
            (None, Some(tool)) => tool.needs_approval || policy.gates_tool(&call.name),
            (None, None) => false,
        };
        if !gated {
            return Ok(Verdict::Run);
        }
        let known = match self.conversation.approvals.get(&call.id) {
            Some(id) => {
                let id = TaskApprovalId(id.clone());
                match self.rt.store().get_task_approval(&self.task.id, &id).await {
                    Ok(a) => Some(a),
                    // Asked, but the worker died before the approval was stored.
                    Err(e) if e.error_type == ErrorType::NotFound => None,
                    Err(e) => return Err(e),
                }
            }
            None => None,
        };
        let Some(approval) = known else {
            self.park(call).await?;
            return Ok(Verdict::Parked);
        };
        if approval.status == TaskApprovalStatus::Approved {
            return Ok(Verdict::Run);
        }
        let note = approval
            .note
            .as_deref()
            .filter(|n| !n.is_empty())
            .map(|n| format!(": {n}"))
            .unwrap_or_default();
        let text = format!("refused by the operator{note}; the call was not run");
        self.audit_mcp_call(
            call,
            CallStart::now(),
            CallEnd {
                decision: "rejected",
                outcome: "not_called",
                error: Some(&text),
            },
        );
        self.conversation.push_result(&call.id, text, true);
        let event = NewTaskEvent::new(
            "tool.call.refused",
            json!({"tool_call_id": call.id, "tool": call.name, "approval_id": approval.id,
                   "note": approval.note}),
        );
        self.record(None, vec![event], Vec::new());
        Ok(Verdict::Refused)
    }

    /// Records an approval for `call` in the conversation, stores it, and parks
    /// the run on it.
    async fn park(&mut self, call: &ToolCall) -> Result<()> {
        let args = arguments(call);
        let approval = TaskApproval {
            id: TaskApprovalId::generate(),
            task_id: self.task.id.clone(),
            run_id: self.run.id.clone(),
            kind: TaskApprovalKind::AgentLoopToolCall,
            status: TaskApprovalStatus::Pending,
            reason: format!(
                "the agent wants to use {}: {args}{}",
                call.name,
                confined_words(&call.name, self.env.confinement, &self.env.additional)
            ),
            note: None,
            created_at: now_rfc3339(),
            resolved_at: None,
        };
        self.conversation
            .approvals
            .insert(call.id.clone(), approval.id.as_str().to_string());
        self.record(None, Vec::new(), Vec::new());
        self.flush(None).await?;
        let event = NewTaskEvent::new(
            "approval.requested",
            json!({"approval_id": approval.id, "kind": approval.kind.as_str(),
                   "reason": approval.reason, "tool_call_id": call.id, "tool": call.name,
                   "arguments": args}),
        );
        let stored = self
            .rt
            .store()
            .await_task_approval(TaskRunPark {
                run_id: self.run.id.clone(),
                owner: self.rt.inner.owner.clone(),
                approval,
                events: vec![event],
            })
            .await?;
        self.rt.publish(stored);
        Ok(())
    }
}
