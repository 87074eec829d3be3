//! Reading one flow file: TOML into an [`AgentFlow`], then the checks of
//! `validate.rs`; every error names the file and the field.

use super::error::FlowError;
use super::model::AgentFlow;
use super::validate::validate;
use std::path::Path;

/// Parses and validates the flow text of agent `id` read from `file`.
pub fn parse_flow(id: &str, file: &Path, text: &str) -> Result<AgentFlow, FlowError> {
    let mut flow: AgentFlow = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
        let field = match line {
            Some(n) => format!("line {n}"),
            None => "file".to_string(),
        };
        FlowError::new(file, field, e.message().to_string())
    })?;
    flow.id = id.to_string();
    validate(&flow, file)?;
    Ok(flow)
}
