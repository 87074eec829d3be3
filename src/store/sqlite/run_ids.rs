//! Run ids bound as one SQL parameter: a JSON array that `json_each` opens, so a
//! query over any number of runs keeps one prepared statement.

use crate::domain::ids::RunId;

/// `ids` as a JSON array of strings.
pub(super) fn json_ids(ids: &[RunId]) -> String {
    serde_json::Value::from(ids.iter().map(RunId::as_str).collect::<Vec<_>>()).to_string()
}
