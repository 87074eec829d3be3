//! Keeping a PostgreSQL store's pool within its settings: at most `max_idle`
//! connections stay open unused; the surplus is closed by a sweep every second,
//! oldest idle first.

use crate::store::pool_settings::PoolSettings;
use deadpool_postgres::Pool;
use std::time::Duration;

/// How often surplus idle connections are closed.
const IDLE_SWEEP: Duration = Duration::from_secs(1);

/// Closes the oldest idle connections past `max_idle`, every [`IDLE_SWEEP`],
/// for as long as the pool lives; nothing to do when every connection may idle.
pub(super) fn trim_idle(pool: &Pool, settings: PoolSettings) {
    if settings.max_idle >= settings.max_conns {
        return;
    }
    let weak = pool.weak();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(IDLE_SWEEP).await;
            let Some(pool) = weak.upgrade() else { return };
            close_surplus(&pool, settings.max_idle);
        }
    });
}

/// Closes idle connections of `pool` past `max_idle`, oldest first (a returned
/// connection goes to the back of the queue).
fn close_surplus(pool: &Pool, max_idle: usize) {
    let mut surplus = pool.status().available.saturating_sub(max_idle);
    if surplus == 0 {
        return;
    }
    pool.retain(|_, _| {
        if surplus > 0 {
            surplus -= 1;
            false
        } else {
            true
        }
    });
}
