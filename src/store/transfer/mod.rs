//! `hecate store copy`: every table of one store into another, either backend on
//! either side, as a raw table-level copy below the domain traits. Rows are read
//! in one snapshot of the source, in dependency order, and written in one
//! transaction on the target; both sides are checksummed (row count and SHA-256
//! per table) and the target commits only when every sum matches, so a failed
//! or unfaithful copy leaves it as empty as it was.

pub mod catalog;
mod checks;
mod postgres_side;
pub mod rows;
mod run;
mod sqlite_side;

pub use run::{Endpoint, Report, TableReport, copy};
