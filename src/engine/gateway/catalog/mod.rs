//! What the configured providers offer: their status, presets and local
//! discovery (`providers.rs`), the models' capabilities merged from the config,
//! stored overrides and probe results (`capabilities.rs`, cached by
//! `capability_cache.rs`), and the tool-calling probe (`probe.rs`).

pub mod capabilities;
pub(super) mod capability_cache;
pub mod probe;
pub mod providers;
