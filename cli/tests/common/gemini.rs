//! The real `gemini` CLI as the tests run it, and a stand-in of the Gemini
//! API on loopback playing a scripted model for it (the CLI is pointed at
//! it by `GOOGLE_GEMINI_BASE_URL`, with auth type `gemini-api-key`).
//!
//! What CLI 0.61.0 asks of the API: `POST
//! /v1beta/models/<model>:streamGenerateContent?alt=sse` for the
//! conversation (answered as server-sent events, each `data:` one
//! `GenerateContentResponse`), `POST /v1beta/models/<model>:generateContent`
//! for its helpers (the model router's JSON classification: answered `{}`,
//! which it takes as no opinion), `:countTokens`; anything else is a 404.
//! Every request is recorded for the test to inspect.
//!
//! The CLI runs in a home of the test's own (`~/.gemini/settings.json`:
//! the API key's auth, IDE mode on, no telemetry or update checks;
//! `~/.gemini/trustedFolders.json`: the workspace trusted) and the place's
//! `$TMPDIR`, where the editor's host writes its discovery file; with
//! `REMOTE_CONTAINERS=1`, as the README tells users whose editor and CLI
//! share a container.

use std::fmt::Write as _;
use std::ops::Deref;
use std::process::Command;

use hyper::StatusCode;
use serde_json::{Value, json};

use super::lsp::Place;
use super::stand_in::{Answer, Recorded, StandIn, respond, respond_json};
use super::tmux::Terminal;

/// Whether what a test of the CLI with a Neovim IDE needs is installed
/// (see [`super::neovim::installed_with`]).
pub(crate) fn installed() -> bool {
    super::neovim::installed_with("gemini")
}

/// A key; only the stand-in ever sees it.
pub(crate) const API_KEY: &str = "ide-mcp-stand-in-gemini-key";

/// What the CLI puts before the IDE context it adds to the conversation.
pub(crate) const IDE_CONTEXT: &str =
    "Here is the user's editor context as a JSON object. This is for your information only.";

/// `gemini` in a 160×50 terminal in the place's workspace, in a home of its
/// own (settings written here), with the stand-in as its API and nothing
/// of the user's Gemini account or settings.
pub(crate) fn start(place: &Place, model: &GeminiStandIn) -> Terminal {
    let home = place.home();
    let settings_dir = home.join(".gemini");
    std::fs::create_dir_all(&settings_dir).unwrap();
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "ide": {"enabled": true, "hasSeenNudge": true},
        "privacy": {"usageStatisticsEnabled": false},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
    });
    std::fs::write(settings_dir.join("settings.json"), settings.to_string()).unwrap();
    let trusted = json!({place.workspace.to_str().unwrap(): "TRUST_FOLDER"});
    std::fs::write(
        settings_dir.join("trustedFolders.json"),
        trusted.to_string(),
    )
    .unwrap();
    Terminal::start(
        &place.dir.path().join("tmux"),
        &place.workspace,
        (160, 50),
        &["gemini"],
        |command: &mut Command| {
            place.agent_environment(command, &["GEMINI", "GOOGLE"], &home);
            command
                .env(
                    "GOOGLE_GEMINI_BASE_URL",
                    format!("http://127.0.0.1:{}", model.port),
                )
                .env("GEMINI_API_KEY", API_KEY)
                // The CLI and the editor run on one machine: inside a
                // container the CLI would dial `host.docker.internal`
                // unless told it shares the editor's (the README's advice).
                .env("REMOTE_CONTAINERS", "1");
        },
    )
}

/// What the model does when the user's prompt contains `prompt`: makes
/// `calls` (name and arguments), one per answer, each once the result of
/// the one before is in, then answers `last_words`.
pub(crate) struct Script {
    pub(crate) prompt: String,
    pub(crate) calls: Vec<(String, Value)>,
    pub(crate) last_words: String,
}

/// The running stand-in (its requests, its port); dropping it stops it.
pub(crate) struct GeminiStandIn(StandIn);

impl Deref for GeminiStandIn {
    type Target = StandIn;

    fn deref(&self) -> &StandIn {
        &self.0
    }
}

impl GeminiStandIn {
    /// Listens on 127.0.0.1, port 0, playing `script`.
    pub(crate) fn start(script: Script) -> Self {
        Self::start_session(vec![script])
    }

    /// As [`start`](Self::start), for several prompts typed one after the
    /// other: each turn plays the script whose prompt the user typed last.
    pub(crate) fn start_session(turns: Vec<Script>) -> Self {
        Self(StandIn::start(move |request| answer(&turns, request)))
    }

    /// The bodies of the streamed requests of the scripted conversation
    /// (those with a user turn holding the prompt).
    pub(crate) fn conversation(&self, prompt: &str) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path.ends_with(":streamGenerateContent"))
            .map(|r| r.body)
            .filter(|body| user_texts(body).any(|text| text.contains(prompt)))
            .collect()
    }

    /// One line per request (method, path, number of contents).
    pub(crate) fn summary(&self) -> String {
        self.requests().iter().fold(String::new(), |mut out, r| {
            let contents = r.body["contents"].as_array().map_or(0, Vec::len);
            let _ = writeln!(out, "{} {} contents={contents}", r.method, r.path);
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
    let action = path.rsplit_once(':').map(|(_, action)| action);
    match (method, action) {
        ("POST", Some("streamGenerateContent")) => {
            let data = Script::reply(turns, body).to_string();
            respond(
                StatusCode::OK,
                "text/event-stream",
                format!("data: {data}\r\n\r\n"),
            )
        }
        ("POST", Some("generateContent")) => {
            respond_json(StatusCode::OK, &response(&json!([{"text": "{}"}])))
        }
        ("POST", Some("countTokens")) => respond_json(StatusCode::OK, &json!({"totalTokens": 1})),
        _ => respond_json(
            StatusCode::NOT_FOUND,
            &json!({"error": {"code": 404, "status": "NOT_FOUND",
                "message": format!("{method} {path} is not served by this stand-in")}}),
        ),
    }
}

impl Script {
    /// The answer to one request of the conversation: the turn is the
    /// script whose prompt the user's latest text holding one holds, its
    /// step the number of function responses after that text (a retried
    /// request gets the same answer); other requests get a short text.
    fn reply(turns: &[Self], request: &Value) -> Value {
        let parts: Vec<(&Value, &Value)> = request["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|content| Some((&content["role"], content["parts"].as_array()?)))
            .flat_map(|(role, parts)| parts.iter().map(move |part| (role, part)))
            .collect();
        let turn = parts
            .iter()
            .enumerate()
            .rev()
            .find_map(|(at, (role, part))| {
                let text = part["text"].as_str().filter(|_| *role == "user")?;
                let turn = turns.iter().find(|turn| text.contains(&turn.prompt))?;
                Some((turn, &parts[at..]))
            });
        let Some((turn, since)) = turn else {
            return response(&json!([{"text": "OK"}]));
        };
        let done = since
            .iter()
            .filter(|(_, part)| part.get("functionResponse").is_some())
            .count();
        match turn.calls.get(done) {
            Some((name, args)) => {
                response(&json!([{"functionCall": {"name": name, "args": args}}]))
            }
            None => response(&json!([{"text": turn.last_words}])),
        }
    }
}

/// A `GenerateContentResponse` of one candidate with `parts`.
fn response(parts: &Value) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts},
            "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 16, "candidatesTokenCount": 8, "totalTokenCount": 24},
    })
}

/// Every part of every content of `request`.
pub(crate) fn parts(request: &Value) -> impl Iterator<Item = &Value> {
    request["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|content| content["parts"].as_array())
        .flatten()
}

/// The text parts of the user's contents of `request`.
pub(crate) fn user_texts(request: &Value) -> impl Iterator<Item = &str> {
    request["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|content| content["role"] == "user")
        .filter_map(|content| content["parts"].as_array())
        .flatten()
        .filter_map(|part| part["text"].as_str())
}

/// The IDE context the CLI put into `request`: the JSON after
/// [`IDE_CONTEXT`] in a user's text part, if there is one.
pub(crate) fn ide_context(request: &Value) -> Option<Value> {
    let text = user_texts(request).find(|text| text.starts_with(IDE_CONTEXT))?;
    let json = text.split_once("```json\n")?.1.rsplit_once("\n```")?.0;
    serde_json::from_str(json).ok()
}
