//! The model gateway's outbound half: the OpenAI Chat Completions and Anthropic
//! Messages wire formats as JSON, pure translation between them (requests,
//! responses, streamed events, stop reasons, usage), the OpenAI Responses API
//! as a client format (translated through Chat Completions), and the upstream call that
//! forwards a request to a configured provider and relays its answer, faithfully
//! when both sides speak the same format and translated when they do not.

mod answer;
mod error;
mod format;
pub mod models;
mod reasons;
mod relay;
mod request_facts;
mod responses;
mod responses_answer;
mod responses_request;
mod sse_in;
mod sse_out;
mod stream_to_anthropic;
mod stream_to_openai;
mod to_anthropic_request;
mod to_openai_request;
mod transcript;
mod upstream;
mod usage;

pub use answer::AnswerTap;
pub use error::TranslateError;
pub use format::WireFormat;
pub use relay::{
    ByteStream, Exchange, ExchangeBody, ExchangeEnd, ExchangeOutcome, OnEnd, RelayMode, relay,
};
pub use request_facts::RequestFacts;
pub use responses::{anthropic_response_to_openai, openai_response_to_anthropic};
pub use responses_answer::{ChatToResponses, chat_completion_to_response};
pub use responses_request::responses_request_to_openai;
pub use stream_to_anthropic::OpenAiToAnthropic;
pub use stream_to_openai::AnthropicToOpenAi;
pub use to_anthropic_request::openai_request_to_anthropic;
pub use to_openai_request::anthropic_request_to_openai;
pub use transcript::{Fingerprint, apply_system_prompt, is_system_prompt, request_messages};
pub use upstream::{Upstream, prepare_body};
pub use usage::{TokenUsage, UsageTap};
