//! The `[flows]` settings the engine serves client-hosted conversations with.

use super::catalog::FlowCatalog;
use super::identity::ChatAccess;

/// The flows and the identities the chat operations know.
#[derive(Debug, Clone, Default)]
pub struct FlowSettings {
    /// The agents' flows.
    pub catalog: FlowCatalog,
    /// Configured apps and users.
    pub access: ChatAccess,
}
