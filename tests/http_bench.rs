//! `hecate bench http` runs end to end with tiny parameters (real fixture model
//! server, real `hecate serve`) and its JSON report carries every figure. No
//! timing is asserted: only that each figure is there and is a number.

mod common;

use common::{Home, text};
use serde_json::Value;

fn number(v: &Value, path: &str) -> f64 {
    let found = path
        .split('.')
        .try_fold(v, |v, k| match k.parse::<usize>() {
            Ok(i) => v.get(i),
            Err(_) => v.get(k),
        })
        .unwrap_or_else(|| panic!("{path} missing in {v:#}"));
    found
        .as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number: {found}"))
}

#[test]
fn bench_http_reports_every_figure() {
    let home = Home::empty();
    let out = home.run(&[
        "bench",
        "http",
        "--messages",
        "10",
        "--duration-ms",
        "100",
        "--connections",
        "2",
        "--turns-per-session",
        "2",
        "--subscribers",
        "1,3",
        "--json",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "bench failed:\n{stderr}");
    let v: Value = serde_json::from_str(&stdout).expect("JSON report");
    let r = &v["data"];
    assert_eq!(r["benchmark"], "http");
    assert_eq!(number(r, "get_session.messages"), 10.0);
    assert!(number(r, "get_session.body_bytes") > 0.0);
    for loop_name in [
        "get_session.target",
        "get_session.baseline_healthz",
        "post_message.target",
        "post_message.baseline_direct",
    ] {
        for figure in ["requests", "requests_per_s", "p50_ms", "p99_ms"] {
            assert!(number(r, &format!("{loop_name}.{figure}")) >= 0.0);
        }
        assert!(number(r, &format!("{loop_name}.requests")) >= 1.0);
    }
    for ratios in ["get_session", "post_message"] {
        for figure in ["requests_per_s", "p50", "p99"] {
            number(r, &format!("{ratios}.ratio_vs_baseline.{figure}"));
        }
    }
    let fanout = r["sse_fanout"].as_array().expect("sse_fanout");
    assert_eq!(fanout.len(), 2);
    for (i, subscribers) in [1.0, 3.0].into_iter().enumerate() {
        assert_eq!(
            number(r, &format!("sse_fanout.{i}.subscribers")),
            subscribers
        );
        for figure in [
            "first_update_all_ms",
            "first_update_median_ms",
            "done_all_ms",
            "done_median_ms",
            "serve_rss_kib_connected",
        ] {
            number(r, &format!("sse_fanout.{i}.{figure}"));
        }
    }
    assert!(number(r, "memory.serve_rss_kib_start") > 0.0);
    assert!(number(r, "memory.serve_rss_kib_idle") > 0.0);
    assert!(number(r, "memory.serve_rss_kib_connected") > 0.0);
    assert_eq!(number(r, "memory.subscribers"), 3.0);
    number(r, "memory.per_subscriber_kib");
}
