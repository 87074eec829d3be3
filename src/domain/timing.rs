//! Where the time of an assistant answer went. A Hecate Agent turn: the backing
//! `agent_loop` run's queue wait, model turns, tool calls and approval waits
//! from its stored steps and approvals. A model turn: its provider calls
//! within its run. The rest is named overhead (orchestration, checkpoints,
//! polling, the store's writes).

use crate::domain::provider_call::ProviderCall;
use crate::domain::run::Run;
use crate::domain::task::{TaskApproval, TaskRun, TaskStep};
use crate::domain::time::parse_millis;
use serde::Serialize;

/// The timing object of an assistant message (a Hecate Agent or model turn).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentTiming {
    /// From the run's creation to its end.
    pub total_ms: i64,
    /// From the run's creation until a worker first claimed it.
    pub queue_ms: i64,
    /// Spent in model turns.
    pub model_ms: i64,
    /// Spent in tool calls.
    pub tool_ms: i64,
    /// Spent waiting on approvals.
    pub approval_wait_ms: i64,
    /// What the buckets above do not explain.
    pub overhead_ms: i64,
    /// Model turns.
    pub turn_count: usize,
    /// Tool calls.
    pub tool_count: usize,
    /// The largest bucket: `queue`, `model`, `tool`, `approval_wait` or `overhead`.
    pub bottleneck: &'static str,
    /// Its milliseconds.
    pub bottleneck_ms: i64,
}

fn span(from: &str, to: Option<&str>) -> Option<i64> {
    Some((parse_millis(to?)? - parse_millis(from)?).max(0))
}

/// The timing of an ended run, or `None` while it runs (or when its stored
/// timestamps do not parse).
pub fn agent_timing(
    run: &TaskRun,
    steps: &[TaskStep],
    approvals: &[TaskApproval],
) -> Option<AgentTiming> {
    let total_ms = span(&run.created_at, run.finished_at.as_deref())?;
    let queue_ms = span(&run.created_at, run.started_at.as_deref()).unwrap_or(0);
    let (mut model_ms, mut tool_ms, mut turn_count, mut tool_count) = (0, 0, 0, 0);
    for s in steps {
        let d = span(&s.started_at, s.finished_at.as_deref()).unwrap_or(0);
        match s.kind.as_str() {
            "model" => {
                model_ms += d;
                turn_count += 1;
            }
            "tool" => {
                tool_ms += d;
                tool_count += 1;
            }
            _ => {}
        }
    }
    let approval_wait_ms: i64 = approvals
        .iter()
        .filter(|a| a.run_id == run.id)
        .filter_map(|a| span(&a.created_at, a.resolved_at.as_deref()))
        .sum();
    Some(bucketed(
        [total_ms, queue_ms, model_ms, tool_ms, approval_wait_ms],
        turn_count,
        tool_count,
    ))
}

/// The timing of an ended model turn: its run's duration, of which its
/// provider `calls` (a failed-over attempt's included) are the model's share;
/// `None` while it runs.
pub fn model_timing(run: &Run, calls: &[&ProviderCall]) -> Option<AgentTiming> {
    let total_ms = run
        .duration_ms
        .or_else(|| span(&run.started_at, run.completed_at.as_deref()))?;
    let model_ms = calls
        .iter()
        .map(|c| c.duration_ms)
        .sum::<i64>()
        .min(total_ms);
    Some(bucketed([total_ms, 0, model_ms, 0, 0], calls.len(), 0))
}

/// The timing object of `[total, queue, model, tool, approval wait]`
/// milliseconds: what they leave is overhead, and the largest is the bottleneck.
fn bucketed(ms: [i64; 5], turn_count: usize, tool_count: usize) -> AgentTiming {
    let [total_ms, queue_ms, model_ms, tool_ms, approval_wait_ms] = ms;
    let overhead_ms = (total_ms - queue_ms - model_ms - tool_ms - approval_wait_ms).max(0);
    let (bottleneck, bottleneck_ms) = [
        ("queue", queue_ms),
        ("model", model_ms),
        ("tool", tool_ms),
        ("approval_wait", approval_wait_ms),
        ("overhead", overhead_ms),
    ]
    .into_iter()
    .fold(
        ("queue", i64::MIN),
        |best, b| if b.1 > best.1 { b } else { best },
    );
    AgentTiming {
        total_ms,
        queue_ms,
        model_ms,
        tool_ms,
        approval_wait_ms,
        overhead_ms,
        turn_count,
        tool_count,
        bottleneck,
        bottleneck_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{TaskApprovalId, TaskId, TaskRunId, TaskStepId};
    use crate::domain::task::{
        TaskApprovalKind, TaskApprovalStatus, TaskRunStatus, TaskStepStatus,
    };
    use serde_json::json;

    fn at(ms: i64) -> String {
        format!("2026-01-01T00:00:{:02}.{:03}Z", ms / 1000, ms % 1000)
    }

    fn step(kind: &str, from: i64, to: i64) -> TaskStep {
        TaskStep {
            id: TaskStepId::generate(),
            run_id: TaskRunId("run".into()),
            task_id: TaskId("task".into()),
            index: 1,
            kind: kind.into(),
            status: TaskStepStatus::Completed,
            input: json!({}),
            exit_code: None,
            error_type: None,
            error_message: None,
            started_at: at(from),
            finished_at: Some(at(to)),
        }
    }

    fn run(finished: Option<i64>) -> TaskRun {
        TaskRun {
            id: TaskRunId("run".into()),
            task_id: TaskId("task".into()),
            number: 1,
            status: TaskRunStatus::Completed,
            error_type: None,
            error_message: None,
            resumed_from_run_id: None,
            workspace: None,
            total_cost_micros_usd: 0,
            prior_cost_micros_usd: 0,
            model: None,
            provider: None,
            cancel_requested: false,
            created_at: at(0),
            started_at: Some(at(120)),
            finished_at: finished.map(at),
        }
    }

    #[test]
    fn buckets_add_up_to_the_total_with_the_rest_as_overhead() {
        let steps = [
            step("model", 200, 4200),
            step("tool", 4300, 5000),
            step("model", 7100, 11600),
        ];
        let approval = TaskApproval {
            id: TaskApprovalId::generate(),
            task_id: TaskId("task".into()),
            run_id: TaskRunId("run".into()),
            kind: TaskApprovalKind::AgentLoopToolCall,
            status: TaskApprovalStatus::Approved,
            reason: String::new(),
            note: None,
            created_at: at(5000),
            resolved_at: Some(at(7000)),
        };
        let t = agent_timing(&run(Some(12400)), &steps, &[approval]).expect("ended");
        assert_eq!(
            (
                t.total_ms,
                t.queue_ms,
                t.model_ms,
                t.tool_ms,
                t.approval_wait_ms
            ),
            (12400, 120, 8500, 700, 2000)
        );
        assert_eq!(t.overhead_ms, 12400 - 120 - 8500 - 700 - 2000);
        assert_eq!((t.turn_count, t.tool_count), (2, 1));
        assert_eq!((t.bottleneck, t.bottleneck_ms), ("model", 8500));
    }

    #[test]
    fn a_running_run_has_no_timing_yet() {
        assert_eq!(agent_timing(&run(None), &[], &[]), None);
    }

    #[test]
    fn a_model_turn_is_its_calls_and_the_rest_of_its_run() {
        use crate::domain::ids::{CallId, RunId, SessionId};
        use crate::domain::provider_call::Usage;
        use crate::domain::run::RunStatus;
        let run = Run {
            id: RunId::from("run_1"),
            session_id: SessionId::from("s"),
            status: RunStatus::Completed,
            error_type: None,
            error_message: None,
            request_id: String::new(),
            trace_id: None,
            span_id: None,
            started_at: at(0),
            completed_at: Some(at(900)),
            duration_ms: None,
        };
        let call = |ms| ProviderCall {
            id: CallId::generate(),
            session_id: SessionId::from("s"),
            run_id: Some(RunId::from("run_1")),
            request_id: String::new(),
            provider: "p".into(),
            model: "m".into(),
            usage: Usage::default(),
            cost_micros_usd: None,
            duration_ms: ms,
            created_at: at(0),
        };
        let (failed, answered) = (call(100), call(700));
        let t = model_timing(&run, &[&failed, &answered]).expect("ended");
        assert_eq!((t.total_ms, t.model_ms, t.overhead_ms), (900, 800, 100));
        assert_eq!((t.turn_count, t.tool_count, t.queue_ms), (2, 0, 0));
        assert_eq!((t.bottleneck, t.bottleneck_ms), ("model", 800));
        let running = Run {
            completed_at: None,
            ..run
        };
        assert_eq!(model_timing(&running, &[&answered]), None);
    }
}
