//! Client-hosted conversations: the caller runs the model; the engine loads the
//! agents' flows, compiles system messages and the `respond` schema, stores
//! history and extracted data, routes stages and asks for summaries.

pub mod catalog;
pub mod compile;
pub mod identity;
mod ops;
mod overview;
mod settings;

pub use catalog::FlowCatalog;
pub use compile::HistoryEntry;
pub use identity::{AppCredential, ChatAccess, ChatCredentials, UserCredential};
pub use ops::{
    ChatProcessed, ChatStarted, ChatTurn, ChatView, MAX_CHAT_TEXT_BYTES, StartChat,
    SummarizationNeeded,
};
pub use settings::FlowSettings;
