//! The A2A client: a remote agent's card fetched and cached (`card.rs`), and its
//! operations (send, stream, subscribe, get, cancel) over the JSON-RPC or the HTTP+JSON
//! binding its card offers (`client.rs`), in the ProtoJSON wire shape of A2A 1.0
//! (the shared `crate::a2a_wire`). The runtime for remote agents drives it.

mod card;
mod client;
mod error;

pub use card::{Binding, CardCache, Endpoint, RemoteCard};
pub use client::{A2aClient, EventStream};
pub use error::A2aClientError;

use std::time::Duration;

/// How long a card fetch may take unless configured.
pub const DEFAULT_CARD_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one request (or the gap between two streamed events) may take
/// unless configured.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// One remote agent as the configuration declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteAgentSpec {
    /// The catalog id (`[a2a_agents.ID]`), the `agent:ID` of targets.
    pub id: String,
    /// The display name, when the configuration gives one (else the card's).
    pub name: Option<String>,
    /// Where its agent card is served.
    pub card_url: String,
    /// The bearer token sent with every request but the card's, when set.
    pub token: Option<String>,
    /// How long a card fetch may take.
    pub card_timeout: Duration,
    /// How long a request, or the gap between two streamed events, may take.
    pub request_timeout: Duration,
}
