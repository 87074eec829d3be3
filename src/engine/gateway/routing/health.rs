//! What the gateway has learnt about each provider from its answers, per
//! process: a 429 makes the router skip the provider for its `Retry-After` (or
//! the configured cooldown); a run of failures (5xx, unreachable, key refused)
//! opens its circuit for the cooldown. After a cooldown the provider is tried
//! again; one more failure reopens the circuit at once, one success closes it.
//! Each cooldown learnt is also kept for `sync.rs` to share through the store,
//! and cooldowns other processes learnt are adopted here.

use super::policy::{CIRCUIT_OPEN, PROVIDER_RATE_LIMITED};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::Notify;

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
    /// Cooldowns learnt here and not shared yet, the newest per provider.
    learnt: Mutex<HashMap<String, Learnt>>,
    /// Wakes the sharing task when a cooldown is learnt.
    learnt_signal: Notify,
    /// Each provider's answer time (sent to response headers), averaged.
    latencies: Mutex<HashMap<String, Latency>>,
}

/// The weight of the newest answer in a provider's average answer time.
const LATENCY_WEIGHT: f64 = 0.3;

/// A provider's average answer time: exponentially weighted (the newest answer
/// counts for [`LATENCY_WEIGHT`]), over this process's answers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    /// The weighted average.
    pub average: Duration,
    /// How many answers it is made of.
    pub samples: u64,
}

/// What is known of one provider now, for the operator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Snapshot {
    /// Failures in a row since its last answer.
    pub consecutive_failures: u32,
    /// Its cooldown, when the router skips it now.
    pub blocked: Option<Blocked>,
    /// Its average answer time, once it answered.
    pub latency: Option<Latency>,
}

/// A cooldown this process learnt, to share with the others on the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learnt {
    /// The provider.
    pub provider: String,
    /// `provider_rate_limited` or `circuit_open`.
    pub reason: &'static str,
    /// When the cooldown ends (wall clock, which processes share).
    pub until: SystemTime,
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
            learnt: Mutex::new(HashMap::new()),
            learnt_signal: Notify::new(),
            latencies: Mutex::new(HashMap::new()),
        }
    }

    /// `provider` answered after `took` (request sent to response headers):
    /// its average answer time moves toward it.
    pub fn answered_in(&self, provider: &str, took: Duration) {
        let mut all = self.latencies.lock().unwrap_or_else(|p| p.into_inner());
        let l = all.entry(provider.to_string()).or_insert(Latency {
            average: took,
            samples: 0,
        });
        if l.samples > 0 {
            l.average = l.average.mul_f64(1.0 - LATENCY_WEIGHT) + took.mul_f64(LATENCY_WEIGHT);
        }
        l.samples += 1;
    }

    /// `provider`'s average answer time, once it answered.
    pub fn latency(&self, provider: &str) -> Option<Latency> {
        let all = self.latencies.lock().unwrap_or_else(|p| p.into_inner());
        all.get(provider).copied()
    }

    /// Everything known of `provider` now.
    pub fn snapshot(&self, provider: &str) -> Snapshot {
        let consecutive_failures = self
            .states()
            .get(provider)
            .map_or(0, |s| s.consecutive_failures);
        Snapshot {
            consecutive_failures,
            blocked: self.blocked(provider),
            latency: self.latency(provider),
        }
    }

    /// Keeps a cooldown of `wait` from now for the sharing task, and wakes it.
    fn learn(&self, provider: &str, reason: &'static str, wait: Duration) {
        let learnt = Learnt {
            provider: provider.to_string(),
            reason,
            until: SystemTime::now() + wait,
        };
        self.learnt
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(provider.to_string(), learnt);
        self.learnt_signal.notify_one();
    }

    /// The cooldowns learnt since the last call (each provider's newest).
    pub fn take_learnt(&self) -> Vec<Learnt> {
        let mut learnt = self.learnt.lock().unwrap_or_else(|p| p.into_inner());
        learnt.drain().map(|(_, l)| l).collect()
    }

    /// Waits until a cooldown is learnt (at once if one was since the last wait).
    pub async fn learnt_one(&self) {
        self.learnt_signal.notified().await;
    }

    /// Adopts a cooldown another process learnt: `provider` is skipped for
    /// `remaining` for `reason`, unless it already is for longer. An unknown
    /// reason is ignored.
    pub fn adopt(&self, provider: &str, reason: &str, remaining: Duration) {
        let reason = match reason {
            PROVIDER_RATE_LIMITED => PROVIDER_RATE_LIMITED,
            CIRCUIT_OPEN => CIRCUIT_OPEN,
            _ => return,
        };
        let until = Instant::now() + remaining;
        let mut states = self.states();
        let s = states.entry(provider.to_string()).or_default();
        if s.open_until.is_none_or(|open| open < until) {
            s.open_until = Some(until);
            s.reason = reason;
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
        {
            let mut states = self.states();
            let s = states.entry(provider.to_string()).or_default();
            s.open_until = Some(Instant::now() + wait);
            s.reason = PROVIDER_RATE_LIMITED;
        }
        self.learn(provider, PROVIDER_RATE_LIMITED, wait);
    }

    /// `provider` failed (5xx, unreachable, key refused): once the failures in a
    /// row reach the threshold its circuit opens for the cooldown.
    pub fn failed(&self, provider: &str) {
        let opened = {
            let mut states = self.states();
            let s = states.entry(provider.to_string()).or_default();
            s.consecutive_failures += 1;
            let opened = s.consecutive_failures >= self.circuit_failures;
            if opened {
                s.open_until = Some(Instant::now() + self.cooldown);
                s.reason = CIRCUIT_OPEN;
            }
            opened
        };
        if opened {
            self.learn(provider, CIRCUIT_OPEN, self.cooldown);
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
    }

    #[test]
    fn answer_times_are_averaged_with_the_newest_weighing_most() {
        let h = ProviderHealth::new(Duration::from_secs(30), 2);
        assert_eq!(h.latency("p"), None);
        h.answered_in("p", Duration::from_millis(1000));
        let l = h.latency("p").expect("one answer");
        assert_eq!((l.average, l.samples), (Duration::from_millis(1000), 1));
        h.answered_in("p", Duration::from_millis(2000));
        let l = h.latency("p").expect("two answers");
        assert_eq!(l.samples, 2);
        assert_eq!(l.average.as_millis(), 1300, "0.7 * 1000 + 0.3 * 2000");
        h.failed("p");
        let s = h.snapshot("p");
        assert_eq!(s.consecutive_failures, 1);
        assert!(s.blocked.is_none());
        assert_eq!(s.latency.map(|l| l.samples), Some(2));
        h.succeeded("p");
        assert_eq!(h.snapshot("p").consecutive_failures, 0);
        assert!(h.latency("p").is_some(), "a success keeps the average");
    }

    #[test]
    fn learnt_cooldowns_are_kept_for_sharing_and_adopted_ones_block() {
        let h = ProviderHealth::new(Duration::from_secs(30), 2);
        h.failed("p");
        assert!(h.take_learnt().is_empty(), "no cooldown yet");
        h.failed("p");
        h.rate_limited("q", Some(Duration::from_secs(5)));
        h.rate_limited("q", Some(Duration::from_secs(9)));
        let mut learnt = h.take_learnt();
        learnt.sort_by(|a, b| a.provider.cmp(&b.provider));
        assert_eq!(
            learnt
                .iter()
                .map(|l| (l.provider.as_str(), l.reason))
                .collect::<Vec<_>>(),
            [("p", CIRCUIT_OPEN), ("q", PROVIDER_RATE_LIMITED)]
        );
        let left = learnt[1]
            .until
            .duration_since(SystemTime::now())
            .expect("ahead");
        assert!(
            left > Duration::from_secs(5),
            "the newest per provider: {left:?}"
        );
        assert!(h.take_learnt().is_empty(), "taken once");

        h.adopt("r", PROVIDER_RATE_LIMITED, Duration::from_secs(20));
        assert_eq!(
            h.blocked("r").map(|b| b.reason),
            Some(PROVIDER_RATE_LIMITED)
        );
        h.adopt("r", CIRCUIT_OPEN, Duration::from_secs(1));
        assert_eq!(
            h.blocked("r").map(|b| b.reason),
            Some(PROVIDER_RATE_LIMITED),
            "a shorter cooldown does not shorten a longer one"
        );
        h.adopt("s", "something_else", Duration::from_secs(20));
        assert!(h.blocked("s").is_none());
        assert!(
            h.take_learnt().is_empty(),
            "adopted cooldowns are not shared again"
        );
        assert_eq!(retry_after_secs("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
