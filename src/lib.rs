//! Hecate: one local hub between editors, coding agents, tool servers and models.
//! The library holds every layer; the `hecate` binary only parses arguments and
//! hands the engine to a bridge.

pub mod a2a_wire;
pub mod adapters;
pub mod bridges;
pub mod cli;
pub mod config;
pub mod domain;
pub mod engine;
pub mod jsonl;
pub mod model_wire;
pub mod runtimes;
pub mod store;
pub mod telemetry;
