//! A stand-in of the Anthropic Messages API on loopback, playing a scripted
//! model for the real `claude` CLI (pointed at it by `ANTHROPIC_BASE_URL`):
//! asked for the scripted prompt, it calls the script's tools one after the
//! other (reads a file, then edits it; or a tool of an MCP server), then
//! says a last sentence. Every request is recorded for the test to inspect.
//!
//! Speaks what CLI 2.1.332 asks of it: `POST /v1/messages` (streamed as
//! server-sent events when `stream` is true, else one JSON message) and
//! `POST /v1/messages/count_tokens`; anything else is a 404 in the API's
//! error shape, and a compressed body a 415 (the CLI then sends it plain).

use std::fmt::Write as _;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};

use hyper::StatusCode;
use hyper::header::CONTENT_ENCODING;
use serde_json::{Value, json};

use super::stand_in::{Answer, Recorded, StandIn, respond, respond_json};

/// The number of the next answer's message id.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// What the model does when the user's prompt contains `prompt`: makes
/// `calls`, one per answer, each once the result of the one before is in,
/// then answers `last_words`.
pub(crate) struct Script {
    pub(crate) prompt: String,
    pub(crate) calls: Vec<ToolCall>,
    pub(crate) last_words: String,
}

/// One `tool_use` of the model.
pub(crate) struct ToolCall {
    pub(crate) id: &'static str,
    pub(crate) name: String,
    pub(crate) input: Value,
}

/// The running stand-in (its requests, its port); dropping it stops it.
pub(crate) struct ModelStandIn(StandIn);

impl Deref for ModelStandIn {
    type Target = StandIn;

    fn deref(&self) -> &StandIn {
        &self.0
    }
}

impl ModelStandIn {
    /// Listens on 127.0.0.1, port 0, playing `script`.
    pub(crate) fn start(script: Script) -> Self {
        Self::start_session(vec![script])
    }

    /// As [`start`](Self::start), for a conversation of several prompts
    /// typed one after the other: each turn plays the script whose prompt
    /// the user typed last ([`Script::reply`]).
    pub(crate) fn start_session(turns: Vec<Script>) -> Self {
        Self(StandIn::start(move |request| answer(&turns, request)))
    }

    /// The bodies of the `POST /v1/messages` requests of the scripted
    /// conversation (those whose user turn holds the prompt).
    pub(crate) fn conversation(&self, prompt: &str) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path == "/v1/messages")
            .map(|r| r.body)
            .filter(|body| user_messages(body).any(|m| mentions(m, prompt)))
            .collect()
    }

    /// One line per request (method, path, model, number of messages), for
    /// failure messages.
    pub(crate) fn summary(&self) -> String {
        self.requests().iter().fold(String::new(), |mut out, r| {
            let messages = r.body["messages"].as_array().map_or(0, Vec::len);
            let _ = writeln!(
                out,
                "{} {} model={} messages={messages}",
                r.method, r.path, r.body["model"]
            );
            out
        })
    }
}

fn answer(turns: &[Script], request: &Recorded) -> Answer {
    let (method, path, body) = (
        request.method.as_str(),
        request.path.as_str(),
        &request.body,
    );
    let compressed = request
        .header(CONTENT_ENCODING.as_str())
        .is_some_and(|encoding| encoding != "identity");
    match (method, path) {
        _ if compressed => error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "invalid_request_error",
            "this stand-in reads uncompressed bodies only",
        ),
        ("POST", "/v1/messages") => {
            let reply = Script::reply(turns, body);
            let model = body["model"].as_str().unwrap_or("claude");
            if body["stream"] == true {
                respond(StatusCode::OK, "text/event-stream", reply.events(model))
            } else {
                respond_json(StatusCode::OK, &reply.message(model))
            }
        }
        ("POST", "/v1/messages/count_tokens") => {
            respond_json(StatusCode::OK, &json!({"input_tokens": 1}))
        }
        _ => error(
            StatusCode::NOT_FOUND,
            "not_found_error",
            &format!("{method} {path} is not served by this stand-in"),
        ),
    }
}

/// What the model says in one answer.
enum Reply<'a> {
    Text(String),
    ToolUse(&'a ToolCall),
}

impl Script {
    /// The answer to one request of the conversation. It depends on that
    /// request alone (a retried request gets the same answer): the turn is
    /// the script whose prompt the latest user message holding one holds,
    /// and its step the number of tool results after that message.
    /// Requests that are not a scripted turn (no prompt, or not offering the
    /// turn's first tool: titles, summaries, the CLI's checks) get a short
    /// text.
    fn reply<'a>(turns: &'a [Self], request: &Value) -> Reply<'a> {
        let messages: Vec<&Value> = user_messages(request).collect();
        let turn = messages.iter().enumerate().rev().find_map(|(at, message)| {
            turns
                .iter()
                .find(|turn| mentions(message, &turn.prompt))
                .map(|turn| (turn, &messages[at..]))
        });
        let Some((turn, since)) = turn else {
            return Reply::Text("OK".to_owned());
        };
        let offered = turn.calls.first().is_none_or(|first| {
            request["tools"]
                .as_array()
                .is_some_and(|tools| tools.iter().any(|tool| tool["name"] == *first.name))
        });
        if !offered {
            return Reply::Text("OK".to_owned());
        }
        // The results after the prompt (the CLI may put the prompt in one
        // message with the results of the turn before).
        let results = since
            .iter()
            .flat_map(|message| match &message["content"] {
                Value::Array(blocks) => blocks.clone(),
                text => vec![json!({"type": "text", "text": text})],
            })
            .skip_while(|block| {
                !(block["type"] == "text"
                    && block["text"]
                        .as_str()
                        .is_some_and(|text| text.contains(&turn.prompt)))
            })
            .filter(|block| block["type"] == "tool_result")
            .count();
        match turn.calls.get(results) {
            Some(call) => Reply::ToolUse(call),
            None => Reply::Text(turn.last_words.clone()),
        }
    }
}

impl Reply<'_> {
    /// The content block as it starts (a tool call's input comes after, as
    /// a delta) and its delta.
    fn block(&self) -> (Value, Value) {
        match self {
            Self::Text(text) => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": text}),
            ),
            Self::ToolUse(call) => (
                json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
                json!({"type": "input_json_delta", "partial_json": call.input.to_string()}),
            ),
        }
    }

    fn stop_reason(&self) -> &'static str {
        match self {
            Self::Text(_) => "end_turn",
            Self::ToolUse(_) => "tool_use",
        }
    }

    /// The answer as the streamed API sends it.
    fn events(&self, model: &str) -> String {
        let (start, delta) = self.block();
        let mut message = self.message(model);
        message["content"] = json!([]);
        message["stop_reason"] = Value::Null;
        [
            ("message_start", json!({"message": message})),
            (
                "content_block_start",
                json!({"index": 0, "content_block": start}),
            ),
            ("content_block_delta", json!({"index": 0, "delta": delta})),
            ("content_block_stop", json!({"index": 0})),
            (
                "message_delta",
                json!({"delta": {"stop_reason": self.stop_reason(), "stop_sequence": null},
                    "usage": {"output_tokens": 8}}),
            ),
            ("message_stop", json!({})),
        ]
        .into_iter()
        .fold(String::new(), |mut out, (event, mut data)| {
            data["type"] = json!(event);
            let _ = write!(out, "event: {event}\ndata: {data}\n\n");
            out
        })
    }

    /// The answer as one message (`stream: false`).
    fn message(&self, model: &str) -> Value {
        let content = match self {
            Self::Text(text) => json!({"type": "text", "text": text}),
            Self::ToolUse(call) => {
                json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input})
            }
        };
        // Each answer's own id: the CLI takes messages of one id for parts
        // of one message, and joins them.
        let id = format!("msg_stand_in_{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
        json!({"id": id, "type": "message", "role": "assistant", "model": model,
            "content": [content], "stop_reason": self.stop_reason(), "stop_sequence": null,
            "usage": {"input_tokens": 16, "output_tokens": 8}})
    }
}

/// The messages of `request` from the user (tool results come as such).
pub(crate) fn user_messages(request: &Value) -> impl Iterator<Item = &Value> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|message| message["role"] == "user")
}

/// The `tool_result` blocks of `request`.
pub(crate) fn tool_results(request: &Value) -> impl Iterator<Item = &Value> {
    user_messages(request)
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
}

/// `block` without the CLI's prompt-caching mark (`cache_control`, which
/// it puts on the last block of a request): what the block says.
pub(crate) fn said(block: &Value) -> Value {
    let mut block = block.clone();
    if let Some(fields) = block.as_object_mut() {
        fields.remove("cache_control");
    }
    block
}

/// A tool result's content as text: a string, or its text blocks.
pub(crate) fn text_of(content: &Value) -> String {
    content.as_str().map_or_else(
        || {
            content
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|block| block["text"].as_str())
                .collect()
        },
        str::to_owned,
    )
}

/// Whether a message's text (a string, or its text blocks) contains `text`.
fn mentions(message: &Value, text: &str) -> bool {
    let content = &message["content"];
    content.as_str().map_or_else(
        || {
            content.as_array().into_iter().flatten().any(|block| {
                block["type"] == "text" && block["text"].as_str().is_some_and(|t| t.contains(text))
            })
        },
        |whole| whole.contains(text),
    )
}

fn error(status: StatusCode, kind: &str, message: &str) -> Answer {
    respond_json(
        status,
        &json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}
