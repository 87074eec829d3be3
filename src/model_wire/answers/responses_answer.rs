//! An OpenAI Chat Completions answer rendered as an OpenAI Responses API
//! answer: a complete `chat.completion` as a `response` object (a `message`
//! output item with its `output_text`, then one `function_call` item per tool
//! call), and a stream of `chat.completion.chunk`s as the Responses event
//! stream (`response.created` … `response.completed`, each event named after
//! its `type` and numbered with `sequence_number`). An Anthropic provider's
//! answer reaches here already rendered as Chat Completions.

use crate::model_wire::sse_out::SseFrame;
use crate::model_wire::usage::TokenUsage;
use serde_json::{Value, json};

/// A fresh id with `prefix` (`resp_`, `msg_`, `fc_`).
fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::new_v4().simple())
}

/// The Responses `usage` object.
fn usage_object(u: TokenUsage) -> Value {
    json!({
        "input_tokens": u.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": u.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u.input_tokens + u.output_tokens,
    })
}

/// The `status` and `incomplete_details` of a response that stopped for
/// `finish` (a Chat Completions finish reason).
fn status_of(finish: Option<&str>) -> (&'static str, Value) {
    match finish {
        Some("length") => ("incomplete", json!({"reason": "max_output_tokens"})),
        Some("content_filter") => ("incomplete", json!({"reason": "content_filter"})),
        _ => ("completed", Value::Null),
    }
}

/// A `response` object.
fn response_object(
    id: &str,
    created: u64,
    model: &str,
    status: &str,
    output: Vec<Value>,
    usage: Option<TokenUsage>,
    incomplete: Value,
) -> Value {
    json!({
        "id": id,
        "object": "response",
        "created_at": created,
        "status": status,
        "error": null,
        "incomplete_details": incomplete,
        "model": model,
        "output": output,
        "parallel_tool_calls": true,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage.map(usage_object),
        "metadata": {},
    })
}

fn message_item(id: &str, status: &str, text: &str) -> Value {
    json!({
        "type": "message", "id": id, "status": status, "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    })
}

fn call_item(id: &str, status: &str, call_id: &str, name: &str, arguments: &str) -> Value {
    json!({
        "type": "function_call", "id": id, "status": status,
        "call_id": call_id, "name": name, "arguments": arguments,
    })
}

/// A complete Chat Completions answer as a Responses `response` object.
pub fn chat_completion_to_response(chat: &Value, created: u64) -> Value {
    let choice = &chat["choices"][0];
    let m = &choice["message"];
    let text = super::answer::text_of(&m["content"]);
    let calls = m["tool_calls"].as_array().cloned().unwrap_or_default();
    let finish = choice["finish_reason"].as_str();
    let (status, incomplete) = status_of(finish);
    let mut output = Vec::new();
    if !text.is_empty() || calls.is_empty() {
        output.push(message_item(&new_id("msg_"), "completed", &text));
    }
    for c in &calls {
        let arguments = match c["function"]["arguments"].as_str() {
            Some(a) if !a.is_empty() => a,
            _ => "{}",
        };
        output.push(call_item(
            &new_id("fc_"),
            "completed",
            &c["id"]
                .as_str()
                .filter(|id| !id.is_empty())
                .map_or_else(|| new_id("call_"), str::to_string),
            c["function"]["name"].as_str().unwrap_or_default(),
            arguments,
        ));
    }
    let id = match chat["id"].as_str() {
        Some(i) if !i.is_empty() => format!("resp_{}", i.trim_start_matches("chatcmpl-")),
        _ => new_id("resp_"),
    };
    response_object(
        &id,
        created,
        chat["model"].as_str().unwrap_or_default(),
        status,
        output,
        TokenUsage::from_openai(&chat["usage"]),
        incomplete,
    )
}

/// An output item being streamed.
#[derive(Debug)]
enum Item {
    Message {
        id: String,
        text: String,
    },
    Call {
        id: String,
        call_id: String,
        name: String,
        arguments: String,
        /// The Chat Completions tool call index it came as (some providers,
        /// such as Gemini's OpenAI-compatible API, send none).
        index: Option<u64>,
    },
}

/// The state of one Chat Completions stream rendered as Responses events.
#[derive(Debug)]
pub struct ChatToResponses {
    id: String,
    created: u64,
    model: String,
    sequence: u64,
    started: bool,
    /// Finished items, in output order.
    done: Vec<Value>,
    /// The item being streamed (its output index is `done.len()`).
    open: Option<Item>,
    usage: Option<TokenUsage>,
    finish: Option<String>,
    ended: bool,
}

impl ChatToResponses {
    /// A stream answered at `created` (Unix seconds) by `model` (until the
    /// provider names its own).
    pub fn new(created: u64, model: &str) -> Self {
        Self {
            id: new_id("resp_"),
            created,
            model: model.to_string(),
            sequence: 0,
            started: false,
            done: Vec::new(),
            open: None,
            usage: None,
            finish: None,
            ended: false,
        }
    }

    /// Whether a finish reason has arrived (a stream cut before that is an error).
    pub fn saw_finish(&self) -> bool {
        self.finish.is_some()
    }

    /// Whether the terminal event (`response.completed`, `response.incomplete`
    /// or `response.failed`) has been written.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The usage reported so far.
    pub fn usage(&self) -> TokenUsage {
        self.usage.unwrap_or_default()
    }

    fn event(&mut self, name: &'static str, mut data: Value) -> SseFrame {
        data["type"] = json!(name);
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        SseFrame::named(name, data)
    }

    fn response(&self, status: &str, incomplete: Value) -> Value {
        response_object(
            &self.id,
            self.created,
            &self.model,
            status,
            self.done.clone(),
            self.usage,
            incomplete,
        )
    }

    /// `response.created` and `response.in_progress`, once.
    fn start(&mut self, out: &mut Vec<SseFrame>) {
        if self.started {
            return;
        }
        self.started = true;
        let pending = self.response("in_progress", Value::Null);
        out.push(self.event("response.created", json!({"response": pending})));
        out.push(self.event("response.in_progress", json!({"response": pending})));
    }

    /// Closes the open item: its `.done` events and `response.output_item.done`.
    fn close(&mut self, out: &mut Vec<SseFrame>) {
        let Some(item) = self.open.take() else {
            return;
        };
        let index = self.done.len();
        let finished = match item {
            Item::Message { id, text } => {
                let at = json!({"item_id": id, "output_index": index, "content_index": 0});
                let part = json!({"type": "output_text", "text": text, "annotations": []});
                let mut e = at.clone();
                e["text"] = json!(text);
                e["logprobs"] = json!([]);
                out.push(self.event("response.output_text.done", e));
                let mut e = at;
                e["part"] = part;
                out.push(self.event("response.content_part.done", e));
                message_item(&id, "completed", &text)
            }
            Item::Call {
                id,
                call_id,
                name,
                arguments,
                ..
            } => {
                let arguments = if arguments.is_empty() {
                    "{}".to_string()
                } else {
                    arguments
                };
                out.push(self.event(
                    "response.function_call_arguments.done",
                    json!({"item_id": id, "output_index": index, "name": name,
                           "arguments": arguments}),
                ));
                call_item(&id, "completed", &call_id, &name, &arguments)
            }
        };
        out.push(self.event(
            "response.output_item.done",
            json!({"output_index": index, "item": finished}),
        ));
        self.done.push(finished);
    }

    /// Translates one `chat.completion.chunk`.
    pub fn on_chunk(&mut self, v: &Value) -> Vec<SseFrame> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        // Providers report a failure after the 200 as a chunk with `error`.
        if let Some(err) = v.get("error") {
            let message = err["message"].as_str().unwrap_or("the provider failed");
            return self.fail(message);
        }
        if let Some(m) = v["model"].as_str().filter(|m| !m.is_empty()) {
            self.model = m.to_string();
        }
        if let Some(u) = TokenUsage::from_openai(&v["usage"]) {
            self.usage = Some(u);
        }
        self.start(&mut out);
        let choice = &v["choices"][0];
        let delta = &choice["delta"];
        if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            self.text(t, &mut out);
        }
        for c in delta["tool_calls"].as_array().into_iter().flatten() {
            self.tool_delta(c, &mut out);
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            self.finish = Some(f.to_string());
        }
        out
    }

    fn text(&mut self, t: &str, out: &mut Vec<SseFrame>) {
        if !matches!(self.open, Some(Item::Message { .. })) {
            self.close(out);
            let id = new_id("msg_");
            let index = self.done.len();
            out.push(self.event(
                "response.output_item.added",
                json!({"output_index": index, "item": {"type": "message", "id": id,
                       "status": "in_progress", "role": "assistant", "content": []}}),
            ));
            out.push(self.event(
                "response.content_part.added",
                json!({"item_id": id, "output_index": index, "content_index": 0,
                       "part": {"type": "output_text", "text": "", "annotations": []}}),
            ));
            self.open = Some(Item::Message {
                id,
                text: String::new(),
            });
        }
        let index = self.done.len();
        let Some(Item::Message { id, text }) = &mut self.open else {
            return;
        };
        text.push_str(t);
        let id = id.clone();
        out.push(self.event(
            "response.output_text.delta",
            json!({"item_id": id, "output_index": index, "content_index": 0,
                   "delta": t, "logprobs": []}),
        ));
    }

    fn tool_delta(&mut self, c: &Value, out: &mut Vec<SseFrame>) {
        // A delta continues the open call unless its index or its id says it
        // is another one (calls without an index come one after another).
        let index = c["index"].as_u64();
        let delta_id = c["id"].as_str().filter(|id| !id.is_empty());
        let same = match &self.open {
            Some(Item::Call {
                index: open_index,
                call_id,
                ..
            }) => {
                let same_index = match (index, open_index) {
                    (Some(a), Some(b)) => a == *b,
                    _ => true,
                };
                same_index && delta_id.is_none_or(|id| id == call_id)
            }
            _ => false,
        };
        if !same {
            self.close(out);
            let id = new_id("fc_");
            let call_id = delta_id.map_or_else(|| new_id("call_"), str::to_string);
            let name = c["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            out.push(self.event(
                "response.output_item.added",
                json!({"output_index": self.done.len(),
                       "item": call_item(&id, "in_progress", &call_id, &name, "")}),
            ));
            self.open = Some(Item::Call {
                id,
                call_id,
                name,
                arguments: String::new(),
                index,
            });
        }
        let output_index = self.done.len();
        let Some(Item::Call { id, arguments, .. }) = &mut self.open else {
            return;
        };
        if let Some(a) = c["function"]["arguments"]
            .as_str()
            .filter(|a| !a.is_empty())
        {
            arguments.push_str(a);
            let id = id.clone();
            out.push(self.event(
                "response.function_call_arguments.delta",
                json!({"item_id": id, "output_index": output_index, "delta": a}),
            ));
        }
    }

    /// Ends the stream: the open item closed, then `response.completed` (or
    /// `response.incomplete` when the output was cut by its cap or a filter)
    /// with the whole response and its usage.
    pub fn finish(&mut self) -> Vec<SseFrame> {
        if self.finish.as_deref() == Some("error") {
            return self.fail("the provider ended its answer with finish_reason \"error\"");
        }
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        self.start(&mut out);
        self.close(&mut out);
        if self.done.is_empty() {
            // An answer with no output still has its (empty) message.
            let item = message_item(&new_id("msg_"), "completed", "");
            self.done.push(item);
        }
        let (status, incomplete) = status_of(self.finish.as_deref());
        let response = self.response(status, incomplete);
        let name = if status == "completed" {
            "response.completed"
        } else {
            "response.incomplete"
        };
        out.push(self.event(name, json!({"response": response})));
        self.ended = true;
        out
    }

    /// Ends a stream whose provider failed: `response.failed` with the error.
    pub fn fail(&mut self, message: &str) -> Vec<SseFrame> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        self.start(&mut out);
        let mut response = self.response("failed", Value::Null);
        response["error"] = json!({"code": "server_error", "message": message});
        out.push(self.event("response.failed", json!({"response": response})));
        self.ended = true;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(frames: &[SseFrame]) -> Vec<Value> {
        frames
            .iter()
            .filter_map(|f| match f {
                SseFrame::Event { data, .. } => Some(data.clone()),
                SseFrame::Done => None,
            })
            .collect()
    }

    #[test]
    fn a_complete_answer_becomes_a_response_with_message_and_calls() {
        let chat = json!({"id": "chatcmpl-1", "model": "m", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": "calling",
                "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]},
            "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 4, "completion_tokens": 3}});
        let r = chat_completion_to_response(&chat, 9);
        assert_eq!(r["id"], "resp_1");
        assert_eq!(r["object"], "response");
        assert_eq!(r["status"], "completed");
        assert_eq!(r["output"][0]["content"][0]["text"], "calling");
        assert_eq!(r["output"][1]["type"], "function_call");
        assert_eq!(r["output"][1]["call_id"], "c1");
        assert_eq!(r["usage"]["total_tokens"], 7);
        let cut = json!({"choices": [{"message": {"content": "x"}, "finish_reason": "length"}]});
        let r = chat_completion_to_response(&cut, 9);
        assert_eq!(r["status"], "incomplete");
        assert_eq!(r["incomplete_details"]["reason"], "max_output_tokens");
    }

    #[test]
    fn chunks_become_numbered_events_ending_with_the_usage() {
        let mut t = ChatToResponses::new(5, "asked");
        let chunks = [
            json!({"model": "m", "choices": [{"delta": {"role": "assistant", "content": ""}}]}),
            json!({"choices": [{"delta": {"content": "Hel"}}]}),
            json!({"choices": [{"delta": {"content": "lo"}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c1",
                "function": {"name": "f", "arguments": "{\"a\""}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0,
                "function": {"arguments": ":1}"}}]}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 2, "completion_tokens": 5}}),
        ];
        let mut frames: Vec<SseFrame> = chunks.iter().flat_map(|c| t.on_chunk(c)).collect();
        assert!(t.saw_finish() && !t.ended());
        frames.extend(t.finish());
        assert!(t.ended() && t.finish().is_empty());
        let got = events(&frames);
        let types: Vec<&str> = got.iter().filter_map(|e| e["type"].as_str()).collect();
        assert_eq!(
            types,
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        for (i, e) in got.iter().enumerate() {
            assert_eq!(e["sequence_number"], i as u64);
        }
        assert_eq!(got[6]["text"], "Hello");
        assert_eq!(got[12]["arguments"], "{\"a\":1}");
        assert_eq!(got[13]["output_index"], 1);
        let done = &got[14]["response"];
        assert_eq!(done["status"], "completed");
        assert_eq!(done["model"], "m");
        assert_eq!(done["output"][1]["call_id"], "c1");
        assert_eq!(done["usage"]["output_tokens"], 5);
        match &frames[14] {
            SseFrame::Event { event, .. } => assert_eq!(*event, Some("response.completed")),
            SseFrame::Done => panic!("no [DONE] in a Responses stream"),
        }
    }

    #[test]
    fn a_failure_ends_the_stream_with_response_failed() {
        let mut t = ChatToResponses::new(0, "m");
        t.on_chunk(&json!({"choices": [{"delta": {"content": "par"}}]}));
        let got = events(&t.fail("cut"));
        assert_eq!(got[0]["type"], "response.failed");
        assert_eq!(got[0]["response"]["error"]["message"], "cut");
        assert!(t.ended() && t.finish().is_empty());
    }

    #[test]
    fn an_error_chunk_or_an_error_finish_ends_the_stream_with_response_failed() {
        let mut t = ChatToResponses::new(0, "m");
        t.on_chunk(&json!({"choices": [{"delta": {"content": "par"}}]}));
        let got = events(&t.on_chunk(&json!({"error": {"message": "overloaded"}})));
        assert_eq!(got.last().expect("event")["type"], "response.failed");
        assert_eq!(
            got.last().expect("event")["response"]["error"]["message"],
            "overloaded"
        );
        assert!(t.ended() && t.finish().is_empty());

        let mut t = ChatToResponses::new(0, "m");
        t.on_chunk(&json!({"choices": [{"delta": {}, "finish_reason": "error"}]}));
        let got = events(&t.finish());
        assert_eq!(got.last().expect("event")["type"], "response.failed");
    }

    #[test]
    fn calls_without_an_index_are_told_apart_by_their_ids() {
        let mut t = ChatToResponses::new(0, "m");
        let chunks = [
            json!({"choices": [{"delta": {"tool_calls": [{"id": "a",
                "function": {"name": "f", "arguments": "{\"x\":1}"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"id": "b",
                "function": {"name": "g", "arguments": "{\"y\":"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{
                "function": {"arguments": "2}"}}]}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
        ];
        for c in &chunks {
            t.on_chunk(c);
        }
        let got = events(&t.finish());
        let output = &got.last().expect("completed")["response"]["output"];
        let calls: Vec<(&str, &str, &str)> = output
            .as_array()
            .expect("output")
            .iter()
            .map(|i| {
                (
                    i["call_id"].as_str().unwrap_or_default(),
                    i["name"].as_str().unwrap_or_default(),
                    i["arguments"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(calls, [("a", "f", "{\"x\":1}"), ("b", "g", "{\"y\":2}")]);
    }
}
