//! The local rate limit of `/v1`: one token bucket per process holding a
//! minute's worth of requests (`[gateway] rate_limit_rpm`), refilled steadily.
//! Every decision carries what the `X-RateLimit-*` headers report; with no limit
//! configured every request passes and the numbers are zero.

use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What the limiter decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateDecision {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// Requests per minute (`X-RateLimit-Limit`; 0 when off).
    pub limit: u32,
    /// Whole requests left in the bucket (`X-RateLimit-Remaining`).
    pub remaining: u32,
    /// Unix seconds when the bucket is full again (`X-RateLimit-Reset`).
    pub reset: u64,
    /// Seconds until one request fits (`Retry-After` of a refusal).
    pub retry_after: u64,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

/// A token bucket of `rpm` requests refilled at `rpm` per minute.
#[derive(Debug)]
pub struct RateLimiter {
    rpm: u32,
    bucket: Mutex<Bucket>,
}

impl RateLimiter {
    /// A limiter allowing `rpm` requests per minute (0: no limit).
    pub fn new(rpm: u32) -> Self {
        Self {
            rpm,
            bucket: Mutex::new(Bucket {
                tokens: rpm as f64,
                last: Instant::now(),
            }),
        }
    }

    /// Takes one request's token, if there is one.
    pub fn check(&self) -> RateDecision {
        if self.rpm == 0 {
            return RateDecision {
                allowed: true,
                limit: 0,
                remaining: 0,
                reset: 0,
                retry_after: 0,
            };
        }
        let capacity = self.rpm as f64;
        let per_sec = capacity / 60.0;
        let now = Instant::now();
        let mut b = self.bucket.lock().unwrap_or_else(|p| p.into_inner());
        b.tokens = (b.tokens + now.duration_since(b.last).as_secs_f64() * per_sec).min(capacity);
        b.last = now;
        let allowed = b.tokens >= 1.0;
        if allowed {
            b.tokens -= 1.0;
        }
        let full_in = Duration::from_secs_f64((capacity - b.tokens) / per_sec);
        let unix_now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        RateDecision {
            allowed,
            limit: self.rpm,
            remaining: b.tokens.floor() as u32,
            reset: (unix_now + full_in).as_secs_f64().ceil() as u64,
            retry_after: if allowed {
                0
            } else {
                ((1.0 - b.tokens) / per_sec).ceil().max(1.0) as u64
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_passes_its_size_then_refuses_with_a_retry_after() {
        let l = RateLimiter::new(2);
        let a = l.check();
        assert!(a.allowed);
        assert_eq!((a.limit, a.remaining), (2, 1));
        assert!(l.check().allowed);
        let refused = l.check();
        assert!(!refused.allowed);
        assert_eq!(refused.remaining, 0);
        assert!(refused.retry_after >= 1);
        assert!(refused.reset > 0);
    }

    #[test]
    fn no_limit_passes_everything_with_zero_numbers() {
        let d = RateLimiter::new(0).check();
        assert!(d.allowed);
        assert_eq!((d.limit, d.remaining, d.reset), (0, 0, 0));
    }
}
