//! Requests: what a request asks (`request_facts.rs`), Chat Completions ⇄
//! Messages (`to_anthropic_request.rs`, `to_openai_request.rs`), a Responses
//! request as Chat Completions (`responses_request.rs`), the body a provider is
//! sent (`prepare.rs`), and a request's messages in the recorded shape with the
//! fingerprint a resent history is matched by (`transcript.rs`).

pub mod prepare;
pub mod request_facts;
pub mod responses_request;
pub mod to_anthropic_request;
pub mod to_openai_request;
pub mod transcript;

#[cfg(test)]
pub(crate) mod fixtures;
