//! What the gateway has learnt about each provider from its answers, per
//! process: a 429 makes the router skip the provider for its `Retry-After` (or
//! the configured cooldown); a run of failures (5xx, unreachable, key refused)
//! opens its circuit for the cooldown. After a cooldown the provider is tried
//! again; one more failure reopens the circuit at once, one success closes it.

use super::policy::{CIRCUIT_OPEN, PROVIDER_RATE_LIMITED};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longest cooldown a provider's `Retry-After` can ask for.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);

#[derive(Debug, Default, Clone)]
struct State {
    consecutive_failures: u32,
    open_until: Option<Instant>,
    reason: &'static str,
}

/// Per-provider cooldowns and failure counts.
#[derive(Debug)]
pub struct ProviderHealth {
    cooldown: Duration,
    circuit_failures: u32,
    states: Mutex<HashMap<String, State>>,
}

/// Why the router skips a provider now, and for how much longer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocked {
    /// `provider_rate_limited` or `circuit_open`.
    pub reason: &'static str,
    /// Time left in the cooldown.
    pub remaining: Duration,
}

impl ProviderHealth {
    /// Health tracking with this cooldown and circuit threshold (at least 1).
    pub fn new(cooldown: Duration, circuit_failures: u32) -> Self {
        Self {
            cooldown,
            circuit_failures: circuit_failures.max(1),
            states: Mutex::new(HashMap::new()),
        }
    }

    fn states(&self) -> std::sync::MutexGuard<'_, HashMap<String, State>> {
        self.states.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `provider` is cooling down at `now`.
    pub fn blocked_at(&self, provider: &str, now: Instant) -> Option<Blocked> {
        let states = self.states();
        let s = states.get(provider)?;
        let until = s.open_until?;
        (until > now).then(|| Blocked {
            reason: s.reason,
            remaining: until - now,
        })
    }

    /// Whether `provider` is cooling down now.
    pub fn blocked(&self, provider: &str) -> Option<Blocked> {
        self.blocked_at(provider, Instant::now())
    }

    /// `provider` answered: its failures are forgotten.
    pub fn succeeded(&self, provider: &str) {
        let mut states = self.states();
        if states.contains_key(provider) {
            states.remove(provider);
        }
    }

    /// `provider` answered 429: it is skipped for `retry_after` (capped at
    /// ten minutes), or the cooldown when it sent none.
    pub fn rate_limited(&self, provider: &str, retry_after: Option<Duration>) {
        let wait = retry_after.map_or(self.cooldown, |r| r.min(MAX_RETRY_AFTER));
        let mut states = self.states();
        let s = states.entry(provider.to_string()).or_default();
        s.open_until = Some(Instant::now() + wait);
        s.reason = PROVIDER_RATE_LIMITED;
    }

    /// `provider` failed (5xx, unreachable, key refused): once the failures in a
    /// row reach the threshold its circuit opens for the cooldown.
    pub fn failed(&self, provider: &str) {
        let mut states = self.states();
        let s = states.entry(provider.to_string()).or_default();
        s.consecutive_failures += 1;
        if s.consecutive_failures >= self.circuit_failures {
            s.open_until = Some(Instant::now() + self.cooldown);
            s.reason = CIRCUIT_OPEN;
        }
    }
}

/// Reads a `Retry-After` value in seconds (an HTTP date is not honoured: the
/// configured cooldown applies).
pub fn retry_after_secs(value: &str) -> Option<Duration> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_429_blocks_for_its_retry_after_and_a_success_clears_it() {
        let h = ProviderHealth::new(Duration::from_secs(30), 3);
        assert!(h.blocked("p").is_none());
        h.rate_limited("p", Some(Duration::from_secs(5)));
        let b = h.blocked("p").expect("blocked");
        assert_eq!(b.reason, PROVIDER_RATE_LIMITED);
        assert!(b.remaining <= Duration::from_secs(5));
        assert!(
            h.blocked_at("p", Instant::now() + Duration::from_secs(6))
                .is_none(),
            "the cooldown ends"
        );
        h.succeeded("p");
        assert!(h.blocked("p").is_none());
    }

    #[test]
    fn the_circuit_opens_after_the_threshold_and_reopens_on_the_next_failure() {
        let h = ProviderHealth::new(Duration::from_secs(30), 2);
        h.failed("p");
        assert!(h.blocked("p").is_none(), "one failure is not a circuit");
        h.failed("p");
        assert_eq!(h.blocked("p").map(|b| b.reason), Some(CIRCUIT_OPEN));
        let later = Instant::now() + Duration::from_secs(31);
        assert!(
            h.blocked_at("p", later).is_none(),
            "half open after the cooldown"
        );
        h.failed("p");
        assert!(h.blocked("p").is_some(), "the trial failed: open again");
        h.succeeded("p");
        h.failed("p");
        assert!(h.blocked("p").is_none(), "a success reset the count");
        assert_eq!(retry_after_secs(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(retry_after_secs("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
