//! Approval retention settings: `[approvals] retention_days` and `retention_max`,
//! with environment overrides; 0 turns an axis off.

use super::error::ConfigError;
use super::schema::ApprovalsSection;
use crate::engine::grants::ApprovalRetention;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// Reads retention from the file section under `HECATE_APPROVALS_RETENTION_DAYS`
/// and `HECATE_APPROVALS_RETENTION_MAX`; a value that is not a whole number is an
/// error naming the variable.
pub(super) fn approval_retention(
    path: &Path,
    section: &ApprovalsSection,
    env: &HashMap<String, String>,
) -> Result<ApprovalRetention, ConfigError> {
    let read = |var: &str, file: Option<u64>| -> Result<Option<u64>, ConfigError> {
        match env.get(var) {
            Some(v) => v
                .trim()
                .parse::<u64>()
                .map(Some)
                .map_err(|_| ConfigError::Parse {
                    path: path.to_path_buf(),
                    message: format!("{var}={v:?} is not a whole number"),
                }),
            None => Ok(file),
        }
    };
    let mut retention = ApprovalRetention::default();
    match read("HECATE_APPROVALS_RETENTION_DAYS", section.retention_days)? {
        Some(0) => retention.max_age = None,
        Some(days) => {
            retention.max_age = Some(Duration::from_secs(days.saturating_mul(24 * 3600)));
        }
        None => {}
    }
    match read("HECATE_APPROVALS_RETENTION_MAX", section.retention_max)? {
        Some(0) => retention.max_count = None,
        Some(n) => retention.max_count = Some(usize::try_from(n).unwrap_or(usize::MAX)),
        None => {}
    }
    Ok(retention)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_wins_and_zero_turns_an_axis_off() {
        let path = Path::new("/c.toml");
        let file = ApprovalsSection {
            retention_days: Some(7),
            retention_max: Some(50),
            ..ApprovalsSection::default()
        };
        let r = approval_retention(path, &file, &HashMap::new()).expect("valid");
        assert_eq!(r.max_age, Some(Duration::from_secs(7 * 24 * 3600)));
        assert_eq!(r.max_count, Some(50));
        let mut env = HashMap::new();
        env.insert(
            "HECATE_APPROVALS_RETENTION_DAYS".to_string(),
            "0".to_string(),
        );
        let r = approval_retention(path, &file, &env).expect("valid");
        assert_eq!((r.max_age, r.max_count), (None, Some(50)));
        env.insert(
            "HECATE_APPROVALS_RETENTION_MAX".to_string(),
            "many".to_string(),
        );
        let e = approval_retention(path, &file, &env).expect_err("not a number");
        assert!(
            e.to_string().contains("HECATE_APPROVALS_RETENTION_MAX"),
            "{e}"
        );
        let d = approval_retention(path, &ApprovalsSection::default(), &HashMap::new())
            .expect("defaults");
        assert_eq!(d, ApprovalRetention::default());
    }
}
