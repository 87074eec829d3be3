//! Prefixed, time-ordered identifiers for every resource Hecate stores.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// The prefix every generated id of this kind starts with.
            pub const PREFIX: &'static str = $prefix;

            /// A fresh, time-ordered id.
            pub fn generate() -> Self {
                Self(format!("{}{}", $prefix, uuid::Uuid::now_v7().simple()))
            }

            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(s.to_string())
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                Self(s)
            }
        }
    };
}

id_type!(
    /// Identifies an Agent Chat session.
    SessionId,
    "agent_chat_"
);
id_type!(
    /// Identifies one message in a session's ordered stream.
    MessageId,
    "msg_"
);
id_type!(
    /// Identifies one turn (run) of a session.
    RunId,
    "run_"
);
id_type!(
    /// Identifies one upstream provider call.
    CallId,
    "call_"
);
id_type!(
    /// Identifies an approval request.
    ApprovalId,
    "appr_"
);
id_type!(
    /// Identifies a standing grant that pre-answers approvals.
    GrantId,
    "grant_"
);
id_type!(
    /// Correlates one inbound request across logs, errors and traces.
    RequestId,
    "req_"
);
id_type!(
    /// Names a contiguous run of turns with the same runtime snapshot.
    SegmentId,
    "seg_"
);

id_type!(
    /// Identifies a task of the durable task runtime.
    TaskId,
    "task_"
);

id_type!(
    /// Identifies one run (attempt) of a task.
    TaskRunId,
    "trun_"
);

id_type!(
    /// Identifies one step of a task run.
    TaskStepId,
    "tstep_"
);

id_type!(
    /// Identifies an artifact (output, patch) of a task run.
    TaskArtifactId,
    "tart_"
);

id_type!(
    /// Identifies an approval gate of a task run.
    TaskApprovalId,
    "tappr_"
);

id_type!(
    /// Identifies a gateway chat session created without a client-chosen id.
    GatewayConversationId,
    "chat_"
);

id_type!(
    /// Identifies a named API key of a shared hub.
    ApiKeyId,
    "key_"
);

/// The namespace every session lives in unless a caller names another one.
pub const DEFAULT_NAMESPACE: &str = "default";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_are_prefixed_unique_and_ordered() {
        let a = SessionId::generate();
        let b = SessionId::generate();
        assert!(a.as_str().starts_with("agent_chat_"));
        assert_ne!(a, b);
        assert!(a < b, "uuid v7 ids sort by creation time");
    }
}
