//! `[store] max_conns` and `max_idle`: the size of a PostgreSQL store's
//! connection pool, with `HECATE_STORE_MAX_CONNS` and `HECATE_STORE_MAX_IDLE`
//! over the file, checked against their bounds.

use super::error::ConfigError;
use super::schema::StoreSection;
use crate::store::pool_settings::{MAX_CONNS_LIMIT, PoolSettings};
use std::collections::HashMap;
use std::path::Path;

/// The pool settings the environment and `[store]` name over the defaults (16
/// connections, every one allowed to idle). Errors name the variable or the key.
pub(super) fn store_pool(
    path: &Path,
    s: &StoreSection,
    env: &HashMap<String, String>,
) -> Result<PoolSettings, ConfigError> {
    let bad = |message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    };
    let value =
        |var: &str, key: &str, file: Option<u64>| -> Result<Option<(u64, String)>, ConfigError> {
            match env.get(var).map(|v| v.trim()).filter(|v| !v.is_empty()) {
                Some(v) => v
                    .parse::<u64>()
                    .map(|n| Some((n, var.to_string())))
                    .map_err(|_| bad(format!("{var}={v:?} is not a whole number of connections"))),
                None => Ok(file.map(|n| (n, format!("[store] {key}")))),
            }
        };
    let mut settings = PoolSettings::default();
    if let Some((n, name)) = value("HECATE_STORE_MAX_CONNS", "max_conns", s.max_conns)? {
        if !(1..=MAX_CONNS_LIMIT as u64).contains(&n) {
            return Err(bad(format!(
                "{name} = {n} is out of range (1 to {MAX_CONNS_LIMIT} connections)"
            )));
        }
        settings.max_conns = n as usize;
        settings.max_idle = n as usize;
    }
    if let Some((n, name)) = value("HECATE_STORE_MAX_IDLE", "max_idle", s.max_idle)? {
        if n > settings.max_conns as u64 {
            return Err(bad(format!(
                "{name} = {n} is more than max_conns ({}): at most max_conns connections are open",
                settings.max_conns
            )));
        }
        settings.max_idle = n as usize;
    }
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(max_conns: Option<u64>, max_idle: Option<u64>) -> StoreSection {
        StoreSection {
            max_conns,
            max_idle,
            ..StoreSection::default()
        }
    }

    #[test]
    fn defaults_keep_sixteen_connections_all_allowed_to_idle() {
        let s = store_pool(Path::new("/c.toml"), &section(None, None), &HashMap::new())
            .expect("defaults");
        assert_eq!(s, PoolSettings::default());
        assert_eq!((s.max_conns, s.max_idle), (16, 16));
    }

    #[test]
    fn the_file_sets_both_and_the_environment_wins() {
        let path = Path::new("/c.toml");
        let s = store_pool(path, &section(Some(40), Some(5)), &HashMap::new()).expect("file");
        assert_eq!((s.max_conns, s.max_idle), (40, 5));
        let s = store_pool(path, &section(Some(8), None), &HashMap::new()).expect("conns only");
        assert_eq!((s.max_conns, s.max_idle), (8, 8), "idle follows max_conns");
        let env = HashMap::from([
            ("HECATE_STORE_MAX_CONNS".to_string(), "4".to_string()),
            ("HECATE_STORE_MAX_IDLE".to_string(), " 1 ".to_string()),
        ]);
        let s = store_pool(path, &section(Some(40), Some(5)), &env).expect("env");
        assert_eq!((s.max_conns, s.max_idle), (4, 1));
    }

    #[test]
    fn out_of_range_values_name_the_key_or_the_variable() {
        let path = Path::new("/c.toml");
        for (sec, env, named) in [
            (section(Some(0), None), None, "[store] max_conns"),
            (section(Some(1001), None), None, "[store] max_conns"),
            (section(Some(4), Some(5)), None, "[store] max_idle"),
            (
                section(None, None),
                Some(("HECATE_STORE_MAX_CONNS", "many")),
                "HECATE_STORE_MAX_CONNS",
            ),
            (
                section(Some(2), None),
                Some(("HECATE_STORE_MAX_IDLE", "3")),
                "HECATE_STORE_MAX_IDLE",
            ),
        ] {
            let env: HashMap<String, String> = env
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into_iter()
                .collect();
            let e = store_pool(path, &sec, &env).expect_err(named);
            let msg = e.to_string();
            assert!(msg.contains(named) && msg.contains("/c.toml"), "{msg}");
        }
    }
}
