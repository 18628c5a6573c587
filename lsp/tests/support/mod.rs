//! A scripted LSP session: messages in, verdicts and tool answers out.
// Each test file uses a part; `json!` literals read best passed by value.
#![allow(dead_code, unreachable_pub, clippy::needless_pass_by_value)]

use std::sync::Arc;

use ide_mcp_lsp::framing::Message;
use ide_mcp_lsp::{ClientVerdict, LspWorkspace, Observer, ServerVerdict, WorkspaceEvent};
use ide_mcp_runtime::{Registry, ToolContext};
use ide_mcp_tools::EditorPorts;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

// Keep the tools crate's registrations linked.
use ide_mcp_tools as _;

/// One editor↔server stream of a workspace, and what it sent to the editor.
pub struct Stream {
    pub observer: Observer,
    pub outgoing: mpsc::Receiver<Message>,
}

impl Stream {
    pub fn new(ws: &Arc<LspWorkspace>) -> Self {
        let (observer, outgoing) = Observer::new(Arc::clone(ws));
        Self { observer, outgoing }
    }

    /// The editor sends `message`.
    pub fn client(&mut self, message: Value) -> ClientVerdict {
        self.observer.from_client(message.to_string().as_bytes())
    }

    /// The server sends `message`.
    pub fn server(&mut self, message: Value) -> ServerVerdict {
        self.observer.from_server(message.to_string().as_bytes())
    }

    /// The editor sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        let verdict = self.client(json!({"jsonrpc": "2.0", "method": method, "params": params}));
        assert_eq!(verdict, ClientVerdict::Forward, "{method}");
    }

    /// The editor sends a request.
    pub fn request(&mut self, id: i64, method: &str, params: Value) -> ClientVerdict {
        self.client(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
    }

    /// The server answers request `id`.
    pub fn answer(&mut self, id: i64, result: Value) -> ServerVerdict {
        self.server(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    /// The server publishes diagnostics.
    pub fn publish(&mut self, uri: &str, version: Option<i32>, diagnostics: Value) {
        let mut params = json!({"uri": uri, "diagnostics": diagnostics});
        if let Some(version) = version {
            params["version"] = json!(version);
        }
        let verdict = self.server(json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params}));
        assert_eq!(verdict, ServerVerdict::Forward);
    }

    pub fn open(&mut self, uri: &str, language_id: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language_id, "version": version, "text": text}}),
        );
    }

    /// An incremental change `((l, c), (l, c)) → text` at `version`.
    pub fn change(&mut self, uri: &str, version: i32, range: ((u32, u32), (u32, u32)), text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": range_json(range), "text": text}],
            }),
        );
    }
}

pub fn range_json(((l1, c1), (l2, c2)): ((u32, u32), (u32, u32))) -> Value {
    json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
}

/// The editor's `initialize`, as Neovim 0.7 sends it (trimmed to what matters).
pub fn neovim_initialize(root: &str) -> Value {
    json!({
        "processId": 4242,
        "clientInfo": {"name": "Neovim", "version": "0.7.2"},
        "rootPath": root,
        "rootUri": format!("file://{root}"),
        "workspaceFolders": [{"uri": format!("file://{root}"), "name": root}],
        "initializationOptions": {},
        "trace": "off",
        "capabilities": {
            "textDocument": {
                "synchronization": {"didSave": true, "dynamicRegistration": false, "willSave": false},
                "codeAction": {
                    "dynamicRegistration": false,
                    "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["", "quickfix", "refactor", "source"]}},
                    "isPreferredSupport": true,
                },
                "publishDiagnostics": {"relatedInformation": true, "tagSupport": {"valueSet": [1, 2]}},
            },
            "window": {"showDocument": {"support": false}, "workDoneProgress": true},
            "workspace": {"workspaceFolders": true, "applyEdit": true},
        },
    })
}

/// Helix's `initialize` (trimmed): offers utf-8 and utf-32, shows documents.
pub fn helix_initialize(root: &str) -> Value {
    json!({
        "processId": 777,
        "clientInfo": {"name": "helix", "version": "25.07"},
        "rootUri": format!("file://{root}"),
        "workspaceFolders": [{"uri": format!("file://{root}"), "name": "ws"}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]},
            "textDocument": {
                "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["", "quickfix"]}}},
                "diagnostic": {"dynamicRegistration": false},
            },
            "window": {"showDocument": {"support": true}},
        },
    })
}

/// Calls tool `name` through its registered shim, as `tools/call` does, and
/// returns the parsed text of its result.
pub async fn tool(cx: &EditorPorts, name: &str, args: Value) -> Value {
    let registry = Registry::global().expect("the registry builds");
    let tool = registry
        .get(name)
        .unwrap_or_else(|| panic!("`{name}` is registered"));
    let tcx = ToolContext::new().with(cx.clone());
    let args = serde_json::value::RawValue::from_string(args.to_string()).unwrap();
    let bytes = tool.call(&tcx, Some(&args)).await;
    let result: Value = serde_json::from_slice(&bytes).expect("the result is JSON");
    assert_eq!(result.get("isError"), None, "{name}: {result}");
    let text = result["content"][0]["text"].as_str().expect("text content");
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// The answers of the five read tools.
pub async fn answers(cx: &EditorPorts, dirty_of: &[&str]) -> Value {
    let mut dirty = vec![];
    for path in dirty_of {
        dirty.push(tool(cx, "checkDocumentDirty", json!({"filePath": path})).await);
    }
    json!({
        "folders": tool(cx, "getWorkspaceFolders", json!({})).await,
        "editors": tool(cx, "getOpenEditors", json!({})).await,
        "selection": tool(cx, "getCurrentSelection", json!({})).await,
        "diagnostics": tool(cx, "getDiagnostics", json!({})).await,
        "dirty": dirty,
    })
}

/// The events sent since the last call.
pub fn drain(events: &mut broadcast::Receiver<WorkspaceEvent>) -> Vec<WorkspaceEvent> {
    let mut out = vec![];
    while let Ok(event) = events.try_recv() {
        out.push(event);
    }
    out
}
