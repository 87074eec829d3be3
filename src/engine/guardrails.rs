//! Per-session guardrails checked before a turn starts.

use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::session::Session;
use crate::domain::time::parse_millis;

/// Checks turn, duration and idle limits of `session` at time `now_ms`.
pub fn check(session: &Session, now_ms: i64) -> Result<()> {
    let g = session.guardrails;
    if let Some(max) = g.max_turns
        && session.turns_used >= max
    {
        return Err(HecateError::new(
            ErrorType::SessionLimitExceeded,
            format!("session used {} of {max} turns", session.turns_used),
        )
        .with_detail("turns_used", session.turns_used)
        .with_detail("max_turns_per_session", max));
    }
    if let (Some(limit), Some(started)) = (
        g.max_duration_ms,
        session.session_started_at.as_deref().and_then(parse_millis),
    ) && now_ms - started > limit as i64
    {
        return Err(HecateError::new(
            ErrorType::SessionDurationLimitExceeded,
            format!(
                "session started {} ms ago; limit is {limit} ms",
                now_ms - started
            ),
        )
        .with_detail("limit_ms", limit));
    }
    if let (Some(limit), true, Some(last)) = (
        g.idle_timeout_ms,
        session.turns_used > 0,
        parse_millis(&session.last_activity_at),
    ) && now_ms - last > limit as i64
    {
        return Err(HecateError::new(
            ErrorType::SessionIdleTimeout,
            format!("session idle for {} ms; limit is {limit} ms", now_ms - last),
        )
        .with_detail("limit_ms", limit));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::SessionId;
    use crate::domain::session::{Guardrails, RuntimeKind, SessionStatus};
    use crate::domain::time::format_rfc3339;

    fn session(g: Guardrails, turns: u32, started_ms_ago: i64, idle_ms: i64, now: i64) -> Session {
        let at = |ms: i64| {
            format_rfc3339(
                time::OffsetDateTime::from_unix_timestamp_nanos((ms as i128) * 1_000_000)
                    .expect("valid"),
            )
        };
        Session {
            namespace: "n".into(),
            id: SessionId::from("s"),
            title: String::new(),
            runtime_kind: RuntimeKind::Model,
            provider: None,
            model: None,
            adapter_id: None,
            workspace: None,
            system_prompt: None,
            status: SessionStatus::Completed,
            native_session_id: None,
            guardrails: g,
            history: None,
            memory: Default::default(),
            turns_used: turns,
            session_started_at: Some(at(now - started_ms_ago)),
            last_activity_at: at(now - idle_ms),
            created_at: at(now),
            updated_at: at(now),
        }
    }

    #[test]
    fn each_limit_has_its_own_stable_error() {
        let now = crate::domain::time::now_millis();
        let turns = Guardrails {
            max_turns: Some(2),
            ..Default::default()
        };
        assert!(check(&session(turns, 1, 0, 0, now), now).is_ok());
        let e = check(&session(turns, 2, 0, 0, now), now).expect_err("limit");
        assert_eq!(e.error_type, ErrorType::SessionLimitExceeded);
        assert_eq!(e.details["turns_used"], 2);
        let dur = Guardrails {
            max_duration_ms: Some(1000),
            ..Default::default()
        };
        let e = check(&session(dur, 1, 5000, 0, now), now).expect_err("duration");
        assert_eq!(e.error_type, ErrorType::SessionDurationLimitExceeded);
        assert_eq!(e.details["limit_ms"], 1000);
        let idle = Guardrails {
            idle_timeout_ms: Some(1000),
            ..Default::default()
        };
        let e = check(&session(idle, 1, 0, 5000, now), now).expect_err("idle");
        assert_eq!(e.error_type, ErrorType::SessionIdleTimeout);
        assert!(
            check(&session(idle, 0, 0, 5000, now), now).is_ok(),
            "no turn yet"
        );
    }
}
