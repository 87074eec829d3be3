//! Mutated frames against `hecate acp` and `hecate mcp` over their pipes: a few
//! hundred frames derived (with a fixed seed) from valid ones by truncation, byte
//! flips, type swaps, duplicated or missing fields, huge ids, wrong `jsonrpc`
//! versions, batches and deep nesting, each followed by a sentinel request. The
//! process must stay alive (every sentinel is answered), answer each well-formed
//! request exactly once with its id, never answer an id more often than it was
//! sent, never echo a long malformed line whole in an error, and write nothing
//! but JSON-RPC frames to stdout.

mod common;
mod mcp_support;

use common::Home;
use mcp_support::McpProc;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;

/// How many mutated frames each server gets.
const FRAMES: usize = 300;
/// How long one reply may take.
const BOUND: Duration = Duration::from_secs(30);
/// Sentinel ids start here (mutated frames carry smaller ones).
const SENTINEL_BASE: i64 = 900_000_000;
/// Junk appended to a frame to make a long malformed line.
const LONG_JUNK: usize = 64 * 1024;
/// How much longer than its id an error reply may be: errors quote a refused
/// frame at most in part.
const ERROR_BYTES: usize = 4096;

/// A tiny xorshift generator: deterministic, no dependency.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// One mutated frame; `duplicated` when it repeats a member (JSON that parses
/// but is not a well-formed request).
struct Mutant {
    bytes: Vec<u8>,
    duplicated: bool,
}

/// Values of every JSON type, for type swaps.
fn any_value(rng: &mut XorShift) -> Value {
    rng.pick(&[
        json!(0),
        json!(-1),
        json!(1.5),
        json!("x"),
        json!(true),
        json!(null),
        json!([]),
        json!([1, "a"]),
        json!({}),
        json!({"k": {"k": 1}}),
    ])
    .clone()
}

fn text(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).expect("json")
}

/// `frame` (a request or notification object) mutated one way.
fn mutate(rng: &mut XorShift, frame: &Value) -> Mutant {
    let plain = |bytes| Mutant {
        bytes,
        duplicated: false,
    };
    let mut obj = frame.as_object().expect("object").clone();
    match rng.below(11) {
        0 => {
            let mut b = text(frame);
            b.truncate(1 + rng.below(b.len() - 1));
            plain(b)
        }
        1 => {
            let mut b = text(frame);
            for _ in 0..=rng.below(3) {
                let i = rng.below(b.len());
                b[i] ^= (1 + rng.below(255)) as u8;
                if b[i] == b'\n' {
                    b[i] = b' ';
                }
            }
            plain(b)
        }
        2 => {
            let in_params = obj.get("params").is_some_and(Value::is_object) && rng.below(2) == 0;
            let target = if in_params {
                obj.get_mut("params")
                    .and_then(Value::as_object_mut)
                    .expect("params")
            } else {
                &mut obj
            };
            let keys: Vec<String> = target.keys().cloned().collect();
            if !keys.is_empty() {
                let key = rng.pick(&keys).clone();
                target.insert(key, any_value(rng));
            }
            plain(text(&Value::Object(obj)))
        }
        3 => {
            let keys: Vec<String> = obj.keys().cloned().collect();
            let key = rng.pick(&keys).clone();
            let again = if rng.below(2) == 0 {
                obj[&key].clone()
            } else {
                any_value(rng)
            };
            let mut b = format!("{{{}:{},", json!(key), again).into_bytes();
            b.extend_from_slice(&text(frame)[1..]);
            Mutant {
                bytes: b,
                duplicated: true,
            }
        }
        4 => {
            let keys: Vec<String> = obj.keys().cloned().collect();
            obj.remove(rng.pick(&keys).as_str());
            plain(text(&Value::Object(obj)))
        }
        5 => {
            let huge = rng.below(4);
            let raw = match huge {
                0 => "1180591620717411303424".to_string(),
                1 => i64::MAX.to_string(),
                2 => "1e300".to_string(),
                _ => json!("i".repeat(100_000)).to_string(),
            };
            obj.insert("id".into(), json!("@ID@"));
            let b = String::from_utf8(text(&Value::Object(obj)))
                .expect("utf8")
                .replace("\"@ID@\"", &raw);
            plain(b.into_bytes())
        }
        6 => {
            obj.insert(
                "jsonrpc".into(),
                rng.pick(&[json!("1.0"), json!(2), json!(null), json!("2.0 ")])
                    .clone(),
            );
            plain(text(&Value::Object(obj)))
        }
        7 => plain(match rng.below(3) {
            0 => b"[]".to_vec(),
            1 => text(&json!([frame])),
            _ => text(&json!([frame, frame])),
        }),
        8 => {
            let depth = *rng.pick(&[50usize, 200, 300]);
            let b = String::from_utf8(text(&json!({"x": "@DEEP@"})))
                .expect("utf8")
                .replace(
                    "\"@DEEP@\"",
                    &format!("{}1{}", "[".repeat(depth), "]".repeat(depth)),
                );
            obj.insert("params".into(), json!("@P@"));
            let framed = String::from_utf8(text(&Value::Object(obj)))
                .expect("utf8")
                .replace("\"@P@\"", &b);
            plain(framed.into_bytes())
        }
        9 => {
            let mut b = text(frame);
            b.extend_from_slice(b" ");
            b.extend_from_slice(&[b'z'; LONG_JUNK]);
            plain(b)
        }
        _ => plain(text(frame)),
    }
}

/// The id of a well-formed request: a JSON object with `"jsonrpc": "2.0"`, a
/// string `method`, a string or integer `id`, `params` (if any) an object or an
/// array, and neither `result` nor `error`. Such a request gets exactly one reply.
fn request_id(m: &Mutant) -> Option<Value> {
    if m.duplicated {
        return None;
    }
    let v: Value = serde_json::from_slice(&m.bytes).ok()?;
    let obj = v.as_object()?;
    let id = obj.get("id").filter(|id| id.is_string() || id.is_i64())?;
    let ok = obj.get("jsonrpc") == Some(&json!("2.0"))
        && obj.get("method").is_some_and(Value::is_string)
        && obj
            .get("params")
            .is_none_or(|p| p.is_object() || p.is_array())
        && !obj.contains_key("result")
        && !obj.contains_key("error");
    ok.then(|| id.clone())
}

/// The id a reply to the frame could carry at most (read leniently).
fn carried_id(m: &Mutant) -> Option<Value> {
    let v: Value = serde_json::from_str(&String::from_utf8_lossy(&m.bytes)).ok()?;
    v.get("id")
        .filter(|id| id.is_string() || id.is_i64())
        .cloned()
}

/// Frame `n` of the valid templates, with a unique id.
fn base(templates: &[Value], rng: &mut XorShift, n: usize) -> Value {
    let mut frame = rng.pick(templates).clone();
    if let Some(obj) = frame.as_object_mut()
        && obj.contains_key("id")
    {
        let id = if n.is_multiple_of(2) {
            json!(1_000 + n as i64)
        } else {
            json!(format!("f-{n}"))
        };
        obj.insert("id".into(), id);
    }
    frame
}

/// Sends the handshake, then the mutated frames, each followed by a sentinel,
/// and checks the replies.
fn fuzz(mut proc: McpProc, handshake: &[Value], templates: &[Value], seed: u64) {
    let mut rng = XorShift(seed);
    let mut expected: HashMap<String, usize> = HashMap::new();
    let mut carried: HashMap<String, usize> = HashMap::new();
    let mut requests = 0;
    for frame in handshake {
        proc.send(frame);
        if let Some(id) = frame.get("id") {
            let r = proc.wait_id(id, BOUND).expect("handshake reply");
            assert!(r.get("result").is_some(), "handshake failed: {r}");
            expected.insert(id.to_string(), 1);
            carried.insert(id.to_string(), 1);
        }
    }
    for n in 0..FRAMES {
        let frame = base(templates, &mut rng, n);
        let m = mutate(&mut rng, &frame);
        proc.send_bytes(&m.bytes);
        if let Some(id) = carried_id(&m) {
            *carried.entry(id.to_string()).or_default() += 1;
        }
        if let Some(id) = request_id(&m) {
            requests += 1;
            *expected.entry(id.to_string()).or_default() += 1;
            assert!(
                proc.wait_id(&id, BOUND).is_some(),
                "no reply to frame {n}: {}\nstderr:\n{}",
                String::from_utf8_lossy(&m.bytes[..m.bytes.len().min(400)]),
                proc.stderr()
            );
        }
        let sentinel = json!(SENTINEL_BASE + n as i64);
        proc.send(&json!({"jsonrpc": "2.0", "id": sentinel, "method": "ping"}));
        *expected.entry(sentinel.to_string()).or_default() += 1;
        *carried.entry(sentinel.to_string()).or_default() += 1;
        assert!(
            proc.wait_id(&sentinel, BOUND).is_some(),
            "the sentinel after frame {n} went unanswered: {}\nstderr:\n{}",
            String::from_utf8_lossy(&m.bytes[..m.bytes.len().min(400)]),
            proc.stderr()
        );
    }
    assert!(
        (FRAMES / 5..FRAMES * 4 / 5).contains(&requests),
        "the mutations should leave some frames well-formed requests, not most: {requests}"
    );
    let status = proc.close_and_wait(BOUND);
    assert!(
        status.is_some_and(|s| s.success()),
        "exit {status:?}; stderr:\n{}",
        proc.stderr()
    );
    let mut replies: HashMap<String, usize> = HashMap::new();
    for line in &proc.raw {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line:?}"));
        assert_eq!(v["jsonrpc"], "2.0", "not a JSON-RPC frame: {line}");
        if v.get("method").is_some() {
            continue;
        }
        assert!(
            v.get("result").is_some() != v.get("error").is_some(),
            "a reply has exactly one of result and error: {line}"
        );
        assert!(
            v.as_object().is_some_and(|o| o.contains_key("id")),
            "a reply without an id member: {line}"
        );
        if v.get("error").is_some() {
            assert!(
                line.len() <= ERROR_BYTES + v["id"].to_string().len(),
                "an error reply of {} bytes: {}",
                line.len(),
                &line[..line.len().min(300)]
            );
        }
        if !v["id"].is_null() {
            *replies.entry(v["id"].to_string()).or_default() += 1;
        }
    }
    for (id, n) in &expected {
        let got = replies.get(id).copied().unwrap_or(0);
        assert!(got >= *n, "id {id} answered {got} times, sent {n} times");
    }
    for (id, got) in &replies {
        let sent = carried.get(id).copied().unwrap_or(0);
        assert!(
            *got <= sent,
            "id {id} answered {got} times but carried by {sent} frames"
        );
    }
}

/// A request template (its id is replaced per frame).
fn req(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": method, "params": params})
}

/// A notification template.
fn note(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

#[test]
fn hecate_mcp_survives_mutated_frames_and_answers_each_request_once() {
    let home = Home::empty();
    let mcp = McpProc::spawn(&home, &[]);
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "fuzz", "version": "1"}});
    let handshake = [
        json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": init}),
        note("notifications/initialized", json!({})),
    ];
    let templates = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "ping"}),
        req("tools/list", json!({})),
        req(
            "tools/call",
            json!({"name": "list_sessions", "arguments": {"limit": 1}}),
        ),
        req("resources/list", json!({})),
        req("resources/templates/list", json!({})),
        req(
            "resources/read",
            json!({"uri": "hecate://sessions/agent_chat_nope"}),
        ),
        req("prompts/list", json!({})),
        req("logging/setLevel", json!({"level": "error"})),
        req("initialize", init),
        note(
            "notifications/cancelled",
            json!({"requestId": 424242, "reason": "x"}),
        ),
        note("notifications/initialized", json!({})),
    ];
    fuzz(mcp, &handshake, &templates, 0x5eed_0001);
}

#[test]
fn hecate_acp_survives_mutated_frames_and_answers_each_request_once() {
    let home = Home::empty();
    let ws = tempfile::tempdir().expect("workspace");
    let acp = McpProc::spawn_command(&home, home.cmd(&["acp"]));
    let init = json!({"protocolVersion": 1, "clientCapabilities": {}});
    let handshake =
        [json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": init})];
    let templates = [
        req("initialize", init),
        req("session/new", json!({"cwd": ws.path(), "mcpServers": []})),
        req("session/list", json!({})),
        req(
            "session/prompt",
            json!({"sessionId": "agent_chat_nope", "prompt": [{"type": "text", "text": "hi"}]}),
        ),
        req(
            "session/set_mode",
            json!({"sessionId": "agent_chat_nope", "modeId": "model:x/y"}),
        ),
        req(
            "session/load",
            json!({"sessionId": "agent_chat_nope", "cwd": ws.path(), "mcpServers": []}),
        ),
        note("session/cancel", json!({"sessionId": "agent_chat_nope"})),
    ];
    fuzz(acp, &handshake, &templates, 0x5eed_0002);
}
