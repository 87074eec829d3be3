//! Session streams (`GET …/sessions/{id}/stream`): the shared frame vocabulary
//! (`frames`), the state the streams share (`state`), the tap that follows the
//! engine bus (`hub`), one rendering task per streamed session (`feed`) and the
//! SSE handler with its resume cursors (`sse`).

mod feed;
mod frames;
mod hub;
pub mod sse;
mod state;

pub use hub::StreamHub;
