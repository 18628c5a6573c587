//! Messages from the editor: documents opening, changing, saving and
//! closing; the cursor and selection its requests carry; its `initialize`.

use std::path::PathBuf;
use std::sync::Arc;

use lsp_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidSaveTextDocumentParams, Position,
    Range,
};
use ropey::Rope;
use serde::Deserialize;
use serde_json::Value;

use super::envelope::{DocumentId, Envelope, OpenParams, Parsed};
use super::stream::{ClientVerdict, MirrorDoc, Observer, Tracked};
use crate::mirror::apply_change;
use crate::workspace::{EditorInfo, EditorKind, OwnReload, WorkspaceEvent, process_name};
use ide_mcp_tools::position::PositionEncoding;
use ide_mcp_tools::position::convert;
use ide_mcp_tools::uri::encoded_uri_path;

/// The private notification [`Observer::replay`] uses to restore the
/// active document and its selection (UTF-16 positions).
pub(crate) const REPLAY_SELECTION: &str = "$/ide-mcp/selection";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    #[serde(default)]
    process_id: Option<u32>,
    #[serde(default)]
    client_info: Option<Named>,
    #[serde(default)]
    root_uri: Option<String>,
    #[serde(default)]
    root_path: Option<String>,
    #[serde(default)]
    workspace_folders: Option<Vec<Folder>>,
    #[serde(default)]
    capabilities: Value,
}

#[derive(Deserialize)]
struct Named {
    name: String,
}

#[derive(Deserialize)]
struct Folder {
    uri: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PositionParams {
    text_document: DocumentId,
    position: Position,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CodeActionParams {
    text_document: DocumentId,
    range: Range,
    #[serde(default)]
    context: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DocumentParams {
    text_document: DocumentId,
}

#[derive(Deserialize)]
pub(crate) struct SelectionParams {
    pub(crate) uri: String,
    pub(crate) range: Range,
}

impl Observer {
    pub(super) fn handle_client(&mut self, body: &[u8]) -> ClientVerdict {
        let Some(envelope) = Envelope::parse(body) else {
            return ClientVerdict::Forward;
        };
        let Some(method) = envelope.method.clone() else {
            return self.client_response(&envelope);
        };
        if envelope.id.is_some() || &*method == "textDocument/didChange" {
            // The user typed or asked something in this editor: it is the
            // one used last, where the IDE's requests go first.
            self.ws.requests.used(self.stream);
        }
        match &*method {
            "initialize" => self.initialize(&envelope),
            "textDocument/didOpen" => self.did_open(envelope),
            "textDocument/didChange" => self.did_change(envelope),
            "textDocument/didSave" => self.did_save(&envelope),
            "textDocument/didClose" => self.did_close(&envelope),
            "textDocument/codeAction" => {
                if let Some(body) = self.code_action_request(&envelope) {
                    return ClientVerdict::Replace(body);
                }
            }
            "textDocument/diagnostic" => self.diagnostic_request(&envelope),
            "workspace/executeCommand" => return self.execute_command(&envelope),
            REPLAY_SELECTION => {
                self.replayed_selection(&envelope);
                return ClientVerdict::Drop;
            }
            #[cfg(test)]
            "$/ide-mcp/test/panic" => panic!("a test asked the observer to panic"),
            _ if method.starts_with("textDocument/") && envelope.id.is_some() => {
                self.position_request(&envelope);
            }
            _ => {}
        }
        ClientVerdict::Forward
    }

    /// The editor's answer to a request: ours are swallowed.
    fn client_response(&self, envelope: &Envelope<'_>) -> ClientVerdict {
        let Some(super::envelope::Id::String(id)) = envelope.request_id() else {
            return ClientVerdict::Forward;
        };
        if self.ws.requests.resolve(&id, envelope.answer()) {
            ClientVerdict::Drop
        } else {
            ClientVerdict::Forward
        }
    }

    fn initialize(&mut self, envelope: &Envelope<'_>) {
        if let Some(id) = envelope.request_id() {
            self.track(id, Tracked::Initialize);
        }
        let Some(params) = envelope.params::<InitializeParams>() else {
            return;
        };
        let caps = &params.capabilities;
        self.editor_caps.can.show_document = caps
            .pointer("/window/showDocument/support")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        self.editor_caps.literal_actions = caps
            .pointer("/textDocument/codeAction/codeActionLiteralSupport")
            .is_some_and(Value::is_object);
        self.editor_caps.can.show_message = caps
            .pointer("/window/showMessage")
            .is_some_and(Value::is_object);
        self.editor_caps.can.apply_edit = caps
            .pointer("/workspace/applyEdit")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        self.editor_caps.can.document_changes = caps
            .pointer("/workspace/workspaceEdit/documentChanges")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        // eglot sends no `clientInfo`: its process's name tells.
        self.editor_caps.can.own_reload = params
            .client_info
            .as_ref()
            .map(|c| c.name.clone())
            .or_else(|| params.process_id.and_then(process_name))
            .map_or(OwnReload::Never, |name| EditorKind::of(&name).own_reload());
        self.ws
            .requests
            .set_editor_can(self.stream, self.editor_caps.can);
        let folders: Vec<PathBuf> = match (&params.workspace_folders, &params.root_uri) {
            (Some(folders), _) if !folders.is_empty() => folders
                .iter()
                .filter_map(|f| encoded_uri_path(&f.uri))
                .map(|p| p.to_path_buf())
                .collect(),
            (_, Some(root)) => encoded_uri_path(root)
                .map(|p| p.to_path_buf())
                .into_iter()
                .collect(),
            _ => params
                .root_path
                .iter()
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .collect(),
        };
        self.ws.set_editor(EditorInfo {
            name: params.client_info.map(|c| c.name),
            pid: params.process_id,
            folders,
            show_document: self.editor_caps.can.show_document,
        });
    }

    fn did_open(&mut self, envelope: Envelope<'_>) {
        let params = match envelope.parsed {
            Some(Parsed::DidOpen(params)) => params,
            _ => match envelope.params::<OpenParams>() {
                Some(params) => params,
                None => return,
            },
        };
        let item = params.text_document;
        let uri = item.uri.as_str().to_owned();
        let text = item.text.0;
        let path = encoded_uri_path(&uri);
        if let Some(path) = &path {
            self.ws
                .servers
                .opened_as(self.stream, path, &item.language_id);
            self.ws.documents.open(
                self.stream,
                self.server.saves,
                path,
                &item.language_id,
                text.clone(),
                item.version,
            );
            self.ws.emit(WorkspaceEvent::SelectionChanged);
            // Opened again with another text (Emacs reverts a buffer by
            // closing and opening it): as an edit.
            self.ws.emit(WorkspaceEvent::Edited {
                path: Arc::clone(path),
            });
        }
        let doc = MirrorDoc {
            path,
            language_id: item.language_id,
            text,
            version: item.version,
        };
        self.docs.insert(uri.clone(), doc);
        self.review_opened(&uri);
    }

    fn did_change(&mut self, envelope: Envelope<'_>) {
        let params = match envelope.parsed {
            Some(Parsed::DidChange(params)) => params,
            _ => match envelope.params::<DidChangeTextDocumentParams>() {
                Some(params) => params,
                None => return,
            },
        };
        let uri = params.text_document.uri.as_str();
        let Some(doc) = self.docs.get_mut(uri) else {
            tracing::warn!(uri, "didChange of a document that is not open; ignored");
            return;
        };
        for change in &params.content_changes {
            if apply_change(&mut doc.text, change, self.server.encoding).clamped {
                tracing::warn!(uri, range = ?change.range, "edit out of range; clamped");
            }
        }
        doc.version = params.text_document.version;
        if let Some(path) = &doc.path {
            if self
                .ws
                .documents
                .publish(path, &doc.text, doc.version, true)
            {
                self.ws.emit(WorkspaceEvent::SelectionChanged);
            }
            self.ws.diagnostics.edited(self.stream, path, doc.version);
            self.ws.emit(WorkspaceEvent::Edited {
                path: Arc::clone(path),
            });
        }
    }

    fn did_save(&mut self, envelope: &Envelope<'_>) {
        let Some(params) = envelope.params::<DidSaveTextDocumentParams>() else {
            return;
        };
        let uri = params.text_document.uri.as_str();
        let Some(doc) = self.docs.get_mut(uri) else {
            return;
        };
        if let Some(text) = &params.text {
            doc.text = Rope::from_str(text);
        }
        let Some(path) = &doc.path else { return };
        self.ws.documents.count_save(path);
        let activated = match &params.text {
            Some(_) => self
                .ws
                .documents
                .publish(path, &doc.text, doc.version, false),
            None => self.ws.documents.saved(path),
        };
        if activated {
            self.ws.emit(WorkspaceEvent::SelectionChanged);
        }
        self.ws.emit(WorkspaceEvent::Saved {
            path: Arc::clone(path),
        });
    }

    fn did_close(&mut self, envelope: &Envelope<'_>) {
        let Some(params) = envelope.params::<DidCloseTextDocumentParams>() else {
            return;
        };
        self.forget_document(params.text_document.uri.as_str());
        self.ws.emit(WorkspaceEvent::SelectionChanged);
    }

    /// Tracks the request for its answer; returns the request to forward
    /// instead when Claude's hunks must be stripped from its context.
    fn code_action_request(&mut self, envelope: &Envelope<'_>) -> Option<Vec<u8>> {
        let params = envelope.params::<CodeActionParams>()?;
        let uri = params.text_document.uri;
        self.select(&uri, params.range, self.server.encoding);
        // A request for some kinds only (`source.organizeImports` on save)
        // is not the user asking for actions: ours stays out.
        let filtered = params
            .context
            .get("only")
            .and_then(Value::as_array)
            .is_some_and(|only| !only.is_empty());
        if let Some(id) = envelope.request_id()
            && self.options.code_action
            && !filtered
        {
            self.track(
                id,
                Tracked::CodeAction {
                    uri,
                    range: params.range,
                },
            );
        }
        let stripped = Self::strip_hunks(envelope.params?)?;
        let mut request = serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/codeAction", "params": stripped});
        if let Some(id) = envelope.id {
            request["id"] = serde_json::from_str(id.get()).ok()?;
        }
        serde_json::to_vec(&request).ok()
    }

    fn diagnostic_request(&mut self, envelope: &Envelope<'_>) {
        let (Some(id), Some(params)) = (envelope.request_id(), envelope.params::<DocumentParams>())
        else {
            return;
        };
        let uri = params.text_document.uri;
        let version = self.docs.get(&uri).map(|d| d.version);
        self.track(id, Tracked::Diagnostic { uri, version });
    }

    /// A request with `textDocument` and `position`: the cursor.
    fn position_request(&mut self, envelope: &Envelope<'_>) {
        let Some(raw) = envelope.params else { return };
        let Ok(params) = serde_json::from_str::<PositionParams>(raw.get()) else {
            return;
        };
        let at = Range::new(params.position, params.position);
        self.select(&params.text_document.uri, at, self.server.encoding);
    }

    /// The workspace's selection, replayed: whichever stream opened the
    /// document, in UTF-16 positions.
    fn replayed_selection(&self, envelope: &Envelope<'_>) {
        let Some(params) = envelope.params::<SelectionParams>() else {
            return;
        };
        let Some(path) = encoded_uri_path(&params.uri) else {
            return;
        };
        let (start, end) = (params.range.start, params.range.end);
        if self.ws.documents.select(&path, start, end) {
            self.ws.emit(WorkspaceEvent::SelectionChanged);
        }
    }

    /// The editor's selection (or cursor) is `range` in document `uri`.
    pub(super) fn select(&mut self, uri: &str, range: Range, encoding: PositionEncoding) {
        let Some(doc) = self.docs.get(uri) else {
            return;
        };
        let Some(path) = &doc.path else { return };
        let start = convert(&doc.text, range.start, encoding, PositionEncoding::Utf16);
        let end = convert(&doc.text, range.end, encoding, PositionEncoding::Utf16);
        if self.ws.documents.select(path, start, end) {
            self.ws.emit(WorkspaceEvent::SelectionChanged);
        }
    }
}
