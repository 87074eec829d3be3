//! The MCP call audit log: its columns and how a row becomes a record.

use super::StoredRow;
use crate::store::McpCallRecord;

/// The columns a row must start with for its decoder, in the order it reads them.
pub(crate) const AUDIT_COLUMNS: &str = "id, namespace, server, tool, exposed_name, client, policy, decision, \
     approval_id, outcome, error_type, error_message, argument_keys_json, argument_bytes, \
     started_at, duration_ms";

/// An MCP call record from a row that starts with its columns.
pub(crate) fn record<R: StoredRow>(r: &R) -> Result<McpCallRecord, R::Error> {
    let keys: String = r.col(12)?;
    Ok(McpCallRecord {
        id: r.col(0)?,
        namespace: r.col(1)?,
        server: r.col(2)?,
        tool: r.col(3)?,
        exposed_name: r.col(4)?,
        client: r.col(5)?,
        policy: r.col(6)?,
        decision: r.col(7)?,
        approval_id: r.col(8)?,
        outcome: r.col(9)?,
        error_type: r.col(10)?,
        error_message: r.col(11)?,
        argument_keys: serde_json::from_str(&keys).unwrap_or_default(),
        argument_bytes: r.col::<i64>(13)?.max(0) as u64,
        started_at: r.col(14)?,
        duration_ms: r.col(15)?,
    })
}
