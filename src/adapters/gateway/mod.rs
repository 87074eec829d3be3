//! The model gateway's outbound half: the upstream call that sends a prepared
//! body to a configured provider with its credentials (`upstream.rs`), and the
//! relay of its answer to the client (`relay.rs`), passed through when both
//! sides speak one format and translated when they do not. The formats
//! themselves and their translation are `crate::model_wire`'s.

mod relay;
mod upstream;

pub use relay::{RelayMode, UpstreamAnswer, relay};
pub use upstream::{Upstream, wire_format};
