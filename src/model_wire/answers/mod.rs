//! Answers: complete answers across formats (`responses.rs`), streams as state
//! machines (`stream_to_anthropic.rs`, `stream_to_openai.rs`), a Chat
//! Completions answer or stream as the Responses API's (`responses_answer.rs`),
//! and the assistant message assembled from a stream (`answer.rs`).

pub mod answer;
pub mod responses;
pub mod responses_answer;
pub mod stream_to_anthropic;
pub mod stream_to_openai;
