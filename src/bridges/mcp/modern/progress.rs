//! Where a call in rounds reports its progress. Each round of a 2026-07-28
//! call is a request of its own (over HTTP, a POST whose stream closes with
//! that round's answer), so the call's progress goes to the round the client
//! waits on now, under that round's progress token. While the call is parked
//! between rounds nobody waits, and progress is dropped.

use rmcp::RoleServer;
use rmcp::model::ProgressToken;
use rmcp::service::{Peer, RequestContext};
use std::sync::{Arc, Mutex};

/// A peer to send progress to, and the progress token to send it under.
pub(crate) type ProgressTarget = (Peer<RoleServer>, ProgressToken);

/// The round a call in rounds reports to, shared by the call's task (which
/// finds it in its request's extensions) and the rounds that resume it.
#[derive(Clone, Debug, Default)]
pub(crate) struct ProgressRoute(Arc<Mutex<Option<ProgressTarget>>>);

impl ProgressRoute {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<ProgressTarget>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// From now on progress goes to the round `context` is (nowhere when that
    /// round named no progress token).
    pub(crate) fn follow(&self, context: &RequestContext<RoleServer>) {
        *self.slot() = context
            .meta
            .get_progress_token()
            .map(|token| (context.peer.clone(), token));
    }

    /// The peer and progress token of the round waiting now, if any.
    pub(crate) fn current(&self) -> Option<ProgressTarget> {
        self.slot().clone()
    }

    /// The round ended with questions: nobody listens until the next one.
    pub(crate) fn park(&self) {
        *self.slot() = None;
    }
}

/// Where a call's progress goes: the request's own peer and progress token, or
/// the rounds of a call in rounds. Kept by a sender that outlives its lookup
/// (the relay of an upstream call).
#[derive(Clone, Debug)]
pub(crate) enum ProgressSink {
    /// The request's own peer and token (none: the caller asked for no progress).
    Request(Option<ProgressTarget>),
    /// The round a call in rounds reports to now.
    Rounds(ProgressRoute),
}

impl ProgressSink {
    /// The sink of the call `context` belongs to.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Self {
        match context.extensions.get::<ProgressRoute>() {
            Some(route) => Self::Rounds(route.clone()),
            None => Self::Request(
                context
                    .meta
                    .get_progress_token()
                    .map(|token| (context.peer.clone(), token)),
            ),
        }
    }

    /// Where progress goes now, if anywhere.
    pub(crate) fn target(&self) -> Option<ProgressTarget> {
        match self {
            Self::Request(target) => target.clone(),
            Self::Rounds(route) => route.current(),
        }
    }
}

/// Where progress of the call `context` belongs to goes now: the current round
/// of a call in rounds, or the request's own peer and progress token.
pub(crate) fn progress_target(context: &RequestContext<RoleServer>) -> Option<ProgressTarget> {
    ProgressSink::of(context).target()
}
