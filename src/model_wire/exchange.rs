//! What the gateway hands a client for one request: the answer's body (complete
//! or streamed), who answered, and the report made once when the exchange ends.

use crate::model_wire::usage::TokenUsage;
use bytes::Bytes;
use futures::Stream;
use futures::future::BoxFuture;
use serde_json::Value;
use std::pin::Pin;

/// A streamed answer's bytes; an error cuts the client's response.
pub type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, std::io::Error>> + Send>>;

/// How an exchange ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExchangeOutcome {
    /// The provider's answer reached its end.
    Completed,
    /// The provider's answer broke off or was not understood.
    Failed(String),
    /// The client went away before the end; the upstream request was dropped.
    Cancelled,
}

/// What is reported when an exchange ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExchangeEnd {
    /// How it ended.
    pub outcome: ExchangeOutcome,
    /// The usage the provider reported, when it did.
    pub usage: Option<TokenUsage>,
    /// The assistant message as far as it came (OpenAI Chat Completions shape).
    pub answer: Value,
}

/// Called once when an exchange ends; the answer ends after its future.
pub type OnEnd = Box<dyn FnOnce(ExchangeEnd) -> BoxFuture<'static, ()> + Send>;

/// The answer for the client, in the client's format.
pub enum ExchangeBody {
    /// A complete JSON answer.
    Complete(Bytes),
    /// A server-sent event stream.
    Stream(ByteStream),
}

impl std::fmt::Debug for ExchangeBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Complete(b) => f.debug_tuple("Complete").field(&b.len()).finish(),
            Self::Stream(_) => f.write_str("Stream"),
        }
    }
}

/// A relayed answer.
#[derive(Debug)]
pub struct Exchange {
    /// The provider that answered.
    pub provider: String,
    /// The model as the provider names it.
    pub model: String,
    /// The answer.
    pub body: ExchangeBody,
}
