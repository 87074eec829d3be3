//! A session's transcript as the faces render it: the header, a window of its
//! messages (all of them, a page read from either end, or one turn's), and what
//! those messages refer to (runs, provider calls, timings, diff stats, gateway
//! calls). A window reads only its own rows, so a page or a turn's answer costs the
//! same whatever the session's length.

use super::Engine;
use super::diffs::TURN_DIFF_ARTIFACT;
use super::external::AdapterFacts;
use super::queries::compact_deltas;
use super::turns::TurnResult;
use super::turns::gateway_trace::AGENT_CHAT_FORMAT;
use crate::adapters::git::TreeDiff;
use crate::domain::approval::Approval;
use crate::domain::error::{ErrorType, Result};
use crate::domain::gateway_conversation::{GatewayTrace, TraceFilter};
use crate::domain::ids::{MessageId, RunId, SessionId, TaskId, TaskRunId};
use crate::domain::message::{Message, Role};
use crate::domain::provider_call::ProviderCall;
use crate::domain::run::{Run, RunEvent};
use crate::domain::segment::{Segment, derive};
use crate::domain::session::Session;
use crate::domain::timing::{AgentTiming, agent_timing, model_timing};
use crate::store::{ApprovalQuery, LoadOptions};
use serde::Serialize;
use std::collections::HashMap;

/// The most gateway calls a transcript lists (the newest ones).
const MAX_LISTED_GATEWAY_CALLS: usize = 1000;
/// How many times a transcript's rows are read before a header that keeps
/// changing (turns starting and ending back to back) is taken as it is.
const CONSISTENT_READ_TRIES: usize = 3;

/// Which messages of a session a transcript holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TranscriptWindow {
    /// Every message, oldest first (exports and full replays).
    All,
    /// Up to `limit` messages with sequence below `before` (the newest when
    /// `None`): the session read backwards a page at a time.
    Before {
        /// The exclusive upper bound; `None` for the newest page.
        before: Option<i64>,
        /// The page size.
        limit: usize,
        /// Only messages of these roles (every role when empty).
        roles: Vec<Role>,
    },
    /// Up to `limit` messages with sequence above `after`: read forwards.
    After {
        /// The exclusive lower bound.
        after: i64,
        /// The page size.
        limit: usize,
        /// Only messages of these roles (every role when empty).
        roles: Vec<Role>,
    },
    /// The messages one turn wrote: its prompt, tool exchanges and answer.
    Run(RunId),
}

impl TranscriptWindow {
    /// Whether the window ends at the session's newest message, so the running
    /// turn (if any) belongs in it.
    fn reaches_the_end(&self) -> bool {
        matches!(self, Self::All | Self::Before { before: None, .. })
    }

    /// The roles the window keeps (every role when empty).
    fn roles(&self) -> &[Role] {
        match self {
            Self::Before { roles, .. } | Self::After { roles, .. } => roles,
            Self::All | Self::Run(_) => &[],
        }
    }
}

/// Whether messages exist on either side of a transcript's window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TranscriptPage {
    /// Messages older than the first one held exist.
    pub older: bool,
    /// Messages newer than the last one held exist.
    pub newer: bool,
}

/// A session with the stored records of a window of its messages.
#[derive(Debug, Clone, Serialize)]
pub struct Transcript {
    /// The header.
    #[serde(flatten)]
    pub session: Session,
    /// Messages in sequence order.
    pub messages: Vec<Message>,
    /// Provider calls in order.
    pub provider_calls: Vec<ProviderCall>,
    /// Segments derived from the messages held.
    pub segments: Vec<Segment>,
    /// Runs in order: those of the messages held, plus the session's newest run
    /// when the window reaches the end.
    pub runs: Vec<Run>,
    /// Whether the window has neighbours.
    pub page: TranscriptPage,
    /// The model calls the session's supervised agent made through Hecate's
    /// `/v1` (`[agents.gateway]`), oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gateway_calls: Vec<GatewayTrace>,
    /// Catalog facts of the adapters the messages name, by adapter id.
    #[serde(skip)]
    pub adapters: HashMap<String, AdapterFacts>,
    /// The timing of each Hecate Agent answer whose task run has ended, and of
    /// each ended model answer.
    #[serde(skip)]
    pub timings: HashMap<MessageId, AgentTiming>,
    /// The stored diff stat of each external-agent answer that changed files.
    #[serde(skip)]
    pub diff_stats: HashMap<MessageId, String>,
    /// The permission requests of the external-agent runs held, by run, oldest
    /// first: what was asked and who answered.
    #[serde(skip)]
    pub approvals: HashMap<RunId, Vec<Approval>>,
}

/// The run ids `messages` name, in first-seen order, without repeats.
fn run_ids(messages: &[Message]) -> Vec<RunId> {
    let mut ids: Vec<RunId> = Vec::new();
    for id in messages.iter().filter_map(|m| m.run_id.as_ref()) {
        if !ids.contains(id) {
            ids.push(id.clone());
        }
    }
    ids
}

/// The timing of each model answer (an assistant message a provider call
/// produced, not task-backed) whose run has ended.
fn model_timings(
    messages: &[Message],
    runs: &[Run],
    calls: &[ProviderCall],
) -> Vec<(MessageId, AgentTiming)> {
    messages
        .iter()
        .filter(|m| m.role == Role::Assistant && m.runtime.task_run_id.is_none())
        .filter(|m| m.produced_by_call_id.is_some())
        .filter_map(|m| {
            let run_id = m.run_id.as_ref()?;
            let run = runs.iter().find(|r| &r.id == run_id)?;
            let of_run: Vec<&ProviderCall> = calls
                .iter()
                .filter(|c| c.run_id.as_ref() == Some(run_id))
                .collect();
            Some((m.id.clone(), model_timing(run, &of_run)?))
        })
        .collect()
}

/// A finished model turn's transcript (the window of its run) and its run's
/// compacted event log, from what the turn stored, without reading the store:
/// what `transcript_window` with `TranscriptWindow::Run` reads back, for turns
/// that kept it (`TurnResult::stored`). `None` for any other turn.
pub fn turn_transcript(result: &TurnResult) -> Option<(Transcript, Vec<RunEvent>)> {
    let stored = result.stored.as_ref()?;
    let messages = vec![stored.user.clone(), result.assistant.clone()?];
    let provider_calls: Vec<ProviderCall> = stored.call.iter().cloned().collect();
    let runs = vec![result.run.clone()];
    let timings = model_timings(&messages, &runs, &provider_calls)
        .into_iter()
        .collect();
    let transcript = Transcript {
        segments: derive(&messages),
        session: stored.session.clone(),
        page: TranscriptPage {
            older: stored.user.sequence > 0,
            newer: false,
        },
        messages,
        provider_calls,
        runs,
        gateway_calls: Vec::new(),
        adapters: HashMap::new(),
        timings,
        diff_stats: HashMap::new(),
        approvals: HashMap::new(),
    };
    Some((transcript, compact_deltas(stored.events.clone())))
}

impl Engine {
    /// Reads a session with all its messages, provider calls, runs and segments.
    pub async fn transcript(&self, namespace: &str, id: &SessionId) -> Result<Transcript> {
        self.transcript_window(namespace, id, TranscriptWindow::All)
            .await
    }

    /// Reads a session with the messages of `window` and the records they refer
    /// to; only the rows the window holds are read.
    pub async fn transcript_window(
        &self,
        namespace: &str,
        id: &SessionId,
        window: TranscriptWindow,
    ) -> Result<Transcript> {
        let store = self.store();
        let mut session = store.get_session(namespace, id).await?;
        // The rows are read apart from the header, so a turn that begins or ends
        // meanwhile would give a header older than its runs (a `running` session
        // whose run has ended). Every turn's start and end rewrite the header: the
        // rows are consistent when the header is unchanged after them.
        let mut tries = 1;
        let (messages, provider_calls, runs) = loop {
            let rows = self.window_rows(id, &window).await?;
            let after = store.get_session(namespace, id).await?;
            let settled = after == session;
            session = after;
            if settled || tries == CONSISTENT_READ_TRIES {
                break rows;
            }
            tries += 1;
        };
        let page = self.page_of(id, &window, &messages).await?;
        let adapters = self.agents().adapter_facts(
            messages
                .iter()
                .filter_map(|m| m.runtime.adapter_id.as_deref()),
        );
        let (mut timings, diff_stats, gateway_calls, approvals) = tokio::try_join!(
            self.timings(&messages),
            self.diff_stats(&messages),
            self.agent_gateway_calls(&session, &messages, page),
            self.run_approvals(namespace, &session, &messages, &runs),
        )?;
        timings.extend(model_timings(&messages, &runs, &provider_calls));
        Ok(Transcript {
            segments: derive(&messages),
            session,
            messages,
            provider_calls,
            runs,
            page,
            gateway_calls,
            adapters,
            timings,
            diff_stats,
            approvals,
        })
    }

    /// The messages, provider calls and runs `window` holds.
    async fn window_rows(
        &self,
        id: &SessionId,
        window: &TranscriptWindow,
    ) -> Result<(Vec<Message>, Vec<ProviderCall>, Vec<Run>)> {
        let store = self.store();
        Ok(if *window == TranscriptWindow::All {
            // Three independent reads, answered by as many reader connections at once.
            tokio::try_join!(
                self.window_messages(id, window),
                store.list_provider_calls(id),
                store.list_runs(id),
            )?
        } else {
            let (messages, last) =
                tokio::try_join!(self.window_messages(id, window), store.last_run(id))?;
            let mut ids = run_ids(&messages);
            if let Some(last) = last.filter(|l| !ids.contains(&l.id))
                && (window.reaches_the_end() || *window == TranscriptWindow::Run(last.id.clone()))
            {
                ids.push(last.id);
            }
            let (calls, runs) = tokio::try_join!(
                store.list_run_provider_calls(id, &ids),
                store.list_runs_by_id(id, &ids),
            )?;
            (messages, calls, runs)
        })
    }

    /// The approvals of `runs` by run, read only when an external agent (the
    /// runtime that asks) ran in the window.
    async fn run_approvals(
        &self,
        namespace: &str,
        session: &Session,
        messages: &[Message],
        runs: &[Run],
    ) -> Result<HashMap<RunId, Vec<Approval>>> {
        let external =
            session.adapter_id.is_some() || messages.iter().any(|m| m.runtime.adapter_id.is_some());
        let mut out: HashMap<RunId, Vec<Approval>> = HashMap::new();
        if !external || runs.is_empty() {
            return Ok(out);
        }
        let all = self
            .store()
            .list_approvals(ApprovalQuery {
                namespace,
                session_id: Some(&session.id),
                status: None,
            })
            .await?;
        for a in all {
            if let Some(run) = a.run_id.clone().filter(|r| runs.iter().any(|x| &x.id == r)) {
                out.entry(run).or_default().push(a);
            }
        }
        for list in out.values_mut() {
            list.sort_by(|a, b| a.created_at.cmp(&b.created_at));
        }
        Ok(out)
    }

    /// The messages `window` holds, in sequence order.
    async fn window_messages(
        &self,
        id: &SessionId,
        window: &TranscriptWindow,
    ) -> Result<Vec<Message>> {
        let store = self.store();
        match window {
            TranscriptWindow::All => store.list_messages(id, None, usize::MAX).await,
            TranscriptWindow::Before {
                before,
                limit,
                roles,
            } => {
                let o = LoadOptions::before(*before, *limit).with_roles(roles.clone());
                store.load_messages(id, &o).await
            }
            TranscriptWindow::After {
                after,
                limit,
                roles,
            } => {
                let o = LoadOptions::after(Some(*after), *limit).with_roles(roles.clone());
                store.load_messages(id, &o).await
            }
            TranscriptWindow::Run(run) => {
                store.list_run_messages(id, std::slice::from_ref(run)).await
            }
        }
    }

    /// Whether messages (of the window's roles) exist before and after those a
    /// window holds. Sequences are gap-free from 0, so each side costs at most one
    /// indexed read of one row.
    async fn page_of(
        &self,
        id: &SessionId,
        window: &TranscriptWindow,
        messages: &[Message],
    ) -> Result<TranscriptPage> {
        let store = self.store();
        let roles = window.roles();
        let exists = |o: LoadOptions| async move {
            Ok::<_, crate::domain::error::HecateError>(
                !store
                    .load_messages(id, &o.with_roles(roles.to_vec()))
                    .await?
                    .is_empty(),
            )
        };
        let exists_after = |seq: i64| exists(LoadOptions::after(Some(seq), 1));
        Ok(match (messages.first(), messages.last()) {
            _ if *window == TranscriptWindow::All => TranscriptPage::default(),
            (Some(first), Some(last)) => TranscriptPage {
                older: if roles.is_empty() {
                    first.sequence > 0
                } else {
                    exists(LoadOptions::before(Some(first.sequence), 1)).await?
                },
                newer: !window.reaches_the_end() && exists_after(last.sequence).await?,
            },
            // An empty window: whatever exists lies on the side it looked away from.
            _ => match window {
                TranscriptWindow::Before {
                    before: Some(b), ..
                } => TranscriptPage {
                    older: false,
                    newer: exists_after(b.saturating_sub(1)).await?,
                },
                TranscriptWindow::After { after, .. } => TranscriptPage {
                    older: *after >= 0
                        && exists(LoadOptions::before(Some(after.saturating_add(1)), 1)).await?,
                    newer: false,
                },
                _ => TranscriptPage::default(),
            },
        })
    }

    /// The gateway traces filed under a session that has run an external agent
    /// (`X-Hecate-Agent-Session`), oldest first; none for other sessions. A window
    /// with neighbours lists only the traces that started within its messages' span.
    async fn agent_gateway_calls(
        &self,
        session: &Session,
        messages: &[Message],
        page: TranscriptPage,
    ) -> Result<Vec<GatewayTrace>> {
        if session.adapter_id.is_none() {
            return Ok(Vec::new());
        }
        let filter = TraceFilter {
            session_id: Some(session.id.to_string()),
            since: messages
                .first()
                .filter(|_| page.older)
                .map(|m| m.created_at.clone()),
            until: messages
                .last()
                .filter(|_| page.newer)
                .map(|m| m.created_at.clone()),
            // Only the calls the agent made itself, not the traces of this
            // session's own model turns.
            except_client_format: Some(AGENT_CHAT_FORMAT.to_string()),
            limit: MAX_LISTED_GATEWAY_CALLS,
            ..TraceFilter::default()
        };
        self.inner.deferred.traces.flush().await;
        let mut calls = self
            .store()
            .list_traces(&session.namespace, &filter)
            .await?;
        calls.reverse();
        Ok(calls)
    }

    /// The timing of each Hecate Agent answer, from its ended task run.
    async fn timings(&self, messages: &[Message]) -> Result<HashMap<MessageId, AgentTiming>> {
        let store = self.store();
        let mut out = HashMap::new();
        for m in messages.iter().filter(|m| m.role == Role::Assistant) {
            let (Some(task), Some(run)) = (&m.runtime.task_id, &m.runtime.task_run_id) else {
                continue;
            };
            let (task, run) = (TaskId(task.clone()), TaskRunId(run.clone()));
            let r = match store.get_task_run(&task, &run).await {
                Ok(r) => r,
                // The task was deleted; the answer stays without timing.
                Err(e) if e.error_type == ErrorType::NotFound => continue,
                Err(e) => return Err(e),
            };
            let (steps, approvals) = tokio::try_join!(
                store.list_task_steps(&run),
                store.list_task_approvals(&task)
            )?;
            if let Some(t) = agent_timing(&r, &steps, &approvals) {
                out.insert(m.id.clone(), t);
            }
        }
        Ok(out)
    }

    /// The diff stat stored with each external-agent answer (the newest diff,
    /// refreshed by a revert).
    async fn diff_stats(&self, messages: &[Message]) -> Result<HashMap<MessageId, String>> {
        let store = self.store();
        let mut out = HashMap::new();
        for m in messages
            .iter()
            .filter(|m| m.role == Role::Assistant && m.runtime.adapter_id.is_some())
        {
            let newest = store
                .list_artifacts(&m.id)
                .await?
                .into_iter()
                .rfind(|(kind, _, _)| kind == TURN_DIFF_ARTIFACT);
            if let Some((_, _, data)) = newest
                && let Ok(diff) = serde_json::from_str::<TreeDiff>(&data)
                && !diff.stat.trim().is_empty()
            {
                out.insert(m.id.clone(), diff.stat);
            }
        }
        Ok(out)
    }
}
