//! Today's spend per namespace as the gateway caches it between reads of the
//! store.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a spend read from the store is reused.
const REFRESH: Duration = Duration::from_secs(2);

#[derive(Debug, Clone)]
struct Spend {
    since: String,
    spent: i64,
    read_at: Instant,
}

/// Today's spend per namespace.
#[derive(Debug, Default)]
pub struct SpendTracker {
    by_namespace: Mutex<HashMap<String, Spend>>,
}

impl SpendTracker {
    pub(super) fn cached(&self, namespace: &str, since: &str) -> Option<i64> {
        let map = self.by_namespace.lock().unwrap_or_else(|p| p.into_inner());
        map.get(namespace)
            .filter(|s| s.since == since && s.read_at.elapsed() < REFRESH)
            .map(|s| s.spent)
    }

    pub(super) fn set(&self, namespace: &str, since: String, spent: i64) {
        let mut map = self.by_namespace.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(
            namespace.to_string(),
            Spend {
                since,
                spent,
                read_at: Instant::now(),
            },
        );
    }

    /// Adds this process's exchange of `cost` to the cached figure.
    pub fn add(&self, namespace: &str, cost: i64) {
        let mut map = self.by_namespace.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = map.get_mut(namespace) {
            s.spent += cost;
        }
    }
}
