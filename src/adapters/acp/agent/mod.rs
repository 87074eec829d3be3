//! Which agent and how it starts: the adapter catalog (built-in and user
//! manifests), the launcher (PATH or the managed npm package), the agent's child
//! process on `adapters/process`, and the probe that starts one and reports how far
//! it got.

pub mod auth;
pub mod catalog;
pub mod install;
pub mod install_error;
pub mod launcher;
pub mod probe;
pub mod process;
pub mod staging;
