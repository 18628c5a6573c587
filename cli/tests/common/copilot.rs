//! The real `copilot` CLI as the tests run it, and a stand-in of an
//! OpenAI-compatible chat completions API on loopback playing a scripted
//! model for it.
//!
//! The CLI (1.0.102) runs with no GitHub login: `COPILOT_OFFLINE=true` (no
//! network but its model provider's), `COPILOT_PROVIDER_BASE_URL` the
//! stand-in's `/v1`, `COPILOT_MODEL`; in the place's `$COPILOT_HOME`, where
//! its `config.json` trusts the workspace (`trustedFolders`) and the
//! editors' hosts write their lockfiles (`ide/`); in a home of its own.
//!
//! What it asks of the API, seen live: `POST /v1/chat/completions` with
//! `stream: true`, answered as server-sent events (`chat.completion.chunk`
//! objects, then `data: [DONE]`); its tools are OpenAI functions (the IDE's
//! `ide-get_diagnostics` and `ide-get_selection` among them, its own
//! `edit {path, old_str, new_str}`), a tool's result comes back as a
//! `role: tool` message. A non-streamed request gets one
//! `chat.completion`; anything else is a 404. Every request is recorded for
//! the test to inspect.

use std::fmt::Write as _;
use std::ops::Deref;
use std::process::Command;

use hyper::StatusCode;
use serde_json::{Value, json};

use super::lsp::Place;
use super::stand_in::{Answer, Recorded, StandIn, respond, respond_json};
use super::tmux::Terminal;

/// Whether what a test of the CLI with a Neovim IDE needs is installed:
/// `copilot`, `tmux`, `nvim`, `clangd` and `pyright-langserver`.
pub(crate) fn installed() -> bool {
    ["copilot", "tmux", "nvim", "clangd", "pyright-langserver"]
        .into_iter()
        .all(super::installed)
}

/// The model the CLI is told to use (one it knows the limits of).
pub(crate) const MODEL: &str = "gpt-4.1";

/// What the CLI puts before the editor's selection in the user's message.
pub(crate) const IDE_SELECTION: &str = "<ide_selection>\nThe user has the following text selected in their IDE. This may or may not be related to their request.\n";

/// `copilot` in a 160×50 terminal in the place's workspace, with the
/// stand-in as its model and nothing of the user's GitHub account or
/// Copilot settings.
pub(crate) fn start(place: &Place, model: &CopilotStandIn) -> Terminal {
    let home = place.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let copilot_home = place.copilot_home();
    std::fs::create_dir_all(&copilot_home).unwrap();
    let config = json!({"trustedFolders": [place.workspace]});
    std::fs::write(copilot_home.join("config.json"), config.to_string()).unwrap();
    Terminal::start(
        &place.dir.path().join("tmux"),
        &place.workspace,
        (160, 50),
        &["copilot"],
        |command: &mut Command| {
            place.agent_environment(command, &["COPILOT", "GH_", "GITHUB"], &home);
            command
                .env("COPILOT_OFFLINE", "true")
                .env(
                    "COPILOT_PROVIDER_BASE_URL",
                    format!("http://127.0.0.1:{}/v1", model.port),
                )
                .env("COPILOT_MODEL", MODEL);
        },
    )
}

/// What the model does in one turn, when the user's message contains
/// `prompt`: makes `calls` (a function's name and arguments), one per
/// answer, each once the result of the one before is in, then answers
/// `last_words`.
pub(crate) struct Turn {
    pub(crate) prompt: String,
    pub(crate) calls: Vec<(String, Value)>,
    pub(crate) last_words: String,
}

/// The running stand-in (its requests, its port); dropping it stops it.
pub(crate) struct CopilotStandIn(StandIn);

impl Deref for CopilotStandIn {
    type Target = StandIn;

    fn deref(&self) -> &StandIn {
        &self.0
    }
}

impl CopilotStandIn {
    /// Listens on 127.0.0.1, port 0, playing `turns`.
    pub(crate) fn start(turns: Vec<Turn>) -> Self {
        Self(StandIn::start(move |request| answer(&turns, request)))
    }

    /// The bodies of the conversation's requests in the turn of `prompt`
    /// (those whose last user message holds it).
    pub(crate) fn turn(&self, prompt: &str) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path == COMPLETIONS)
            .map(|r| r.body)
            .filter(|body| last_user_text(body).is_some_and(|text| text.contains(prompt)))
            .collect()
    }

    /// One line per request (method, path, number of messages, the last
    /// one's role), for failure messages.
    pub(crate) fn summary(&self) -> String {
        self.requests().iter().fold(String::new(), |mut out, r| {
            let messages = r.body["messages"].as_array().map_or(&[][..], Vec::as_slice);
            let last = messages.last().map_or(&Value::Null, |m| &m["role"]);
            let _ = writeln!(
                out,
                "{} {} messages={} last={last}",
                r.method,
                r.path,
                messages.len()
            );
            out
        })
    }
}

const COMPLETIONS: &str = "/v1/chat/completions";

fn answer(turns: &[Turn], request: &Recorded) -> Answer {
    let (method, path, body) = (
        request.method.as_str(),
        request.path.as_str(),
        &request.body,
    );
    match (method, path) {
        ("POST", COMPLETIONS) => {
            let reply = reply(turns, body);
            if body["stream"] == true {
                respond(StatusCode::OK, "text/event-stream", reply.events())
            } else {
                respond_json(StatusCode::OK, &reply.completion())
            }
        }
        _ => respond_json(
            StatusCode::NOT_FOUND,
            &json!({"error": {"type": "invalid_request_error", "code": "not_found",
                "message": format!("{method} {path} is not served by this stand-in")}}),
        ),
    }
}

/// What the model says in one answer.
enum Reply<'a> {
    Text(&'a str),
    /// A call: its id, name and arguments.
    Call(String, &'a str, &'a Value),
}

/// The answer to one request: by the turn its last user message belongs
/// to, and the number of tool results since (a retried request gets the
/// same answer). A request of no turn gets a short text.
fn reply<'a>(turns: &'a [Turn], request: &Value) -> Reply<'a> {
    let Some((at, text)) = last_user_message(request) else {
        return Reply::Text("OK");
    };
    let Some((n, turn)) = turns
        .iter()
        .enumerate()
        .find(|(_, turn)| text.contains(&turn.prompt))
    else {
        return Reply::Text("OK");
    };
    let done = request["messages"].as_array().unwrap()[at + 1..]
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    match turn.calls.get(done) {
        Some((name, arguments)) => Reply::Call(format!("call_{n}_{done}"), name, arguments),
        None => Reply::Text(&turn.last_words),
    }
}

impl Reply<'_> {
    /// The assistant's message, and why it ends.
    fn message(&self) -> (Value, &'static str) {
        match self {
            Self::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
            Self::Call(id, name, arguments) => (
                json!({"role": "assistant", "content": null, "tool_calls": [{
                    "index": 0, "id": id, "type": "function",
                    "function": {"name": name, "arguments": arguments.to_string()}}]}),
                "tool_calls",
            ),
        }
    }

    /// The answer as the streamed API sends it: the message whole in one
    /// chunk, its end in another, then `[DONE]`.
    fn events(&self) -> String {
        let (delta, finish) = self.message();
        let chunk = |choice: Value, usage: Value| {
            json!({"id": "chatcmpl-stand-in", "object": "chat.completion.chunk", "created": 0,
                "model": MODEL, "choices": [choice], "usage": usage})
        };
        [
            chunk(
                json!({"index": 0, "delta": delta, "finish_reason": null}),
                Value::Null,
            ),
            chunk(
                json!({"index": 0, "delta": {}, "finish_reason": finish}),
                json!({"prompt_tokens": 16, "completion_tokens": 8, "total_tokens": 24}),
            ),
        ]
        .iter()
        .fold(String::new(), |mut out, chunk| {
            let _ = write!(out, "data: {chunk}\n\n");
            out
        }) + "data: [DONE]\n\n"
    }

    /// The answer as one `chat.completion` (`stream: false`).
    fn completion(&self) -> Value {
        let (mut message, finish) = self.message();
        if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
            for call in calls {
                call.as_object_mut().unwrap().remove("index");
            }
        }
        json!({"id": "chatcmpl-stand-in", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 16, "completion_tokens": 8, "total_tokens": 24}})
    }
}

/// The last user message of `request`: its index and text.
fn last_user_message(request: &Value) -> Option<(usize, &str)> {
    let messages = request["messages"].as_array()?;
    let at = messages.iter().rposition(|m| m["role"] == "user")?;
    Some((at, text_of(&messages[at])?))
}

/// A message's text: its `content` string, or its text parts.
fn text_of(message: &Value) -> Option<&str> {
    let content = &message["content"];
    content.as_str().or_else(|| {
        content
            .as_array()?
            .iter()
            .find_map(|part| part["text"].as_str())
    })
}

/// The text of the last user message of `request`.
pub(crate) fn last_user_text(request: &Value) -> Option<&str> {
    last_user_message(request).map(|(_, text)| text)
}

/// The editor's selection as the CLI told the model in `request`: the
/// block after [`IDE_SELECTION`] up to `</ide_selection>`.
pub(crate) fn ide_selection(request: &Value) -> Option<&str> {
    let text = last_user_text(request)?;
    let after = text.split_once(IDE_SELECTION)?.1;
    Some(after.split_once("</ide_selection>")?.0)
}

/// The results of the calls of the turn `request` belongs to (the
/// `role: tool` messages after its last user message): `(tool_call_id,
/// content)`.
pub(crate) fn tool_results(request: &Value) -> Vec<(&str, &str)> {
    let Some((at, _)) = last_user_message(request) else {
        return Vec::new();
    };
    request["messages"].as_array().unwrap()[at + 1..]
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| Some((m["tool_call_id"].as_str()?, text_of(m)?)))
        .collect()
}
