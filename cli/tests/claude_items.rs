//! The real `claude` CLI, run as `claude -p`, with the headless host's
//! registry served over Streamable HTTP (`claude mcp add --transport
//! http`): the `fix_diagnostics` prompt is a slash command
//! (`/mcp__ide-mcp__fix_diagnostics`, its arguments by position), and an
//! open document's text, unsaved edits included, reaches the model through
//! the CLI's `ReadMcpResourceTool`. The model is the scripted stand-in of
//! the Messages API on loopback (`common::model`); nothing leaves the
//! machine.
//!
//! The server is the one `ide-mcp serve --http` runs (the headless
//! registry, the runtime's HTTP transport, a fresh bearer token), over an
//! in-memory workspace: a headless host reads its open files from disk, so
//! only an editor has unsaved text, and this one is written by the test.
//!
//! What CLI 2.1.332 does with them (its bundle, and the requests the
//! stand-in records):
//! - each prompt of a server is a command `mcp__<server>__<prompt>`; its
//!   arguments are the command's words, by position; the CLI calls
//!   `prompts/get` and sends each message's content as the user turn (a
//!   `resource` content as its text);
//! - an `@<server>:<uri>` mention of a listed resource (not a template) is,
//!   in the interactive CLI (run in tmux), read with `resources/read`
//!   before the first request, with no permission prompt when it is typed
//!   in the composer (the `ReadMcpResourceTool` rules alone are checked),
//!   and its text sent after the user's message, as typed, in a message of
//!   the `system` role: `Full contents of resource:\n<text>\nDo NOT read
//!   this resource again …`; `claude -p` starts its query with no MCP
//!   resources known (`mcpResources: {}`) and sends the mention as typed;
//! - `ReadMcpResourceTool` (`{"server", "uri"}`) is deferred, as MCP tools
//!   are (named to the model, its schema fetched with `ToolSearch`), and
//!   its result is the `resources/read` result as JSON text.
//!
//! Needs `claude` (and `tmux`, for the interactive CLI); skips as the
//! other `claude_*` tests do.

mod common;

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::Running;
use common::claude::Deadline;
use common::lsp::Place;
use common::model::{ModelStandIn, Script, ToolCall, tool_results, user_messages};
use common::tmux::Terminal;
use ide_mcp_runtime::{HttpOptions, HttpServerHandle, Server};
use ide_mcp_tools::memory::{MemoryBuffers, MemoryWorkspace};
use ide_mcp_tools::{BufferId, BufferStore, DocumentHandle};
use lsp_types::{Diagnostic, DiagnosticSeverity, Position, Range};
use serde_json::{Value, json};

/// The server's name in the CLI's configuration.
const SERVER: &str = "ide-mcp";
/// The bearer token of the test's server.
const TOKEN: &str = "ide-mcp-claude-items-test-token-0123456789";
/// `src/main.rs` as saved, and as the editor holds it, unsaved.
const SAVED: &str = "fn main() {}\n";
const UNSAVED: &str = "fn main() { foo; }\n";
const ERROR: &str = "cannot find value `foo` in this scope";
/// The model's answer to either request.
const LAST_WORDS: &str = "Done with the editor's state.";
/// The id of the model's `ToolSearch` call.
const SEARCH_ID: &str = "toolu_stand_in_search";
/// The id of the model's `ReadMcpResourceTool` call.
const READ_ID: &str = "toolu_stand_in_read_resource";
/// One run of the CLI, at most.
const RUN: Duration = Duration::from_mins(3);

/// The workspace: `src/main.rs` open with unsaved text and rustc's error
/// on it; the server over it; the CLI's configuration of it.
struct Editor {
    place: Place,
    main_rs: std::path::PathBuf,
    /// The server's buffer store, which records what it is asked.
    buffers: Arc<Recording>,
    http: Option<HttpServerHandle>,
    runtime: tokio::runtime::Runtime,
}

impl Editor {
    fn start() -> Self {
        let place = Place::new();
        let main_rs = place.workspace.join("src/main.rs");
        std::fs::create_dir_all(main_rs.parent().unwrap()).unwrap();
        std::fs::write(&main_rs, SAVED).unwrap();
        let ws = MemoryWorkspace::new();
        ws.open(BufferId(1), Some(&main_rs), "rust", SAVED);
        ws.buffers.set_text(BufferId(1), UNSAVED);
        ws.diagnostics.set(
            main_rs.as_path(),
            vec![Diagnostic {
                severity: Some(DiagnosticSeverity::ERROR),
                source: Some("rustc".into()),
                ..Diagnostic::new_simple(
                    Range::new(Position::new(0, 12), Position::new(0, 15)),
                    ERROR.into(),
                )
            }],
        );
        let buffers = Arc::new(Recording {
            inner: Arc::clone(&ws.buffers),
            found: Mutex::new(Vec::new()),
            listings: AtomicUsize::new(0),
        });
        let cx = ws
            .editor_ports()
            .buffers(Arc::clone(&buffers) as Arc<dyn BufferStore>)
            .workspace_folder(&place.workspace)
            .build();
        let server = Server::builder("ide-mcp", env!("CARGO_PKG_VERSION"))
            .registry(Arc::new(ide_mcp::run::headless_registry(false).unwrap()))
            .state(cx)
            .build()
            .unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let http = runtime
            .block_on(server.serve_http(HttpOptions {
                auth_token: Some(TOKEN.to_owned()),
                ..HttpOptions::default()
            }))
            .unwrap();
        common::claude::write_config(&place.config(), &place.workspace);
        Self {
            place,
            main_rs,
            buffers,
            http: Some(http),
            runtime,
        }
    }

    /// The document's URI, as `resources/list` gives it.
    fn document_uri(&self) -> String {
        format!("file://{}", self.main_rs.display())
    }

    /// The CLI's `--mcp-config` file: this server alone.
    fn mcp_config(&self) -> std::path::PathBuf {
        let http = self.http.as_ref().unwrap();
        let config = json!({"mcpServers": {SERVER: {
            "type": "http",
            "url": http.url(),
            "headers": {"Authorization": format!("Bearer {TOKEN}")},
        }}});
        let config_file = self.place.dir.path().join("mcp.json");
        std::fs::write(&config_file, config.to_string()).unwrap();
        config_file
    }

    /// `claude -p <prompt>` in the workspace, with this server alone as
    /// its MCP server and `model` as its API; what it printed.
    fn claude(&self, model: &ModelStandIn, prompt: &str, extra: &[&str]) -> String {
        let config_file = self.mcp_config();
        let mut command = Command::new("claude");
        command
            .arg("-p")
            .arg(prompt)
            .arg("--mcp-config")
            .arg(&config_file)
            .arg("--strict-mcp-config")
            .args(extra)
            .current_dir(&self.place.workspace)
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        common::claude::isolate(&mut command, &self.place, model);
        let mut running = Running::spawn(command);
        let mut stdout = running.child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut out = String::new();
            let _ = stdout.read_to_string(&mut out);
            out
        });
        let status = running.wait_timeout(RUN);
        let out = reader.join().unwrap();
        eprintln!("claude_items: claude -p stderr:\n{}", running.stderr());
        assert!(
            status.success(),
            "claude -p {prompt:?}: {status}\nstdout:\n{out}\nstderr:\n{}\nthe stand-in's requests:\n{}",
            running.stderr(),
            model.summary()
        );
        out
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        if let Some(http) = self.http.take() {
            self.runtime.block_on(http.shutdown());
        }
    }
}

/// The server's buffer store: the workspace's, recording the paths it
/// found a document for (what reading a `file://` resource asks it; no
/// other request of these tests does) and how many times it was asked
/// for dirty flags (what listing the documents asks it).
struct Recording {
    inner: Arc<MemoryBuffers>,
    found: Mutex<Vec<std::path::PathBuf>>,
    listings: AtomicUsize,
}

impl BufferStore for Recording {
    fn handle_for(&self, id: BufferId) -> Option<DocumentHandle> {
        self.inner.handle_for(id)
    }

    fn handle_for_path(&self, path: &std::path::Path) -> Option<DocumentHandle> {
        let handle = self.inner.handle_for_path(path);
        if handle.is_some() {
            self.found.lock().unwrap().push(path.to_owned());
        }
        handle
    }

    fn dirty_flags(&self, ids: &[BufferId]) -> Vec<bool> {
        self.listings.fetch_add(1, Ordering::SeqCst);
        self.inner.dirty_flags(ids)
    }

    fn generation(&self) -> Option<u64> {
        self.inner.generation()
    }
}

/// The first request of the conversation whose user turn holds `text`.
fn first_request(model: &ModelStandIn, text: &str) -> Value {
    model
        .conversation(text)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no request holds {text:?}:\n{}", model.summary()))
}

/// The text blocks (or whole text) of the request's last user message.
fn user_texts(request: &Value) -> Vec<String> {
    let last = user_messages(request).last().unwrap();
    match &last["content"] {
        Value::String(text) => vec![text.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str().map(str::to_owned))
            .collect(),
        other => panic!("a user message's content: {other}"),
    }
}

#[test]
fn the_prompt_is_a_slash_command_with_its_arguments_by_position() {
    if !common::installed("claude") {
        return;
    }
    let editor = Editor::start();
    let main_rs = editor.main_rs.display().to_string();

    // `/mcp__ide-mcp__fix_diagnostics`: the CLI gets the prompt
    // (`prompts/get`) and sends its messages as the user turn.
    let expected = format!(
        "Fix the errors the editor reports in the open files. Read each file before you edit it, fix the cause rather than the symptom, and keep unrelated code as it is.\n\n{main_rs}:1:13: Error: {ERROR} (rustc)\n"
    );
    let model = ModelStandIn::start(Script {
        prompt: "Fix the errors the editor reports".to_owned(),
        calls: Vec::new(),
        last_words: LAST_WORDS.to_owned(),
    });
    let said = editor.claude(&model, &format!("/mcp__{SERVER}__fix_diagnostics"), &[]);
    assert_eq!(said.trim(), LAST_WORDS, "{}", model.summary());
    let request = first_request(&model, "Fix the errors the editor reports");
    // After the CLI's own reminders: the command as typed, then each of
    // the prompt's messages, the embedded resource as its text.
    let texts = user_texts(&request);
    let [command, text, resource] = &texts[texts.len().saturating_sub(3)..] else {
        panic!("{texts:#?}");
    };
    assert_eq!(
        command,
        &format!(
            "<command-message>mcp__{SERVER}__fix_diagnostics</command-message>\n<command-name>/mcp__{SERVER}__fix_diagnostics</command-name>\n"
        )
    );
    assert_eq!(text, &expected);
    let resource = resource
        .strip_prefix(&format!("[Resource from {SERVER} at ide://diagnostics] "))
        .unwrap_or_else(|| panic!("{resource}"));
    assert_eq!(
        serde_json::from_str::<Value>(resource).unwrap(),
        json!([{"uri": editor.document_uri(), "diagnostics": [{
            "message": ERROR, "severity": "Error", "source": "rustc",
            "range": {"start": {"line": 0, "character": 12}, "end": {"line": 0, "character": 15}},
        }]}])
    );
    drop(model);

    // Its arguments are the command's words, in the order the prompt
    // lists them (`file`, `warnings`).
    let model = ModelStandIn::start(Script {
        prompt: "Fix the errors and warnings".to_owned(),
        calls: Vec::new(),
        last_words: LAST_WORDS.to_owned(),
    });
    let said = editor.claude(
        &model,
        &format!("/mcp__{SERVER}__fix_diagnostics {main_rs} yes"),
        &[],
    );
    assert_eq!(said.trim(), LAST_WORDS, "{}", model.summary());
    let texts = user_texts(&first_request(&model, "Fix the errors and warnings"));
    assert_eq!(
        texts[texts.len().saturating_sub(2)],
        format!(
            "Fix the errors and warnings the editor reports in `{main_rs}`. Read each file before you edit it, fix the cause rather than the symptom, and keep unrelated code as it is.\n\n{main_rs}:1:13: Error: {ERROR} (rustc)\n"
        ),
        "{texts:#?}"
    );
}

#[test]
fn an_open_document_s_unsaved_text_is_read_with_read_mcp_resource_tool() {
    if !common::installed("claude") {
        return;
    }
    let editor = Editor::start();
    // `claude -p` leaves `@ide-mcp:file:///…` mentions as they are typed:
    // its non-interactive query starts with no MCP resources known
    // (`mcpResources: {}`), so no mention names a listed one (the
    // interactive CLI reads those with `resources/read` and adds their text
    // to the user turn). The model reads the document with the CLI's
    // `ReadMcpResourceTool`, which the CLI offers beside the server's
    // tools, and gets its text, unsaved edits included.
    let uri = editor.document_uri();
    let prompt = format!("Explain @{SERVER}:{uri} to me.");
    let model = ModelStandIn::start(Script {
        prompt: prompt.clone(),
        // Deferred as MCP tools are: its schema is fetched first.
        calls: vec![
            ToolCall {
                id: SEARCH_ID,
                name: "ToolSearch".to_owned(),
                input: json!({"query": "select:ReadMcpResourceTool"}),
            },
            ToolCall {
                id: READ_ID,
                name: "ReadMcpResourceTool".to_owned(),
                input: json!({"server": SERVER, "uri": uri}),
            },
        ],
        last_words: LAST_WORDS.to_owned(),
    });
    let said = editor.claude(&model, &prompt, &[]);
    assert_eq!(said.trim(), LAST_WORDS, "{}", model.summary());
    let conversation = model.conversation(&prompt);
    let first = &conversation[0];
    assert_eq!(
        user_texts(first).last().unwrap(),
        &prompt,
        "the mention is not resolved in -p mode"
    );
    let last = conversation.last().unwrap();
    let result = tool_results(last)
        .find(|block| block["tool_use_id"] == READ_ID)
        .unwrap_or_else(|| panic!("no result of the read in the last request: {last}"));
    // The `resources/read` result, as JSON text.
    let content = result["content"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    assert_eq!(
        (
            common::model::said(result),
            serde_json::from_str::<Value>(content).unwrap()
        ),
        (
            json!({"type": "tool_result", "tool_use_id": READ_ID, "content": content}),
            json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": UNSAVED}]})
        )
    );
    // Loaded by the search, with the schema the script was written for.
    let tool = conversation[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "ReadMcpResourceTool")
        .unwrap_or_else(|| panic!("not loaded: {}", conversation[1]["tools"]));
    assert_eq!(
        tool["input_schema"]["required"],
        json!(["server", "uri"]),
        "{tool}"
    );
}

/// The interactive test, start to end, at most.
const INTERACTIVE: Duration = Duration::from_mins(4);
/// What the CLI shows under the user's message once it read the mention.
const READ_SHOWN: &str = "Read MCP resource main.rs from ide-mcp";
/// What the CLI puts before a mentioned resource's text: its attachment's
/// three text blocks (these words, the text, a warning) reach the API
/// joined by newlines, in one text with the CLI's environment notes.
const CONTENTS_BEFORE: &str = "Full contents of resource:\n";
/// What the CLI puts after it, up to the environment notes.
const CONTENTS_AFTER: &str = "\nDo NOT read this resource again unless you think it may have changed, since you already have the full contents.\n\n";

#[test]
fn a_mention_in_the_interactive_cli_sends_the_open_document_s_unsaved_text() {
    if !common::installed("claude") || !common::installed("tmux") {
        return;
    }
    let start = Instant::now();
    let deadline = Deadline(start + INTERACTIVE);
    let editor = Editor::start();
    let uri = editor.document_uri();
    // The mention as typed, in the middle of the line: the CLI takes
    // `@<server>:<uri>` up to the next space (its `@` completion offers
    // `ide-mcp:<uri>` for each listed resource; it need not be accepted).
    let prompt = format!("Explain @{SERVER}:{uri} to me");
    let model = ModelStandIn::start(Script {
        prompt: prompt.clone(),
        calls: Vec::new(),
        last_words: LAST_WORDS.to_owned(),
    });
    let config_file = editor.mcp_config();
    let claude = Terminal::start(
        &editor.place.dir.path().join("tmux"),
        &editor.place.workspace,
        (200, 50),
        &[
            "claude",
            "--mcp-config",
            config_file.to_str().unwrap(),
            "--strict-mcp-config",
            "--permission-mode",
            "default",
        ],
        |command| common::claude::isolate(command, &editor.place, &model),
    );
    // A mention is read only if it names a resource the CLI has listed
    // (`resources/list`, served once the server is connected).
    while editor.buffers.listings.load(Ordering::SeqCst) == 0 {
        assert!(
            !deadline.left().is_zero(),
            "the CLI never listed the resources:\n{}",
            claude.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    claude.wait_for("? for shortcuts", deadline.left(), || model.summary());
    claude.type_text(&prompt);
    claude.wait_for(&prompt, deadline.left(), String::new);
    claude.press("Enter");

    // No permission prompt: the mention is in the line as submitted from
    // the composer, so only the rules are checked, and none denies or asks
    // (2.1.332's `t2i`: `if(Q.has(Se)){…Nt=(jr(…)??pu(Qt,_e,ht,"deny"))
    // ===null?"allow":"deny"}else Nt=(await bse(_e,ht,…)).behavior`, `Q`
    // the mentions of `submittedLineAsShown`; `bse` is the prompt). The
    // CLI reads the document before it asks the model.
    let screen = claude.wait_for(LAST_WORDS, deadline.left(), || model.summary());
    assert!(screen.contains(READ_SHOWN), "{screen}");
    assert!(!screen.contains("Do you want to proceed?"), "{screen}");
    assert_eq!(
        *editor.buffers.found.lock().unwrap(),
        std::slice::from_ref(&editor.main_rs),
        "one `resources/read` of {uri}"
    );

    // The first request: the user's message as typed, then a message of
    // the `system` role whose text begins with the document's text,
    // unsaved edits included, between the CLI's words (the rest of that
    // text is the CLI's environment notes).
    let request = first_request(&model, &prompt);
    let messages = request["messages"].as_array().unwrap();
    let at = messages
        .iter()
        .position(|message| {
            message["role"] == "user"
                && message["content"]
                    .as_array()
                    .and_then(|blocks| blocks.last())
                    .is_some_and(|block| block["text"] == prompt.as_str())
        })
        .unwrap_or_else(|| panic!("no user message ends with the prompt: {request}"));
    let attached = &messages[at + 1];
    let text = attached["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(
        (
            &attached["role"],
            attached["content"].as_array().map(Vec::len)
        ),
        (&json!("system"), Some(1)),
        "{attached}"
    );
    assert!(
        text.starts_with(&format!("{CONTENTS_BEFORE}{UNSAVED}{CONTENTS_AFTER}")),
        "{text}"
    );
    eprintln!(
        "claude_items: done in {:?}; the stand-in's requests:\n{}",
        start.elapsed(),
        model.summary()
    );
    drop(claude);
}
