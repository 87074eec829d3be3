//! The model APIs' wire formats as JSON, depending on nothing else of Hecate's:
//! OpenAI Chat Completions and Anthropic Messages on either side, the OpenAI
//! Responses API on the client side, and pure translation between them —
//! requests (`requests/`), complete and streamed answers (`answers/`), stop
//! reasons and tool choice (`reasons.rs`), usage (`usage.rs`), server-sent
//! event frames in and out (`sse_in.rs`, `sse_out.rs`) — plus what one
//! exchange hands a client (`exchange.rs`) and Hecate's two extension
//! fields of a recorded message (`extensions.rs`). The gateway's relay, the engine and
//! the `/v1` bridge all use it, as the ACP and MCP faces use `jsonl.rs`.

pub mod answers;
pub mod error;
pub mod exchange;
pub mod extensions;
pub mod format;
pub mod reasons;
pub mod requests;
pub mod sse_in;
pub mod sse_out;
pub mod usage;

pub use error::TranslateError;
pub use exchange::{ByteStream, Exchange, ExchangeBody, ExchangeEnd, ExchangeOutcome, OnEnd};
pub use format::WireFormat;
pub use requests::request_facts::RequestFacts;
pub use usage::TokenUsage;
