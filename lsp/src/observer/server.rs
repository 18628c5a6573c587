//! Messages from the server: its `initialize` answer (position encoding,
//! save support), diagnostics pushed and pulled, code action answers.

use std::collections::HashMap;

use ide_mcp_tools::LspFeature;
use lsp_types::Diagnostic;
use serde::Deserialize;
use serde_json::Value;

use super::code_action::SEND_SELECTION_COMMAND;
use super::envelope::{Envelope, response};
use super::overlay::REVIEW_COMMANDS;
use super::stream::{Observer, ServerVerdict, Tracked, path_of};
use crate::lenient_diagnostics::{DiagnosticList, Published};
use ide_mcp_tools::position::PositionEncoding;
use ide_mcp_tools::position::convert;

/// A pull-diagnostics report (`textDocument/diagnostic`'s result, and each
/// of its `relatedDocuments`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    kind: String,
    #[serde(default)]
    items: DiagnosticList,
    #[serde(default)]
    related_documents: HashMap<String, Report>,
}

#[derive(Deserialize)]
struct Registrations {
    #[serde(default)]
    registrations: Vec<Registration>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Registration {
    method: String,
    #[serde(default)]
    register_options: Option<Value>,
}

impl Observer {
    pub(super) fn handle_server(&mut self, body: &[u8]) -> ServerVerdict {
        let Some(envelope) = Envelope::parse(body) else {
            return ServerVerdict::Forward;
        };
        match envelope.method.as_deref() {
            Some("textDocument/publishDiagnostics") => {
                self.publish_diagnostics(&envelope);
                if let Some(body) = envelope.params.and_then(|p| self.review_publish(p)) {
                    return ServerVerdict::Replace(body);
                }
            }
            Some("client/registerCapability") => self.register_capability(&envelope),
            Some(_) => {}
            None => return self.server_response(&envelope),
        }
        ServerVerdict::Forward
    }

    fn server_response(&mut self, envelope: &Envelope<'_>) -> ServerVerdict {
        if let Some(super::envelope::Id::String(id)) = envelope.request_id() {
            let answer = envelope.answer();
            // The answer to a request of the IDE's (a live LSP tool's):
            // the host's copy resolves it, the editor never sees it.
            if self.ws.servers.resolve(&id, answer) {
                return ServerVerdict::Drop;
            }
        }
        let Some(tracked) = envelope.request_id().and_then(|id| self.untrack(&id)) else {
            return ServerVerdict::Forward;
        };
        match tracked {
            Tracked::Initialize => return self.initialize_result(envelope),
            Tracked::CodeAction { uri, range } => {
                if let Some(body) = self.merge_code_actions(envelope, &uri, range) {
                    return ServerVerdict::Replace(body);
                }
            }
            Tracked::Diagnostic { uri, version } => {
                if let Some(report) = envelope.result::<Report>("textDocument/diagnostic") {
                    self.pulled(&uri, version, report);
                }
                if let (Some(id), Some(result)) = (envelope.id, envelope.result)
                    && let Some(result) = self.review_pulled(&uri, result)
                {
                    return ServerVerdict::Replace(response(id, &result));
                }
            }
        }
        ServerVerdict::Forward
    }

    fn initialize_result(&mut self, envelope: &Envelope<'_>) -> ServerVerdict {
        let Some(mut result) = envelope.result::<Value>("initialize") else {
            return ServerVerdict::Forward;
        };
        let caps = &result["capabilities"];
        // clangd before 15 negotiates with its own extension instead: the
        // editor offers `capabilities.offsetEncoding`, it answers
        // `offsetEncoding` beside `capabilities` (kak-lsp offers utf-8
        // first, so clangd 14 counts bytes).
        let named = caps["positionEncoding"]
            .as_str()
            .or_else(|| result["offsetEncoding"].as_str());
        self.server.encoding = PositionEncoding::from_name(named);
        self.ws
            .requests
            .set_encoding(self.stream, self.server.encoding);
        self.server.saves = match &caps["textDocumentSync"]["save"] {
            Value::Bool(save) => *save,
            Value::Object(_) => true,
            _ => false,
        };
        self.server.name = result["serverInfo"]["name"].as_str().map(str::to_owned);
        self.server.providers = LspFeature::ALL
            .iter()
            .filter_map(|f| Some((f.capability().to_owned(), caps.get(f.capability())?.clone())))
            .collect();
        self.ws.servers.initialized(
            self.stream,
            &Value::Object(self.server.providers.clone()),
            self.server.name.clone(),
            self.server.encoding,
        );
        if !self.options.advertise_command || !self.options.code_action {
            return ServerVerdict::Forward;
        }
        let provider = &mut result["capabilities"]["executeCommandProvider"];
        if !provider.is_object() {
            *provider = serde_json::json!({ "commands": [] });
        }
        let commands = &mut provider["commands"];
        if !commands.is_array() {
            *commands = Value::Array(vec![]);
        }
        if let Value::Array(list) = commands {
            list.push(Value::from(SEND_SELECTION_COMMAND));
            list.extend(REVIEW_COMMANDS.map(Value::from));
        }
        match (envelope.id, serde_json::to_vec(&result)) {
            (Some(id), Ok(result)) => ServerVerdict::Replace(response(id, &result)),
            _ => ServerVerdict::Forward,
        }
    }

    fn register_capability(&mut self, envelope: &Envelope<'_>) {
        let Some(params) = envelope.params::<Registrations>() else {
            return;
        };
        for registration in &params.registrations {
            if let Some(feature) = LspFeature::ALL
                .iter()
                .find(|f| f.method() == registration.method)
            {
                // The options say what the server does (`prepareProvider`,
                // `resolveProvider`); a replay carries them too.
                let options = match &registration.register_options {
                    Some(options @ Value::Object(_)) => options.clone(),
                    _ => Value::Bool(true),
                };
                self.ws
                    .servers
                    .registered(self.stream, &registration.method, &options);
                self.server
                    .providers
                    .insert(feature.capability().to_owned(), options);
            }
        }
        if params
            .registrations
            .iter()
            .any(|r| r.method == "textDocument/didSave")
        {
            self.server.saves = true;
            self.ws.documents.stream_saves(self.stream);
        }
    }

    fn publish_diagnostics(&mut self, envelope: &Envelope<'_>) {
        let Some(params) = envelope.params::<Published>() else {
            return;
        };
        let uri = params.uri.as_str();
        if let (Some(version), Some(doc)) = (params.version, self.docs.get(uri))
            && version < doc.version
        {
            tracing::debug!(
                uri,
                version,
                current = doc.version,
                "diagnostics of an older version; dropped"
            );
            return;
        }
        self.store_diagnostics(uri, params.version, params.diagnostics);
    }

    fn pulled(&mut self, uri: &str, version: Option<i32>, report: Report) {
        let current = self.docs.get(uri).map(|d| d.version);
        if let (Some(asked), Some(current)) = (version, current)
            && asked < current
        {
            tracing::debug!(
                uri,
                asked,
                current,
                "pulled diagnostics of an older version; dropped"
            );
            return;
        }
        match report.kind.as_str() {
            "full" => self.store_diagnostics(uri, version, report.items),
            "unchanged" => {
                if let Some(path) = path_of(&self.docs, uri) {
                    self.ws.diagnostics.unchanged(self.stream, &path, version);
                }
            }
            kind => tracing::warn!(uri, kind, "unknown diagnostic report kind; ignored"),
        }
        for (uri, related) in report.related_documents {
            let version = self.docs.get(&uri).map(|d| d.version);
            self.pulled(
                &uri,
                version,
                Report {
                    related_documents: HashMap::new(),
                    ..related
                },
            );
        }
    }

    /// Stores `stream`'s diagnostics of `uri`: ranges in UTF-16 (converted
    /// through the mirror when the session counts otherwise and the document
    /// is open), `source` set to the server's name where missing. What could
    /// not be read of them is logged (a warning once per stream).
    fn store_diagnostics(&mut self, uri: &str, version: Option<i32>, list: DiagnosticList) {
        self.unread
            .note(self.server.name.as_deref(), uri, list.unread);
        let mut diagnostics: Vec<Diagnostic> = list.kept;
        let Some(path) = path_of(&self.docs, uri) else {
            return;
        };
        if self.server.encoding != PositionEncoding::Utf16
            && let Some(doc) = self.docs.get(uri)
        {
            for d in &mut diagnostics {
                let from = self.server.encoding;
                d.range.start = convert(&doc.text, d.range.start, from, PositionEncoding::Utf16);
                d.range.end = convert(&doc.text, d.range.end, from, PositionEncoding::Utf16);
            }
        }
        if let Some(name) = &self.server.name {
            for d in diagnostics.iter_mut().filter(|d| d.source.is_none()) {
                d.source = Some(name.clone());
            }
        }
        self.ws
            .diagnostics
            .set(self.stream, &path, version, diagnostics.into());
    }
}
