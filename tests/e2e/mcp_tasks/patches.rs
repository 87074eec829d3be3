//! A task's patches from MCP: a `file` task's write is listed with its before
//! and after content (the HTTP API's patch objects), reverted (the file it
//! created is removed) and applied again, and a file changed by hand since is
//! left alone with a `conflict` tool error naming it.

use super::{tool_error, ungated};
use crate::support::common::workspace;
use crate::support::mcp::McpProc;
use serde_json::json;

#[test]
fn a_patch_is_listed_reverted_and_applied_again_and_a_changed_file_is_a_conflict() {
    let home = ungated();
    let (_dir, ws) = workspace();
    let mut mcp = McpProc::start(&home, json!({}));
    let created = mcp.call_ok(
        "create_task",
        json!({"execution_kind": "file", "file_path": "notes.txt", "file_content": "hello\n",
               "workspace_mode": "in_place", "working_directory": ws}),
    );
    let task = created["structuredContent"]["task"]["id"].clone();
    let ran = mcp.call_ok("start_task", json!({"task_id": task, "wait": true}));
    let run = ran["structuredContent"]["run"].clone();
    assert_eq!(run["status"], "completed", "{ran}");
    let file = ws.join("notes.txt");
    assert_eq!(std::fs::read_to_string(&file).expect("written"), "hello\n");

    let all = mcp.call_ok("list_task_patches", json!({"task_id": task}));
    let patches = all["structuredContent"]["patches"].clone();
    assert_eq!(patches.as_array().map(Vec::len), Some(1), "{all}");
    let patch = &patches[0];
    assert_eq!(patch["path"], "notes.txt");
    assert_eq!(patch["status"], "applied");
    assert_eq!(patch["before"], json!(null), "the file did not exist");
    assert_eq!(patch["after"], "hello\n");
    assert_eq!(patch["task_id"], task);
    assert_eq!(patch["run_id"], run["id"]);
    let of_run = mcp.call_ok(
        "list_task_patches",
        json!({"task_id": task, "run_id": run["id"]}),
    );
    assert_eq!(of_run["structuredContent"]["patches"], patches);

    let ids = json!({"task_id": task, "run_id": run["id"], "patch_id": patch["id"]});
    let reverted = mcp.call_ok("revert_task_patch", ids.clone());
    assert_eq!(reverted["structuredContent"]["patch"]["status"], "reverted");
    assert!(!file.exists(), "reverting a created file removes it");
    let applied = mcp.call_ok("apply_task_patch", ids.clone());
    assert_eq!(applied["structuredContent"]["patch"]["status"], "applied");
    assert_eq!(std::fs::read_to_string(&file).expect("again"), "hello\n");
    let twice = tool_error(&mcp.call("apply_task_patch", ids.clone()));
    assert_eq!(twice["type"], "conflict", "already applied: {twice}");

    // Changed by hand since: reverting would lose the change, so it is refused.
    std::fs::write(&file, "edited by hand\n").expect("edit");
    let e = tool_error(&mcp.call("revert_task_patch", ids.clone()));
    assert_eq!(e["type"], "conflict", "{e}");
    assert_eq!(e["path"], "notes.txt", "{e}");
    assert_eq!(
        std::fs::read_to_string(&file).expect("kept"),
        "edited by hand\n"
    );
    let listed = mcp.call_ok("list_task_patches", json!({"task_id": task}));
    assert_eq!(
        listed["structuredContent"]["patches"][0]["status"],
        "applied"
    );

    let unknown = json!({"task_id": task, "run_id": run["id"], "patch_id": "tart_nope"});
    for tool in ["apply_task_patch", "revert_task_patch"] {
        let e = tool_error(&mcp.call(tool, unknown.clone()));
        assert_eq!(e["type"], "not_found", "{tool}: {e}");
    }
}
