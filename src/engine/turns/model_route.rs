//! A model turn over the gateway's route: the turn's provider first, then —
//! unless its request named the provider — every other provider serving the
//! model, each checked as a `/v1` request's candidates are (deny patterns, the
//! daily budget, cooldowns shared with `/v1`), and the next one tried when a
//! provider fails before the first token. What each failure says of the
//! provider teaches the shared health, and the route goes on the turn's trace.

use crate::domain::gateway_conversation::RouteCandidate;
use crate::engine::Engine;
use crate::engine::gateway::candidates::{failover_reason, learn_failure, nothing_routable};
use crate::engine::gateway::{GatewayRoute, RouteLog};
use crate::runtimes::model::ModelTarget;
use crate::runtimes::{TurnContext, TurnEnd, TurnReport, TurnTarget};

/// The route reason of a turn's own provider.
fn reason(pinned: bool) -> &'static str {
    if pinned {
        "pinned_provider"
    } else {
        "requested_model"
    }
}

impl Engine {
    /// Runs a model turn of `namespace` on its route candidates in turn. The
    /// other providers serving the model are looked up only when the turn's
    /// own provider is skipped or fails, so an answered turn costs no lookup.
    pub(super) async fn run_model_turn(&self, ctx: TurnContext, namespace: &str) -> TurnReport {
        let TurnTarget::Model {
            provider,
            model,
            pinned,
        } = ctx.target.clone()
        else {
            return self.inner.model.run(ctx).await;
        };
        let gateway = self.gateway();
        let health = self.inner.gateway.health();
        let mut routes = vec![GatewayRoute {
            provider: provider.clone(),
            model: model.clone(),
            reason: reason(pinned),
        }];
        let (mut candidates, mut cooldowns) =
            gateway.check_candidates(namespace, false, &routes).await;
        let mut widened = pinned;
        let mut last: Option<TurnReport> = None;
        let mut i = 0;
        loop {
            if i == routes.len() {
                if widened {
                    break;
                }
                widened = true;
                let (more, checked, waits) = gateway.fallbacks(namespace, &provider, &model).await;
                routes.extend(more);
                candidates.extend(checked);
                cooldowns.extend(waits);
                continue;
            }
            let r = &routes[i];
            if candidates[i].outcome != "pending" {
                i += 1;
                continue;
            }
            let mut attempt = ctx.clone();
            attempt.target = TurnTarget::Model {
                provider: r.provider.clone(),
                model: r.model.clone(),
                pinned,
            };
            let mut report = self.inner.model.run(attempt).await;
            report.answered_by = Some(ModelTarget {
                provider: r.provider.clone(),
                model: r.model.clone(),
            });
            let failure = report.upstream_failure.take();
            let c = &mut candidates[i];
            match (&failure, &report.end) {
                (Some(e), _) => {
                    learn_failure(&health, &r.provider, e);
                    c.outcome = "failed".into();
                    c.detail = Some(e.to_string());
                    c.skip_reason = failover_reason(e).map(str::to_string);
                    if c.skip_reason.is_some() && !ctx.cancel.is_cancelled() {
                        tracing::info!(provider = %r.provider, error = %e, "a model turn's provider failed before its first token; trying the next");
                        last = Some(report);
                        i += 1;
                        continue;
                    }
                }
                (None, TurnEnd::Completed) => {
                    health.succeeded(&r.provider);
                    c.outcome = "selected".into();
                }
                (None, TurnEnd::Failed(e)) => {
                    c.outcome = "failed".into();
                    c.detail = Some(e.message.clone());
                }
                (None, TurnEnd::Cancelled) => c.outcome = "cancelled".into(),
            }
            return ended(report, candidates, i);
        }
        // Every candidate failed (the last failure is the turn's) or was skipped.
        if let Some(report) = last {
            let at = candidates.len();
            return ended(report, candidates, at);
        }
        let log = RouteLog {
            reason: reason(pinned).to_string(),
            candidates,
        };
        let mut e = nothing_routable(&log, &cooldowns);
        if let Ok(v) = serde_json::to_value(&log.candidates) {
            e = e.with_detail("route_candidates", v);
        }
        let mut report = TurnReport::ended(TurnEnd::Failed(e));
        report.route = log.candidates;
        report
    }
}

/// `report` with its route: the candidates after `at` that were never tried
/// are `unused`.
fn ended(mut report: TurnReport, mut candidates: Vec<RouteCandidate>, at: usize) -> TurnReport {
    for later in candidates.iter_mut().skip(at + 1) {
        if later.outcome == "pending" {
            later.outcome = "unused".into();
        }
    }
    report.route = candidates;
    report
}
