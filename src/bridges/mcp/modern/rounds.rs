//! Multi round-trip requests (MRTR, protocol 2026-07-28), which replace
//! server→client requests: a `tools/call` of a client on that revision runs in
//! a task of its own, and when the call needs the client's input (an approval
//! form, an upstream's elicitation or sampling request) it is parked and the
//! client gets an `InputRequiredResult` with the questions and an opaque
//! `requestState`. The client's retry of the same call with `inputResponses`
//! and that state resumes the parked call, which either finishes or asks again.
//! The state is a random handle bound to the caller and the tool; a call not
//! resumed within its time to live is dropped, which cancels it.

use super::progress::ProgressRoute;
use rmcp::model::{
    CallToolResponse, InputRequest, InputRequests, InputRequiredResult, InputResponses,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

/// What a call in rounds ends with.
pub(crate) type Outcome = Result<CallToolResponse, ErrorData>;

/// Questions one round may carry before it is answered.
const QUESTIONS_PER_ROUND: usize = 8;

/// One question a running call puts to the client.
struct Question {
    /// A short name for the question's key (`approval`, `elicitation`, ...).
    hint: &'static str,
    request: InputRequest,
    reply: oneshot::Sender<Value>,
}

/// How a call running in rounds asks the client: put in the request's
/// extensions, so the approval and relay code of the call finds it.
#[derive(Clone)]
pub(crate) struct Asker(mpsc::Sender<Question>);

impl Asker {
    /// Asks `request` in the next round and waits for the client's answer (the
    /// result object it put under the question's key), or `None` when the client
    /// gave none or the call was dropped.
    pub(crate) async fn ask(&self, hint: &'static str, request: InputRequest) -> Option<Value> {
        let (reply, answer) = oneshot::channel();
        self.0
            .send(Question {
                hint,
                request,
                reply,
            })
            .await
            .ok()?;
        answer.await.ok()
    }
}

/// A call's task, aborted and cancelled when dropped.
struct Running {
    task: JoinHandle<Outcome>,
    questions: mpsc::Receiver<Question>,
    asked: usize,
    /// The round its progress goes to.
    route: ProgressRoute,
    _cancel: DropGuard,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A call waiting for the client's next round.
struct Parked {
    running: Running,
    waiting: HashMap<String, oneshot::Sender<Value>>,
    owner: String,
    expires: Instant,
}

/// The calls of one endpoint waiting for their next round (shared by the
/// stateless requests of an HTTP endpoint, one per stdio connection).
#[derive(Default)]
pub(crate) struct Rounds {
    parked: Mutex<HashMap<String, Parked>>,
}

/// Why a round could not resume a call.
fn unknown_state() -> ErrorData {
    ErrorData::invalid_params(
        "requestState names no call waiting for input from this caller (it finished, expired \
         or belongs to another caller or tool); call the tool again without it",
        Some(serde_json::json!({"type": "not_found"})),
    )
}

impl Rounds {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Parked>> {
        self.parked.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts `call` (handed the asker it asks the client with and the token
    /// that cancels it) in a task, and answers with its result or its first
    /// questions. `owner` names the caller and tool; a later round must name
    /// the same. `ttl` bounds how long a parked call waits for its next round;
    /// `ct` cancels this round.
    pub(crate) async fn start<F, Fut>(
        &self,
        owner: String,
        ttl: Duration,
        ct: &CancellationToken,
        route: ProgressRoute,
        call: F,
    ) -> Outcome
    where
        F: FnOnce(Asker, CancellationToken) -> Fut,
        Fut: Future<Output = Outcome> + Send + 'static,
    {
        let (tx, questions) = mpsc::channel(QUESTIONS_PER_ROUND);
        let cancel = CancellationToken::new();
        let task = tokio::spawn(call(Asker(tx), cancel.clone()));
        let running = Running {
            task,
            questions,
            asked: 0,
            route,
            _cancel: cancel.drop_guard(),
        };
        self.wait(running, owner, ttl, ct).await
    }

    /// Resumes the call parked under `state` with the client's `responses`
    /// (a question without a response gets no answer), and answers with its
    /// result or its next questions.
    pub(crate) async fn resume(
        &self,
        state: &str,
        owner: String,
        responses: Option<InputResponses>,
        ttl: Duration,
        ct: &CancellationToken,
        round: Option<&RequestContext<RoleServer>>,
    ) -> Outcome {
        let parked = {
            let mut parked = self.lock();
            match parked.get(state) {
                Some(p) if p.owner == owner && p.expires > Instant::now() => parked.remove(state),
                _ => None,
            }
        };
        let Some(parked) = parked else {
            return Err(unknown_state());
        };
        // Before the answers: what the call reports once it has them goes to
        // this round.
        if let Some(round) = round {
            parked.running.route.follow(round);
        }
        let mut responses = responses.unwrap_or_default();
        for (key, reply) in parked.waiting {
            if let Some(answer) = responses.remove(&key) {
                let _ = reply.send(answer);
            }
        }
        if let Some(key) = responses.keys().next() {
            tracing::debug!(%key, "an input response names no question of this round");
        }
        self.wait(parked.running, owner, ttl, ct).await
    }

    /// Waits for the call's result or its next questions; questions park it.
    async fn wait(
        &self,
        mut running: Running,
        owner: String,
        ttl: Duration,
        ct: &CancellationToken,
    ) -> Outcome {
        let first = tokio::select! {
            done = &mut running.task => return finished(done),
            q = running.questions.recv() => q,
            _ = ct.cancelled() => return Err(ErrorData::internal_error("the call was cancelled", None)),
        };
        let Some(first) = first else {
            // Nobody can ask any more: the call is finishing.
            return finished((&mut running.task).await);
        };
        let mut questions = vec![first];
        while let Ok(q) = running.questions.try_recv() {
            questions.push(q);
        }
        let mut requests = InputRequests::new();
        let mut waiting = HashMap::new();
        for q in questions {
            running.asked += 1;
            let key = format!("{}_{}", q.hint, running.asked);
            requests.insert(key.clone(), q.request);
            waiting.insert(key, q.reply);
        }
        running.route.park();
        let state = uuid::Uuid::new_v4().simple().to_string();
        let now = Instant::now();
        let mut parked = self.lock();
        // Calls whose client never came back are dropped (and so cancelled).
        parked.retain(|_, p| p.expires > now);
        parked.insert(
            state.clone(),
            Parked {
                running,
                waiting,
                owner,
                expires: now + ttl,
            },
        );
        Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
            Some(requests),
            Some(state),
        )))
    }

    /// How many calls wait for a round.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

fn finished(done: Result<Outcome, tokio::task::JoinError>) -> Outcome {
    done.unwrap_or_else(|e| {
        Err(ErrorData::internal_error(
            format!("the call's task ended abnormally: {e}"),
            None,
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams};
    use serde_json::json;

    fn question() -> InputRequest {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "message": "ok?",
            "requestedSchema": {"type": "object", "properties": {"decision": {"type": "string"}}}
        }))
        .expect("params");
        InputRequest::Elicitation(ElicitRequest::new(params))
    }

    fn text(r: &Outcome) -> String {
        match r {
            Ok(CallToolResponse::Complete(c)) => c.content[0]
                .as_text()
                .map(|t| t.text.clone())
                .unwrap_or_default(),
            other => panic!("not complete: {other:?}"),
        }
    }

    fn state(r: &Outcome) -> (String, Vec<String>) {
        match r {
            Ok(CallToolResponse::InputRequired(i)) => (
                i.request_state.clone().expect("state"),
                i.input_requests
                    .as_ref()
                    .map(|q| q.keys().cloned().collect())
                    .unwrap_or_default(),
            ),
            other => panic!("not input required: {other:?}"),
        }
    }

    /// Starts a call of `me/tool` that asks one question.
    async fn start_asking(rounds: &Rounds, ttl: Duration, ct: &CancellationToken) -> Outcome {
        rounds
            .start(
                "me/tool".into(),
                ttl,
                ct,
                ProgressRoute::default(),
                |a, _| asking_call(a),
            )
            .await
    }

    async fn asking_call(asker: Asker) -> Outcome {
        let answer = asker.ask("approval", question()).await;
        let said = answer
            .as_ref()
            .and_then(|a| a["content"]["decision"].as_str())
            .unwrap_or("nothing")
            .to_string();
        Ok(CallToolResult::success(vec![ContentBlock::text(said)]).into())
    }

    #[tokio::test]
    async fn a_question_parks_the_call_and_the_answer_resumes_it() {
        let rounds = Rounds::default();
        let ct = CancellationToken::new();
        let ttl = Duration::from_secs(60);
        let first = start_asking(&rounds, ttl, &ct).await;
        let (handle, keys) = state(&first);
        assert_eq!(keys, vec!["approval_1".to_string()]);
        assert_eq!(rounds.len(), 1);
        let wrong = rounds
            .resume(&handle, "other/tool".into(), None, ttl, &ct, None)
            .await;
        assert!(wrong.is_err(), "another caller cannot resume it");
        let mut answers = InputResponses::new();
        answers.insert(
            "approval_1".into(),
            json!({"action": "accept", "content": {"decision": "yes"}}),
        );
        let done = rounds
            .resume(&handle, "me/tool".into(), Some(answers), ttl, &ct, None)
            .await;
        assert_eq!(text(&done), "yes");
        assert_eq!(rounds.len(), 0);
        let again = rounds
            .resume(&handle, "me/tool".into(), None, ttl, &ct, None)
            .await;
        assert!(again.is_err(), "a finished call's state is spent");
    }

    #[tokio::test]
    async fn a_round_without_the_answer_leaves_the_question_unanswered() {
        let rounds = Rounds::default();
        let ct = CancellationToken::new();
        let ttl = Duration::from_secs(60);
        let first = start_asking(&rounds, ttl, &ct).await;
        let (handle, _) = state(&first);
        let done = rounds
            .resume(&handle, "me/tool".into(), None, ttl, &ct, None)
            .await;
        assert_eq!(text(&done), "nothing");
    }

    #[tokio::test]
    async fn an_expired_call_is_dropped_and_cancelled() {
        let rounds = Rounds::default();
        let ct = CancellationToken::new();
        let (seen_tx, seen) = oneshot::channel();
        let first = rounds
            .start(
                "me/tool".into(),
                Duration::ZERO,
                &ct,
                ProgressRoute::default(),
                |a, cancel| async move {
                    let _answer = a.ask("approval", question()).await;
                    cancel.cancelled().await;
                    let _ = seen_tx.send(());
                    Ok(CallToolResult::success(vec![]).into())
                },
            )
            .await;
        let (handle, _) = state(&first);
        let late = rounds
            .resume(&handle, "me/tool".into(), None, Duration::ZERO, &ct, None)
            .await;
        assert!(late.is_err(), "an expired state resumes nothing");
        // The next parked call sweeps the expired one away, which cancels it.
        let _second = start_asking(&rounds, Duration::from_secs(60), &ct).await;
        assert_eq!(rounds.len(), 1);
        // Aborted (its sender dropped) or cancelled (it reports): either way it ended.
        assert!(
            tokio::time::timeout(Duration::from_secs(5), seen)
                .await
                .is_ok(),
            "the dropped call still runs"
        );
    }
}
