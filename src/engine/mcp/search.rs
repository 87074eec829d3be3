//! Search over the aggregated upstream catalog (`search_tools`), and how the
//! hub lists tools (`[mcp] tool_loading`): every tool, or only Hecate's own
//! with the search, so a catalog of hundreds of tools does not fill a model's
//! context. A pure ranking over the catalog; nothing here calls an upstream.

use super::types::UpstreamTool;
use serde_json::Value;

/// How the hub's `tools/list` presents upstream tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolLoading {
    /// Every upstream tool is listed (the default).
    #[default]
    All,
    /// Only Hecate's own tools are listed, `search_tools` among them; upstream
    /// tools are found by searching and called by the names it answers.
    Search,
}

impl ToolLoading {
    /// The mode a config value names: `all` or `search`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "all" => Some(Self::All),
            "search" => Some(Self::Search),
            _ => None,
        }
    }
}

/// The lowercase words of `text` (letters and digits; `_`, `-`, `.` and
/// spaces split them).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// How well `tool` matches every term of `terms`: `None` when a term is found
/// nowhere; otherwise the sum, per term, of its best place (a whole word of the
/// tool's name 8, part of the name 5, the server 3, the description 2).
fn score(tool: &UpstreamTool, terms: &[String]) -> Option<u32> {
    let name = tool.tool.to_lowercase();
    let name_words = words(&tool.tool);
    let server = tool.server.to_lowercase();
    let description = tool
        .definition
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_lowercase();
    terms.iter().try_fold(0, |total, term| {
        let best = if name_words.iter().any(|w| w == term) {
            8
        } else if name.contains(term.as_str()) {
            5
        } else if server.contains(term.as_str()) {
            3
        } else if description.contains(term.as_str()) {
            2
        } else {
            return None;
        };
        Some(total + best)
    })
}

/// The tools of `catalog` that match every word of `query` (optionally only
/// those of `server`), best first (then by exposed name), at most `limit`;
/// also how many matched in all.
pub fn search<'a>(
    catalog: &'a [UpstreamTool],
    query: &str,
    server: Option<&str>,
    limit: usize,
) -> (Vec<&'a UpstreamTool>, usize) {
    let terms = words(query);
    let mut found: Vec<(u32, &UpstreamTool)> = catalog
        .iter()
        .filter(|t| server.is_none_or(|s| t.server == s))
        .filter_map(|t| score(t, &terms).map(|s| (s, t)))
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.exposed.cmp(&b.1.exposed)));
    let total = found.len();
    (
        found.into_iter().take(limit).map(|(_, t)| t).collect(),
        total,
    )
}

/// Whether `query` holds a word to search for.
pub fn searchable(query: &str) -> bool {
    !words(query).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mcp::types::ToolPolicy;
    use serde_json::json;
    use std::sync::Arc;

    fn tool(server: &str, name: &str, description: &str) -> UpstreamTool {
        UpstreamTool {
            server: server.into(),
            tool: name.into(),
            exposed: format!("{server}__{name}"),
            policy: ToolPolicy::Auto,
            definition: Arc::new(json!({"name": format!("{server}__{name}"),
                                        "description": description})),
        }
    }

    fn names(found: &[&UpstreamTool]) -> Vec<String> {
        found.iter().map(|t| t.exposed.clone()).collect()
    }

    #[test]
    fn every_word_must_match_and_names_rank_above_descriptions() {
        let catalog = [
            tool("github", "create_issue", "Open an issue in a repository"),
            tool("linear", "issue_search", "Find issues"),
            tool("fs", "read_file", "Read a file; mentions issue in passing"),
            tool("fs", "write_file", "Write a file"),
        ];
        let (found, total) = search(&catalog, "issue", None, 10);
        assert_eq!(total, 3);
        assert_eq!(
            names(&found),
            [
                "github__create_issue",
                "linear__issue_search",
                "fs__read_file"
            ]
        );
        let (found, _) = search(&catalog, "Create ISSUE", None, 10);
        assert_eq!(
            names(&found),
            ["github__create_issue"],
            "both words, any case"
        );
        let (found, _) = search(&catalog, "file", Some("fs"), 1);
        assert_eq!(found.len(), 1, "the limit holds");
        let (found, total) = search(&catalog, "file", Some("github"), 10);
        assert_eq!((found.len(), total), (0, 0), "only the named server");
        let (found, _) = search(&catalog, "linear", None, 10);
        assert_eq!(
            names(&found),
            ["linear__issue_search"],
            "the server's name counts"
        );
    }

    #[test]
    fn a_query_without_words_is_not_searchable_and_modes_parse() {
        assert!(!searchable("  -_. "));
        assert!(searchable("git"));
        assert_eq!(ToolLoading::parse("search"), Some(ToolLoading::Search));
        assert_eq!(ToolLoading::parse("all"), Some(ToolLoading::All));
        assert_eq!(ToolLoading::parse("lazy"), None);
    }
}
