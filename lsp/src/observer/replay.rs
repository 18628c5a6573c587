//! Replay: the synthetic messages that rebuild an observer's state in a
//! fresh observer elsewhere (a proxy handing its state to a new leader).
//!
//! The sequence is what an editor and a server would have said to reach the
//! same state: the `initialize` exchange (editor info, position encoding,
//! save support), a `didOpen` per document with its current text and
//! version (in tab order), an empty `didChange` for each dirty one, the
//! server's last diagnostics per file, and the active document's selection
//! (a private `$/ide-mcp/selection` notification, which the observer swallows;
//! every stream's replay carries it, so the one replayed last restores it).

use serde_json::{Value, json};

use super::client::REPLAY_SELECTION;
use super::stream::{MirrorDoc, Observer, Tracked};
use ide_mcp_tools::position::PositionEncoding;
use ide_mcp_tools::position::convert;
use ide_mcp_tools::uri::encoded_file_uri;
use ide_mcp_tools::{BufferStore, EditorAccess};

/// One replayed message body, and which side it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Replayed {
    /// Feed to [`Observer::from_client`].
    FromClient(Vec<u8>),
    /// Feed to [`Observer::from_server`].
    FromServer(Vec<u8>),
}

const REPLAY_ID: &str = "ide-mcp/replay";

fn body(value: &Value) -> Vec<u8> {
    value.to_string().into_bytes()
}

impl Observer {
    /// The messages that rebuild this observer's state (in the proxy, a
    /// follower sends them to its leader when it starts relaying).
    pub fn replay(&self) -> Vec<Replayed> {
        let mut out = self.replay_initialize();
        let ordered = self.docs_in_tab_order();
        for (uri, doc) in &ordered {
            out.push(Replayed::FromClient(body(&json!({
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {"textDocument": {
                    "uri": uri, "languageId": doc.language_id, "version": doc.version, "text": doc.text.to_string(),
                }},
            }))));
            let dirty = doc
                .path
                .as_ref()
                .and_then(|p| self.ws.documents.buffers.handle_for_path(p))
                .is_some_and(|h| h.is_dirty());
            if dirty {
                out.push(Replayed::FromClient(body(&json!({
                    "jsonrpc": "2.0",
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": uri, "version": doc.version},
                        "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": ""}],
                    },
                }))));
            }
        }
        self.replay_diagnostics(&mut out);
        // The workspace's selection, whichever stream's document it is in:
        // the stream replayed last restores it.
        if let Some(selection) = self.ws.active_selection()
            && let Some(path) = &selection.path
        {
            out.push(Replayed::FromClient(body(&json!({
                "jsonrpc": "2.0",
                "method": REPLAY_SELECTION,
                "params": {"uri": encoded_file_uri(path), "range": {"start": selection.start, "end": selection.end}},
            }))));
        }
        out
    }

    /// Feeds `messages` (from [`replay`](Self::replay)) to this observer.
    pub fn apply_replay(&mut self, messages: &[Replayed]) {
        for message in messages {
            match message {
                Replayed::FromClient(body) => drop(self.from_client(body)),
                Replayed::FromServer(body) => drop(self.from_server(body)),
            }
        }
    }

    fn replay_initialize(&self) -> Vec<Replayed> {
        let info = self.ws.editor_info().unwrap_or_default();
        let folders: Vec<Value> = info
            .folders
            .iter()
            .map(
                |f| json!({"uri": encoded_file_uri(f), "name": f.file_name().map(|n| n.to_string_lossy())}),
            )
            .collect();
        let mut capabilities =
            json!({"window": {"showDocument": {"support": self.editor_caps.can.show_document}}});
        if self.editor_caps.can.show_message {
            capabilities["window"]["showMessage"] = json!({});
        }
        capabilities["workspace"] = json!({
            "applyEdit": self.editor_caps.can.apply_edit,
            "workspaceEdit": {"documentChanges": self.editor_caps.can.document_changes},
        });
        if self.editor_caps.literal_actions {
            capabilities["textDocument"] = json!({"codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": []}}}});
        }
        let mut params = json!({
            "processId": info.pid,
            "workspaceFolders": if folders.is_empty() { Value::Null } else { Value::Array(folders) },
            "capabilities": capabilities,
        });
        if let Some(name) = info.name {
            params["clientInfo"] = json!({ "name": name });
        }
        let mut result = json!({"capabilities": {
            "positionEncoding": self.server.encoding.name(),
            "textDocumentSync": {"openClose": true, "change": 2, "save": self.server.saves},
        }});
        for (capability, provider) in &self.server.providers {
            result["capabilities"][capability] = provider.clone();
        }
        if let Some(name) = &self.server.name {
            result["serverInfo"] = json!({ "name": name });
        }
        // The server has not answered yet (the proxy attached right after
        // the editor's `initialize`): the request with its own id, so that
        // the copy of the server's answer, when it comes, is matched to it.
        let pending = self
            .tracked
            .iter()
            .find(|(_, tracked)| matches!(tracked, Tracked::Initialize))
            .map(|(id, _)| match id {
                super::envelope::Id::Number(n) => json!(n),
                super::envelope::Id::String(s) => json!(s),
            });
        if let Some(id) = pending {
            return vec![Replayed::FromClient(body(&json!({
                "jsonrpc": "2.0", "id": id, "method": "initialize", "params": params,
            })))];
        }
        vec![
            Replayed::FromClient(body(&json!({
                "jsonrpc": "2.0", "id": REPLAY_ID, "method": "initialize", "params": params,
            }))),
            Replayed::FromServer(body(
                &json!({"jsonrpc": "2.0", "id": REPLAY_ID, "result": result}),
            )),
        ]
    }

    /// This stream's documents: the file-backed ones in tab order, then the
    /// others.
    fn docs_in_tab_order(&self) -> Vec<(&String, &MirrorDoc)> {
        let tabs = self.ws.documents.paths_of(self.stream);
        let rank = |doc: &MirrorDoc| {
            doc.path
                .as_ref()
                .and_then(|p| tabs.iter().position(|t| t == p))
                .unwrap_or(usize::MAX)
        };
        let mut docs: Vec<_> = self.docs.iter().collect();
        docs.sort_by_key(|(uri, doc)| (rank(doc), (*uri).clone()));
        docs
    }

    fn replay_diagnostics(&self, out: &mut Vec<Replayed>) {
        for path in self.ws.diagnostics.files_of(self.stream) {
            let Some(diagnostics) = self.ws.diagnostics.of_stream(self.stream, &path) else {
                continue;
            };
            let open = self
                .docs
                .iter()
                .find(|(_, d)| d.path.as_ref() == Some(&path));
            let mut diagnostics = diagnostics.to_vec();
            let (uri, version) = match open {
                Some((uri, doc)) => {
                    if self.server.encoding != PositionEncoding::Utf16 {
                        for d in &mut diagnostics {
                            let to = self.server.encoding;
                            d.range.start =
                                convert(&doc.text, d.range.start, PositionEncoding::Utf16, to);
                            d.range.end =
                                convert(&doc.text, d.range.end, PositionEncoding::Utf16, to);
                        }
                    }
                    (uri.clone(), Some(doc.version))
                }
                None => (encoded_file_uri(&path), None),
            };
            let mut params = json!({"uri": uri, "diagnostics": diagnostics});
            if let Some(version) = version {
                params["version"] = json!(version);
            }
            out.push(Replayed::FromServer(body(&json!({
                "jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params,
            }))));
        }
    }
}
