//! The stored capability records, cached for a short time so every request does
//! not read them again.

use crate::domain::capability::CapabilityRecord;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long stored records are trusted before they are read again (another
/// replica's override shows within this time).
const CACHE_TTL: Duration = Duration::from_secs(2);

pub(super) type Records = HashMap<(String, String), Vec<CapabilityRecord>>;

/// The stored records, read at most every [`CACHE_TTL`].
#[derive(Debug, Default)]
pub struct CapabilityCache {
    loaded: Mutex<Option<(Instant, std::sync::Arc<Records>)>>,
}

impl CapabilityCache {
    pub(super) fn fresh(&self) -> Option<std::sync::Arc<Records>> {
        let loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        loaded
            .as_ref()
            .filter(|(at, _)| at.elapsed() < CACHE_TTL)
            .map(|(_, r)| r.clone())
    }

    pub(super) fn store(&self, records: Vec<CapabilityRecord>) -> std::sync::Arc<Records> {
        let mut map: Records = HashMap::new();
        for r in records {
            map.entry((r.provider.clone(), r.model.clone()))
                .or_default()
                .push(r);
        }
        let map = std::sync::Arc::new(map);
        *self.loaded.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((Instant::now(), map.clone()));
        map
    }

    pub(super) fn forget(&self) {
        *self.loaded.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}
