//! Helpers shared by the two test binaries, `tests/e2e` (hermetic: only the
//! `hecate` and `hecate-fixtures` binaries) and `tests/interop` (third-party
//! peers from `scripts/test-deps`). Each binary declares this tree once.
//!
//! Each binary uses a different subset (the real-client helpers only in
//! `interop`, the ACP adapter and editor helpers only in `e2e`), so unused
//! helpers are allowed here, in this module tree only.
#![allow(dead_code)]

pub mod acp_adapter;
pub mod acp_clients;
pub mod acp_editor;
pub mod acp_process;
pub mod agent;
pub mod child;
pub mod common;
pub mod http;
pub mod mcp;
pub mod otlp;
pub mod postgres;
