//! The operator console in a real headless Chromium (Debian's package, driven by
//! playwright-core; both installed by `scripts/test-deps/console.sh`) against the
//! real `hecate serve`, the fixture model and the fixture ACP agent. The browser
//! side is `tests/console/console.mjs`: it works only through the page (the API
//! only to set up and to check), fails on any unexpected browser console error,
//! saves a screenshot of each page and prints the loopback figures quoted in
//! `docs/benchmarks.md`.

use crate::support::common::{Home, ModelServer, git_workspace, permission_turn, test_deps};
use crate::support::http::{Served, serve, serve_command};
use serde_json::json;
use std::path::PathBuf;

/// The fixture model: a slow answer to stream, markup to escape, and an echo-like
/// short answer for everything else.
fn model_script() -> serde_json::Value {
    let words: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
    json!([
        {"match": {"contains": "slow"}, "repeat": true,
         "text": format!("Slow **answer**: {}", words.join(" ")), "chunk_delay_ms": 60},
        {"match": {"contains": "markup"}, "repeat": true,
         "text": "Here: <img src=x onerror=\"window.__xss=1\"> <script>window.__xss=2</script> [link](javascript:window.__xss=3) done"},
        {"repeat": true, "text": "Short answer."}
    ])
}

/// The fixture agent: asks before writing `b.txt` on every prompt saying "write".
fn agent_script() -> String {
    let write_b = json!([{"fs_write": {"path": "b.txt", "content": "new file\n"}}]);
    json!({"turns": [permission_turn("Write b.txt", write_b)]}).to_string()
}

/// `hecate serve` in `home`: the binary `HECATE_CONSOLE_SERVE_BIN` names when set
/// (the release build, for the figures in docs/console.md), else the test build.
fn serve_console(home: &Home) -> Served {
    let Some(bin) = std::env::var_os("HECATE_CONSOLE_SERVE_BIN") else {
        return serve(home);
    };
    let mut cmd = std::process::Command::new(bin);
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .env_remove("HECATE_NAMESPACE")
        .env_remove("HECATE_STORE_URL")
        .stdin(std::process::Stdio::null());
    for (k, v) in &home.env {
        cmd.env(k, v);
    }
    serve_command(cmd)
}

#[test]
fn the_console_works_in_a_real_browser() {
    let deps = test_deps("console", "Chromium and playwright-core");
    let playwright = deps.join("node_modules/playwright-core/index.mjs");
    let model = ModelServer::start(Some(model_script()));

    let mut home = Home::with_openai(&model);
    // A provider that cannot answer: its model must be blocked before it is sent.
    home.set("PROVIDER_DEAD_KIND", "openai");
    home.set("PROVIDER_DEAD_BASE_URL", "http://127.0.0.1:9/v1");
    home.set("PROVIDER_DEAD_MODELS", "ghost-model");
    // A provider the operator turned off: listed, never routed to.
    home.set("PROVIDER_OFF_KIND", "openai");
    home.set("PROVIDER_OFF_BASE_URL", &format!("{}/v1", model.base));
    home.set("PROVIDER_OFF_MODELS", "off-model");
    home.set("PROVIDER_OFF_ENABLED", "false");
    // For the Traces page: a bare `failover-model` is served first by `down`
    // (providers are tried in name order), which cannot answer, then by `spare`
    // (the fixture model); `priced-model` is only on `spare`, priced, to seed
    // traces with costs. The chats' `fix/fixture-model` stays as it was.
    home.set("PROVIDER_DOWN_KIND", "openai");
    home.set("PROVIDER_DOWN_BASE_URL", "http://127.0.0.1:9/v1");
    home.set("PROVIDER_DOWN_MODELS", "failover-model");
    home.set("PROVIDER_SPARE_KIND", "openai");
    home.set("PROVIDER_SPARE_BASE_URL", &format!("{}/v1", model.base));
    home.set("PROVIDER_SPARE_MODELS", "failover-model,priced-model");
    home.add_scripted_agent(&agent_script(), &[], "");
    // For the Agents page (tests/console/agents.mjs): `packed`, not installed, whose
    // package is the tarball that scenario packs into target/console-agents (installed
    // into the home's cache), `unwell`, which dies at start with a line on stderr, and
    // a manifest that does not load.
    let packed = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/console-agents/hecate-fixture-acp-1.2.3.tgz");
    std::fs::write(
        home.path("adapters/packed.toml"),
        format!(
            "id = \"packed\"\nname = \"Packed fixture\"\ncommand = \"hecate-no-such-packed-acp\"\nbin = \"fixture-acp\"\npackage = {:?}\n",
            packed.display().to_string()
        ),
    )
    .expect("packed manifest");
    std::fs::write(home.path("adapters/broken.toml"), "id = \"broken\"\n")
        .expect("broken manifest");
    std::fs::write(
        home.path("adapters/unwell.toml"),
        "id = \"unwell\"\nname = \"Unwell fixture\"\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"echo 'unwell: no config file' >&2; exit 3\"]\n",
    )
    .expect("unwell manifest");
    home.set("XDG_CACHE_HOME", &home.path("cache").display().to_string());
    home.set(
        "npm_config_cache",
        &home.path("npm-cache").display().to_string(),
    );
    home.set("npm_config_update_notifier", "false");
    // An upstream MCP server for the MCP page, and the traced models' prices.
    home.write_config(&crate::support::mcp::fixture_upstream(
        "fx",
        &[],
        "\n[pricing.\"spare/priced-model\"]\ninput_usd_per_mtok = 3.0\noutput_usd_per_mtok = 15.0\n\n\
         [pricing.\"spare/failover-model\"]\ninput_usd_per_mtok = 1.0\noutput_usd_per_mtok = 2.0\n",
    ));
    let open = serve_console(&home);

    let mut guarded_home = Home::with_openai(&model);
    guarded_home.set("HECATE_TOKEN", "console-secret");
    // Approvals answered without asking: the page must warn. `team` and
    // `vault`, HTTP upstreams that are not running, keep a stored OAuth sign-in
    // for the MCP page, `vault`'s one it cannot read (tests/console/keys.mjs).
    guarded_home.write_config(
        "[approvals]\nmode = \"auto\"\n\n[mcp_servers.team]\nurl = \"http://127.0.0.1:9/mcp\"\n\n\
         [mcp_servers.vault]\nurl = \"http://127.0.0.1:9/vault\"\n",
    );
    let guarded = serve_console(&guarded_home);
    crate::support::mcp::store_sign_in(&guarded_home, "team");
    crate::support::mcp::store_unreadable_sign_in(&guarded_home, "vault");

    // Recall (the fixture's embeddings) and client-hosted flow agents, one of
    // them broken, for the Memory page.
    let memory_home = Home::with_openai(&model);
    let flows = memory_home.path("flows");
    std::fs::create_dir_all(&flows).expect("flows dir");
    std::fs::write(
        flows.join("support.toml"),
        include_str!("../../docs/examples/flows/support.toml"),
    )
    .expect("flow");
    std::fs::write(flows.join("broken.toml"), "welcome = \"nowhere\"\n").expect("broken flow");
    memory_home.write_config(
        "[memory]\nembeddings = \"fix/hash-embed\"\ndimensions = 64\nbatch_size = 4\nbatch_delay_ms = 20\n",
    );
    let memory = serve_console(&memory_home);

    let ws = git_workspace();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let shots = root.join("target/console-shots");
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    let out = std::process::Command::new("node")
        .arg(root.join("tests/console/console.mjs"))
        .env("PLAYWRIGHT", &playwright)
        .env("HECATE_URL", &open.base)
        .env("HECATE_GUARDED_URL", &guarded.base)
        .env("HECATE_MEMORY_URL", &memory.base)
        .env("HECATE_TOKEN", "console-secret")
        .env("WORKSPACE", ws.path())
        .env("HECATE_FIXTURES", env!("CARGO_BIN_EXE_hecate-fixtures"))
        .env("SHOTS", &shots)
        .output()
        .expect("run node tests/console/console.mjs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}");
    eprintln!("{stderr}");
    assert!(
        out.status.success(),
        "the browser scenarios failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("all scenarios passed"), "{stdout}");
}
