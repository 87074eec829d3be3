//! Output helpers: text or JSON on stdout, errors on stderr with stable exit codes.

use crate::domain::HecateError;
use serde::Serialize;
use std::io::Write;

/// Output format of listing and reading commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Human-readable text.
    Text,
    /// JSON in the HTTP API's resource shapes (`{"object": ..., "data": ...}`).
    Json,
}

/// Writes `{"object": object, "data": data}` as pretty JSON to stdout.
pub fn print_resource<T: Serialize>(object: &str, data: &T) -> anyhow::Result<()> {
    let v = serde_json::json!({ "object": object, "data": data });
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &v)?;
    writeln!(out)?;
    Ok(())
}

/// Writes text to stdout.
pub fn print_text(s: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Prints an error to stderr and returns its exit code: a classified Hecate error
/// exits with its type's code, anything else with 1.
pub fn report_error(e: &anyhow::Error) -> i32 {
    match e.downcast_ref::<HecateError>() {
        Some(h) => {
            eprintln!("error [{}]: {}", h.error_type, h.message);
            eprintln!("  {}", h.user_message);
            eprintln!("  next step: {}", h.operator_action);
            h.error_type.exit_code()
        }
        None => {
            eprintln!("error: {e:#}");
            1
        }
    }
}
