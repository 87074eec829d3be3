//! Triage of one incoming MCP frame before rmcp sees it: a frame that parses as
//! an rmcp client message goes on; anything else is answered here with the
//! JSON-RPC error it deserves (`-32700` for text that is not JSON, `-32600` for
//! JSON that is not a JSON-RPC message, `-32601` for an unknown method, `-32602`
//! for parameters that do not fit a known method), carrying the request's id
//! when one can be read, or dropped when it is a notification or a response
//! (those never get a reply). rmcp would otherwise take a known method with
//! ill-typed parameters for an unknown custom method (`-32601`), and ignore text
//! that is not JSON. Used by the stdio transport and the Streamable HTTP endpoint.

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, CancelTaskMethod, CancelTaskRequest,
    ClientJsonRpcMessage, ClientRequest, CompleteRequest, CompleteRequestMethod, ConstString,
    DiscoverRequest, DiscoverRequestMethod, ErrorCode, GetPromptRequest, GetPromptRequestMethod,
    GetSkillRequest, GetSkillRequestMethod, GetTaskMethod, GetTaskRequest, InitializeRequest,
    InitializeResultMethod, JsonRpcMessage, ListPromptsRequest, ListPromptsRequestMethod,
    ListResourceTemplatesRequest, ListResourceTemplatesRequestMethod, ListResourcesRequest,
    ListResourcesRequestMethod, ListSkillsRequest, ListSkillsRequestMethod, ListToolsRequest,
    ListToolsRequestMethod, PingRequest, PingRequestMethod, ReadResourceDirectoryRequest,
    ReadResourceDirectoryRequestMethod, ReadResourceRequest, ReadResourceRequestMethod, RequestId,
    ServerJsonRpcMessage, SubscribeRequestMethod, SubscriptionsListenRequest,
    SubscriptionsListenRequestMethod, UnsubscribeRequestMethod, UpdateTaskMethod,
    UpdateTaskRequest,
};
// Logging and resource subscriptions are deprecated in rmcp (protocol
// 2026-07-28) but still part of protocol 2025-11-25.
#[allow(deprecated)]
use rmcp::model::{SetLevelRequest, SetLevelRequestMethod, SubscribeRequest, UnsubscribeRequest};
use serde_json::{Map, Value};

/// UTF-8 byte order mark, which JSON parsers may ignore (RFC 8259 §8.1).
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What becomes of one incoming frame.
#[derive(Debug)]
pub(crate) enum Triage {
    /// A message for rmcp.
    Message(Box<ClientJsonRpcMessage>),
    /// Answered here with this error response.
    Answer(Box<ServerJsonRpcMessage>),
    /// Dropped without a reply (blank, or a malformed notification or response).
    Drop(&'static str),
}

/// An error response to `id` (`None` when no id could be read; it is then
/// written as `"id": null`).
pub(crate) fn answer(error: ErrorData, id: Option<RequestId>) -> Triage {
    Triage::Answer(Box::new(ServerJsonRpcMessage::error(error, id)))
}

/// `-32601` for `method`, as rmcp words it (the message is the method).
pub(crate) fn method_not_found(method: &str) -> ErrorData {
    ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method.to_string(), None)
}

/// One outgoing message as JSON by serde; an error response without an id gets
/// `"id": null` (JSON-RPC 2.0 requires the member; rmcp omits it).
pub(crate) fn to_json(msg: &ServerJsonRpcMessage) -> serde_json::Result<Vec<u8>> {
    match msg {
        JsonRpcMessage::Error(e) if e.id.is_none() => {
            let mut v = serde_json::to_value(e)?;
            if let Value::Object(obj) = &mut v {
                obj.insert("id".into(), Value::Null);
            }
            serde_json::to_vec(&v)
        }
        _ => serde_json::to_vec(msg),
    }
}

/// Triage of one frame (a stdio line or an HTTP body).
pub(crate) fn frame(raw: &[u8]) -> Triage {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let raw = raw.strip_prefix(BOM).unwrap_or(raw);
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Triage::Drop("blank line");
    }
    if let Err(e) = std::str::from_utf8(raw) {
        return answer(
            ErrorData::parse_error(format!("the frame is not UTF-8: {e}"), None),
            None,
        );
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(raw) {
        Ok(msg) => parsed(msg),
        Err(shape) => match serde_json::from_slice::<Value>(raw) {
            Ok(value) => malformed(value, &shape),
            Err(e) => answer(
                ErrorData::parse_error(format!("the frame is not JSON: {e}"), None),
                None,
            ),
        },
    }
}

/// Triage of a frame over the size limit, from its first bytes.
pub(crate) fn oversized(bytes: usize, prefix: &[u8], limit: usize) -> Triage {
    let id = crate::jsonl::leading_id(prefix).and_then(|v| serde_json::from_value(v).ok());
    answer(
        ErrorData::invalid_request(
            format!("frame of {bytes} bytes exceeds the {limit}-byte limit"),
            None,
        ),
        id,
    )
}

/// A message rmcp parsed: requests rmcp took for custom ones but whose method
/// is a known MCP method had parameters of the wrong shape.
fn parsed(msg: ClientJsonRpcMessage) -> Triage {
    if let JsonRpcMessage::Request(req) = &msg
        && let ClientRequest::CustomRequest(custom) = &req.request
    {
        let body = request_body(&custom.method, custom.params.as_ref());
        if let Some(Err(e)) = typed(&custom.method, body) {
            return answer(invalid_params(&custom.method, &e), Some(req.id.clone()));
        }
    }
    Triage::Message(Box::new(msg))
}

/// JSON that rmcp could not take as a client message.
fn malformed(value: Value, shape: &serde_json::Error) -> Triage {
    let obj = match value {
        Value::Object(obj) => obj,
        Value::Array(items) if items.is_empty() => {
            return answer(ErrorData::invalid_request("empty batch", None), None);
        }
        Value::Array(_) => {
            return answer(
                ErrorData::invalid_request(
                    "JSON-RPC batches are not supported; send each message on its own line",
                    None,
                ),
                None,
            );
        }
        _ => {
            return answer(
                ErrorData::invalid_request("a JSON-RPC message is a JSON object", None),
                None,
            );
        }
    };
    let id = obj.get("id").and_then(request_id);
    let method = obj.get("method");
    if method.is_none() && (obj.contains_key("result") || obj.contains_key("error")) {
        return Triage::Drop("malformed response");
    }
    if method.is_some_and(Value::is_string) && !obj.contains_key("id") {
        return Triage::Drop("malformed notification");
    }
    let invalid = |why: String| answer(ErrorData::invalid_request(why, None), id.clone());
    let Some(id) = id.clone() else {
        return invalid(match (obj.contains_key("id"), method) {
            (true, _) => "the id must be a string or an integer".into(),
            (false, Some(_)) => "a notification's `method` must be a string".into(),
            (false, None) => "not a JSON-RPC message: no `method`, `result` or `error`".into(),
        });
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("`jsonrpc` must be \"2.0\"".into());
    }
    let Some(method) = method.and_then(Value::as_str) else {
        return invalid("a request needs a string `method`".into());
    };
    let params = obj.get("params");
    if params.is_some_and(|p| !p.is_object() && !p.is_array()) {
        return invalid("`params` must be an object or an array".into());
    }
    match typed(method, request_body(method, params)) {
        Some(Err(e)) => answer(invalid_params(method, &e), Some(id)),
        None => answer(method_not_found(method), Some(id)),
        Some(Ok(())) => invalid(format!("not a valid JSON-RPC request: {shape}")),
    }
}

/// A string or integer id as rmcp's request id; other values identify nothing.
fn request_id(v: &Value) -> Option<RequestId> {
    (v.is_i64() || v.is_string())
        .then(|| serde_json::from_value(v.clone()).ok())
        .flatten()
}

fn invalid_params(method: &str, e: &serde_json::Error) -> ErrorData {
    ErrorData::invalid_params(format!("invalid params for {method}: {e}"), None)
}

/// The `method` and `params` members of a request, as rmcp's request types read them.
fn request_body(method: &str, params: Option<&Value>) -> Value {
    let mut body = Map::new();
    body.insert("method".into(), Value::from(method));
    if let Some(p) = params {
        body.insert("params".into(), p.clone());
    }
    Value::Object(body)
}

/// Whether `body` fits the request type of `method` (`None` when the method is
/// not one of MCP's client requests), checked with rmcp's own types.
fn typed(method: &str, body: Value) -> Option<Result<(), serde_json::Error>> {
    macro_rules! known {
        ($($m:ty => $t:ty),* $(,)?) => {
            $(if method == <$m as ConstString>::VALUE {
                return Some(serde_json::from_value::<$t>(body).map(|_| ()));
            })*
        };
    }
    #[allow(deprecated)]
    {
        known!(
            PingRequestMethod => PingRequest,
            InitializeResultMethod => InitializeRequest,
            DiscoverRequestMethod => DiscoverRequest,
            CompleteRequestMethod => CompleteRequest,
            SetLevelRequestMethod => SetLevelRequest,
            GetPromptRequestMethod => GetPromptRequest,
            ListPromptsRequestMethod => ListPromptsRequest,
            ListResourcesRequestMethod => ListResourcesRequest,
            ListResourceTemplatesRequestMethod => ListResourceTemplatesRequest,
            ReadResourceRequestMethod => ReadResourceRequest,
            SubscriptionsListenRequestMethod => SubscriptionsListenRequest,
            SubscribeRequestMethod => SubscribeRequest,
            UnsubscribeRequestMethod => UnsubscribeRequest,
            CallToolRequestMethod => CallToolRequest,
            ListToolsRequestMethod => ListToolsRequest,
            GetTaskMethod => GetTaskRequest,
            UpdateTaskMethod => UpdateTaskRequest,
            CancelTaskMethod => CancelTaskRequest,
            ListSkillsRequestMethod => ListSkillsRequest,
            GetSkillRequestMethod => GetSkillRequest,
            ReadResourceDirectoryRequestMethod => ReadResourceDirectoryRequest,
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The error code and id of an answered frame; `None` when passed or dropped.
    fn answered(raw: &[u8]) -> Option<(i32, Value)> {
        match frame(raw) {
            Triage::Answer(msg) => match *msg {
                JsonRpcMessage::Error(e) => Some((
                    e.error.code.0,
                    e.id.map(|id| serde_json::to_value(id).expect("id"))
                        .unwrap_or(Value::Null),
                )),
                other => panic!("answered with a non-error {other:?}"),
            },
            _ => None,
        }
    }

    #[test]
    fn valid_messages_pass_and_malformed_notifications_and_responses_drop() {
        assert!(matches!(
            frame(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Triage::Message(_)
        ));
        assert!(matches!(
            frame(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r"),
            Triage::Message(_)
        ));
        assert!(matches!(frame(b"  "), Triage::Drop(_)));
        assert!(matches!(
            frame(br#"{"jsonrpc":"2.0","method":"x/y","params":5}"#),
            Triage::Drop(_)
        ));
        assert!(matches!(
            frame(br#"{"jsonrpc":"2.0","id":4,"result":5,"extra":[}"#),
            Triage::Answer(_)
        ));
        assert!(matches!(
            frame(br#"{"jsonrpc":"1.0","id":4,"error":{}}"#),
            Triage::Drop(_)
        ));
    }

    #[test]
    fn each_fault_gets_its_json_rpc_code_and_the_id_when_one_is_readable() {
        let cases: &[(&[u8], i32, Value)] = &[
            (b"not json", -32700, Value::Null),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"x\":\"\xff\"}",
                -32700,
                Value::Null,
            ),
            (
                br#"{"jsonrpc":"2.0","id":3,"method":"ping""#,
                -32700,
                Value::Null,
            ),
            (b"[]", -32600, Value::Null),
            (
                br#"[{"jsonrpc":"2.0","id":9,"method":"ping"}]"#,
                -32600,
                Value::Null,
            ),
            (b"\"text\"", -32600, Value::Null),
            (br#"{"hello":1}"#, -32600, Value::Null),
            (
                br#"{"jsonrpc":"1.0","id":8,"method":"ping"}"#,
                -32600,
                json!(8),
            ),
            (
                br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                -32600,
                Value::Null,
            ),
            (
                br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                -32600,
                Value::Null,
            ),
            (
                br#"{"jsonrpc":"2.0","id":17,"method":5}"#,
                -32600,
                json!(17),
            ),
            (
                br#"{"jsonrpc":"2.0","id":"s","method":"tools/list","params":5}"#,
                -32600,
                json!("s"),
            ),
            (
                br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":5}}"#,
                -32602,
                json!(6),
            ),
            (
                br#"{"jsonrpc":"2.0","id":10,"method":"ping","params":[]}"#,
                -32602,
                json!(10),
            ),
            (
                br#"{"jsonrpc":"2.0","id":11,"method":"no/such","params":[1]}"#,
                -32601,
                json!(11),
            ),
        ];
        for (raw, code, id) in cases {
            assert_eq!(
                answered(raw),
                Some((*code, id.clone())),
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    #[test]
    fn oversized_frames_keep_a_leading_id() {
        let Triage::Answer(msg) = oversized(10, br#"{"jsonrpc":"2.0","id":"big","par"#, 5) else {
            panic!("answered");
        };
        let v = serde_json::to_value(&*msg).expect("json");
        assert_eq!(v["id"], "big");
        assert_eq!(v["error"]["code"], -32600);
    }
}
