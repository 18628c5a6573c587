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

use std::convert::Infallible;
use std::fmt::Write as _;
use std::process::Command;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

use super::lsp::Place;
use super::model::Recorded;
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
            super::remove_env(command, |name| {
                name.starts_with("GEMINI")
                    || name.starts_with("GOOGLE")
                    || name == "CI"
                    || name.starts_with("VSCODE")
                    || name == "TERM_PROGRAM"
            });
            place.environment(command);
            command
                .env("HOME", &home)
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

/// The running stand-in; dropping it stops it.
pub(crate) struct GeminiStandIn {
    pub(crate) port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

type State = (Arc<Script>, Arc<Mutex<Vec<Recorded>>>);

impl GeminiStandIn {
    /// Listens on 127.0.0.1, port 0, on a thread and runtime of its own.
    pub(crate) fn start(script: Script) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let state = (Arc::new(script), Arc::clone(&requests));
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(serve(listener, state, stopped));
        });
        Self {
            port,
            requests,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The requests so far, in the order they came.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
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

impl Drop for GeminiStandIn {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    state: State,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
    loop {
        let stream = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
        };
        let state = state.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| answer(request, state.clone()));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn answer(
    request: Request<Incoming>,
    (script, requests): State,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = request.method().to_string();
    let path = request.uri().path().to_owned();
    let bytes = request
        .into_body()
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    requests.lock().unwrap().push(Recorded {
        method: method.clone(),
        path: path.clone(),
        body: body.clone(),
    });
    let action = path.rsplit_once(':').map(|(_, action)| action);
    Ok(match (method.as_str(), action) {
        ("POST", Some("streamGenerateContent")) => {
            let data = script.reply(&body).to_string();
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
    })
}

impl Script {
    /// The answer to one request of the conversation, by the number of
    /// function responses in it (a retried request gets the same answer);
    /// other requests get a short text.
    fn reply(&self, request: &Value) -> Value {
        if !user_texts(request).any(|text| text.contains(&self.prompt)) {
            return response(&json!([{"text": "OK"}]));
        }
        let done = parts(request)
            .filter(|part| part.get("functionResponse").is_some())
            .count();
        match self.calls.get(done) {
            Some((name, args)) => {
                response(&json!([{"functionCall": {"name": name, "args": args}}]))
            }
            None => response(&json!([{"text": self.last_words}])),
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

fn respond(status: StatusCode, content_type: &'static str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn respond_json(status: StatusCode, value: &Value) -> Response<Full<Bytes>> {
    respond(status, "application/json", value.to_string())
}
