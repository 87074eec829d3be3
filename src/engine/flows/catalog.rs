//! The agents' flows, read from `flows/*.toml` in the config dir at start: the
//! ones that loaded, and for the others the error that names file and field.

use crate::domain::flow::{AgentFlow, FlowError, parse_flow};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Every flow file of a directory, by agent id (the file stem).
#[derive(Debug, Clone, Default)]
pub struct FlowCatalog {
    flows: BTreeMap<String, Arc<AgentFlow>>,
    errors: BTreeMap<String, FlowError>,
}

impl FlowCatalog {
    /// Reads every `*.toml` file of `dir` (none when it does not exist).
    pub fn load_dir(dir: &Path) -> Self {
        let mut catalog = Self::default();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return catalog;
        };
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        paths.sort();
        for path in paths {
            let Some(id) = path
                .file_stem()
                .and_then(|s| s.to_str())
                .map(str::to_string)
            else {
                continue;
            };
            let loaded = std::fs::read_to_string(&path)
                .map_err(|e| FlowError::new(&path, "file", format!("cannot read: {e}")))
                .and_then(|text| parse_flow(&id, &path, &text));
            catalog.insert(id, loaded);
        }
        catalog
    }

    /// Adds one agent's flow, or the error its file gave.
    pub fn insert(&mut self, id: String, flow: Result<AgentFlow, FlowError>) {
        match flow {
            Ok(f) => {
                self.errors.remove(&id);
                self.flows.insert(id, Arc::new(f));
            }
            Err(e) => {
                self.flows.remove(&id);
                self.errors.insert(id, e);
            }
        }
    }

    /// The flow of agent `id`: `Ok(None)` when no file defines it, `Err` with the
    /// load error when its file is broken.
    pub fn get(&self, id: &str) -> Result<Option<Arc<AgentFlow>>, &FlowError> {
        if let Some(e) = self.errors.get(id) {
            return Err(e);
        }
        Ok(self.flows.get(id).cloned())
    }

    /// The agents that loaded, by id.
    pub fn agents(&self) -> impl Iterator<Item = &AgentFlow> {
        self.flows.values().map(Arc::as_ref)
    }

    /// The files that did not load.
    pub fn errors(&self) -> impl Iterator<Item = &FlowError> {
        self.errors.values()
    }

    /// The files that did not load, with the agent id each would have defined.
    pub fn errors_by_agent(&self) -> impl Iterator<Item = (&str, &FlowError)> {
        self.errors.iter().map(|(id, e)| (id.as_str(), e))
    }
}
