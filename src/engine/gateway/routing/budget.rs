//! What the gateway spent today, for the daily budget: the sum of the costs of
//! today's traces (UTC), read from the store at most every two seconds (so the
//! replicas on one store converge) and raised by this process's own exchanges
//! in between.

use crate::domain::time::now_rfc3339;
use crate::engine::Gateway;

/// The start of the current UTC day, in the stored timestamps' format.
fn today_start() -> String {
    let now = now_rfc3339();
    format!("{}T00:00:00.000Z", &now[..10.min(now.len())])
}

impl<'e> Gateway<'e> {
    /// What `/v1` spent today in `namespace`, in micro-USD. A store that cannot
    /// be read counts as nothing spent (the failure is logged).
    pub(in crate::engine::gateway) async fn gateway_spent_today(self, namespace: &str) -> i64 {
        let since = today_start();
        let tracker = &self.engine.inner.gateway.spend;
        if let Some(s) = tracker.cached(namespace, &since) {
            return s;
        }
        match self
            .engine
            .store()
            .trace_spend_since(namespace, &since)
            .await
        {
            Ok(spent) => {
                tracker.set(namespace, since, spent);
                spent
            }
            Err(e) => {
                tracing::warn!(error = %e, "today's gateway spend not read");
                0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::spend::SpendTracker;
    use super::*;

    #[test]
    fn the_day_starts_at_utc_midnight_and_local_costs_add_up() {
        let d = today_start();
        assert!(d.ends_with("T00:00:00.000Z") && d.len() == 24, "{d}");
        let t = SpendTracker::default();
        t.add("ns", 5);
        assert_eq!(t.cached("ns", &d), None, "nothing read yet");
        t.set("ns", d.clone(), 10);
        t.add("ns", 5);
        assert_eq!(t.cached("ns", &d), Some(15));
        assert_eq!(t.cached("ns", "2000-01-01T00:00:00.000Z"), None);
    }
}
