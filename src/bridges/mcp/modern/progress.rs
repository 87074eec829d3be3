//! Where a call in rounds reports its progress and log messages. Each round of
//! a 2026-07-28 call is a request of its own (over HTTP, a POST whose stream
//! closes with that round's answer), so what the call reports goes to the round
//! the client waits on now: progress under that round's progress token, log
//! messages to that round's peer. While the call is parked between rounds
//! nobody waits, and both are dropped.

use rmcp::RoleServer;
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, ProgressToken};
use rmcp::service::{Peer, RequestContext};
use std::sync::{Arc, Mutex};

/// A peer to send progress to, and the progress token to send it under.
pub(crate) type ProgressTarget = (Peer<RoleServer>, ProgressToken);

/// One request a call reports to: its peer, the progress token it named and
/// the level it opted in to log messages at (`_meta`, revision 2026-07-28).
#[derive(Clone, Debug)]
#[allow(deprecated)]
pub(crate) struct Listener {
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    log_level: Option<LoggingLevel>,
}

/// A peer to send log messages to, and the level its request opted in to.
#[allow(deprecated)]
pub(crate) type LogTarget = (Peer<RoleServer>, Option<LoggingLevel>);

impl Listener {
    fn of(context: &RequestContext<RoleServer>) -> Self {
        Self {
            peer: context.peer.clone(),
            token: context.meta.get_progress_token(),
            log_level: context.meta.log_level(),
        }
    }

    fn log(&self) -> LogTarget {
        (self.peer.clone(), self.log_level)
    }

    fn progress(&self) -> Option<ProgressTarget> {
        self.token.clone().map(|t| (self.peer.clone(), t))
    }
}

/// The round a call in rounds reports to, shared by the call's task (which
/// finds it in its request's extensions) and the rounds that resume it.
#[derive(Clone, Debug, Default)]
pub(crate) struct ProgressRoute(Arc<Mutex<Option<Listener>>>);

impl ProgressRoute {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Listener>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// From now on progress and log messages go to the round `context` is
    /// (progress nowhere when that round named no progress token).
    pub(crate) fn follow(&self, context: &RequestContext<RoleServer>) {
        *self.slot() = Some(Listener::of(context));
    }

    /// The peer and progress token of the round waiting now, if any.
    pub(crate) fn current(&self) -> Option<ProgressTarget> {
        self.slot().as_ref().and_then(Listener::progress)
    }

    /// The peer of the round waiting now and its log level, if a round waits.
    fn log(&self) -> Option<LogTarget> {
        self.slot().as_ref().map(Listener::log)
    }

    /// The round ended with questions: nobody listens until the next one.
    pub(crate) fn park(&self) {
        *self.slot() = None;
    }
}

/// Where a call's progress and log messages go: the request's own peer (and
/// progress token), or the rounds of a call in rounds. Kept by a sender that
/// outlives its lookup (the relay of an upstream call).
#[derive(Clone, Debug)]
pub(crate) enum ProgressSink {
    /// The request's own peer and token.
    Request(Listener),
    /// The round a call in rounds reports to now.
    Rounds(ProgressRoute),
}

impl ProgressSink {
    /// The sink of the call `context` belongs to.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Self {
        match context.extensions.get::<ProgressRoute>() {
            Some(route) => Self::Rounds(route.clone()),
            None => Self::Request(Listener::of(context)),
        }
    }

    /// Where progress goes now, if anywhere.
    pub(crate) fn target(&self) -> Option<ProgressTarget> {
        match self {
            Self::Request(listener) => listener.progress(),
            Self::Rounds(route) => route.current(),
        }
    }

    /// Where log messages go now, if anywhere, and the level that request
    /// opted in to.
    pub(crate) fn log_target(&self) -> Option<LogTarget> {
        match self {
            Self::Request(listener) => Some(listener.log()),
            Self::Rounds(route) => route.log(),
        }
    }
}

/// Where progress of the call `context` belongs to goes now: the current round
/// of a call in rounds, or the request's own peer and progress token.
pub(crate) fn progress_target(context: &RequestContext<RoleServer>) -> Option<ProgressTarget> {
    ProgressSink::of(context).target()
}
