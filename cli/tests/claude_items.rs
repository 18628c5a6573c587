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
//!   in the interactive CLI, read with `resources/read` before the first
//!   request (if the `ReadMcpResourceTool` permission allows it) and its
//!   text added to the user turn; `claude -p` starts its query with no MCP
//!   resources known (`mcpResources: {}`) and sends the mention as typed;
//! - `ReadMcpResourceTool` (`{"server", "uri"}`) is deferred, as MCP tools
//!   are (named to the model, its schema fetched with `ToolSearch`), and
//!   its result is the `resources/read` result as JSON text.
//!
//! Needs `claude` alone; skips as the other `claude_*` tests do.

mod common;

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use common::Running;
use common::lsp::Place;
use common::model::{ModelStandIn, Script, ToolCall, tool_results, user_messages};
use ide_mcp_runtime::{HttpOptions, HttpServerHandle, Server};
use ide_mcp_tools::BufferId;
use ide_mcp_tools::memory::MemoryWorkspace;
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
        let cx = ws.read_context().workspace_folder(&place.workspace).build();
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
            http: Some(http),
            runtime,
        }
    }

    /// The document's URI, as `resources/list` gives it.
    fn document_uri(&self) -> String {
        format!("file://{}", self.main_rs.display())
    }

    /// `claude -p <prompt>` in the workspace, with this server alone as
    /// its MCP server and `model` as its API; what it printed.
    fn claude(&self, model: &ModelStandIn, prompt: &str, extra: &[&str]) -> String {
        let http = self.http.as_ref().unwrap();
        let config = json!({"mcpServers": {SERVER: {
            "type": "http",
            "url": http.url(),
            "headers": {"Authorization": format!("Bearer {TOKEN}")},
        }}});
        let config_file = self.place.dir.path().join("mcp.json");
        std::fs::write(&config_file, config.to_string()).unwrap();
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
        (result, serde_json::from_str::<Value>(content).unwrap()),
        (
            &json!({"type": "tool_result", "tool_use_id": READ_ID, "content": content}),
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
