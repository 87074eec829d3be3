//! `hecate mcp bench` in both client modes with tiny parameters: the report has
//! every path and every figure. No timing is asserted. The `--ts` mode needs the
//! peers of `scripts/test-deps/mcp.sh` under `target/test-deps/mcp/` (its default
//! paths, relative to the working directory, the repository root here).

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bench(extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_hecate"))
        .args([
            "mcp",
            "bench",
            "--calls",
            "20",
            "--clients",
            "2",
            "--starts",
            "2",
        ])
        .args(extra)
        .current_dir(root())
        .env_remove("HECATE_NAMESPACE")
        .output()
        .expect("run hecate mcp bench");
    assert!(
        out.status.success(),
        "hecate mcp bench {extra:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

fn bench_json(extra: &[&str]) -> Value {
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    let text = bench(&args);
    let v: Value = serde_json::from_str(&text).expect("JSON report");
    assert_eq!(v["object"], "mcp_bench", "{v}");
    v["data"].clone()
}

fn number(v: &Value, what: &str) -> f64 {
    let n = v
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {v}"));
    assert!(n.is_finite() && n >= 0.0, "{what} = {n}");
    n
}

fn check_report(data: &Value, client: &str, paths: &[&str]) {
    assert_eq!(data["client"], client, "{data}");
    assert_eq!(data["calls"], 20, "{data}");
    assert_eq!(data["clients"], 2, "{data}");
    let got = data["paths"].as_object().expect("paths object");
    for path in paths {
        let p = &got
            .get(*path)
            .unwrap_or_else(|| panic!("path {path} missing: {data}"));
        for figure in [
            "median_us",
            "p99_us",
            "calls_per_s",
            "concurrent_calls_per_s",
            "median_vs_direct",
            "scaling",
        ] {
            number(&p[figure], &format!("{path}.{figure}"));
        }
        assert!(number(&p["calls_per_s"], "calls_per_s") > 0.0, "{p}");
        assert!(
            number(&p["concurrent_calls_per_s"], "concurrent_calls_per_s") > 0.0,
            "{p}"
        );
    }
    assert_eq!(got.len(), paths.len(), "unexpected paths: {data}");
    for path in ["hecate_stdio", "hecate_http", "hecate_http_passthrough"] {
        number(
            &got[path]["median_vs_rmcp_floor"],
            &format!("{path}.median_vs_rmcp_floor"),
        );
    }
    assert_eq!(
        number(&got["direct_stdio"]["median_vs_direct"], "direct ratio"),
        1.0
    );
    let cold = &data["cold_start"];
    assert_eq!(cold["starts"], 2, "{cold}");
    for who in ["hecate_mcp", "direct"] {
        for figure in ["median_ms", "min_ms", "max_ms"] {
            number(&cold[who][figure], &format!("cold_start.{who}.{figure}"));
        }
        assert!(number(&cold[who]["median_ms"], "median_ms") > 0.0, "{cold}");
    }
}

#[test]
fn the_rmcp_bench_reports_every_path_and_figure() {
    let data = bench_json(&[]);
    check_report(
        &data,
        "rmcp",
        &[
            "direct_stdio",
            "hecate_stdio",
            "hecate_http",
            "hecate_http_passthrough",
            "pipe_relay_stdio",
            "rmcp_proxy_stdio",
            "rmcp_proxy_http",
            "rmcp_server_http",
        ],
    );
}

#[test]
fn the_rmcp_bench_prints_a_table() {
    let text = bench(&[]);
    for needle in [
        "direct_stdio",
        "hecate_stdio",
        "hecate_http",
        "hecate_http_passthrough",
        "rmcp_proxy_stdio",
        "vs direct",
        "vs floor",
        "cold start",
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
}

#[test]
fn the_typescript_sdk_bench_reports_every_path_and_figure() {
    assert!(
        root()
            .join("target/test-deps/mcp/.hecate-test-deps")
            .exists(),
        "the MCP peers are not installed: run ./scripts/test-deps/mcp.sh first"
    );
    let data = bench_json(&["--ts"]);
    check_report(
        &data,
        "typescript-sdk",
        &[
            "direct_stdio",
            "hecate_stdio",
            "hecate_http",
            "hecate_http_passthrough",
            "supergateway_stateful",
            "everything_http",
            "pipe_relay_stdio",
            "rmcp_proxy_stdio",
            "rmcp_proxy_http",
            "rmcp_server_http",
        ],
    );
    assert!(
        data["sdk_version"].as_str().is_some_and(|v| !v.is_empty()),
        "{data}"
    );
    assert!(
        data["node"].as_str().is_some_and(|v| v.starts_with("v22")),
        "{data}"
    );
}
