//! Titles of the agent's tool calls as people read them.

use serde_json::Value;

/// A one-line title for a call of `tool` with `args` (`Edit notes.txt`).
pub fn tool_title(tool: &str, args: &Value) -> String {
    let arg = |key: &str| args[key].as_str().map(|s| s.lines().next().unwrap_or(""));
    let joined = || {
        args["args"].as_array().map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        })
    };
    let made = match tool {
        "read_file" => arg("path").map(|p| format!("Read {p}")),
        "list_dir" => Some(format!("List {}", arg("path").unwrap_or("."))),
        "file_write" => arg("path").map(|p| format!("Write {p}")),
        "file_edit" => arg("path").map(|p| format!("Edit {p}")),
        "shell_exec" => arg("command").map(|c| format!("Run {c}")),
        "git_exec" => joined().map(|a| format!("git {a}")),
        "http_request" => arg("url").map(|u| format!("Fetch {u}")),
        _ => None,
    };
    made.unwrap_or_else(|| tool.to_string())
}

#[cfg(test)]
mod tests {
    use super::tool_title;
    use serde_json::json;

    #[test]
    fn a_call_is_titled_by_what_it_touches() {
        assert_eq!(tool_title("read_file", &json!({"path": "n"})), "Read n");
        assert_eq!(tool_title("list_dir", &json!({})), "List .");
        assert_eq!(
            tool_title("shell_exec", &json!({"command": "ls\nrm"})),
            "Run ls"
        );
        assert_eq!(tool_title("mcp__fs__read", &json!({})), "mcp__fs__read");
    }
}
