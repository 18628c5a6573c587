//! The live LSP tools over the editor's own servers: the workspace as the
//! tools' [`LanguageServers`].
//!
//! A question goes to the server of a stream that has the file open, else
//! of one whose editor opened files of its language
//! ([`ServerRequests::route_for`](super::servers::ServerRequests)); the
//! server must provide the feature. Positions go from the model's count
//! (1-based, Unicode scalar values) to the server's encoding through the
//! document's text (the editor's, unsaved edits included, else the file's),
//! and back for every location, which comes with its line's text. A file
//! the server does not have open is opened on it for the question (text
//! from disk) and closed after, through the proxy only: neither the editor
//! nor the host's observer sees it; a question of several requests
//! (references by name, call hierarchy, rename, quick fixes) keeps it open
//! until its last answer.
//!
//! Here: the position questions and document symbols. [`symbols`]:
//! references by name; [`calls`]: the call hierarchy; [`rename`] and
//! [`fixes`]: edits, shown as diffs by [`edit`]; [`texts`]: positions and
//! answers as the model reads them.

mod calls;
mod edit;
mod fixes;
mod rename;
mod symbols;
mod texts;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ide_mcp_tools::{BufferStore, CharPosition, LanguageServers, LspFeature, LspFuture, LspQuery};
use lsp_types::Position;
use ropey::Rope;
use serde_json::{Map, Value, json};

use super::LspWorkspace;
use super::servers::{NoRoute, ServerRequests, ServerRoute};
use crate::mirror::PositionEncoding;
#[cfg(test)]
pub(crate) use fixes::OWN_COMMAND_PREFIX;
use ide_mcp_tools::uri::encoded_file_uri;
use texts::to_server;
use texts::{Texts, hover_text};

/// The workspace's servers, for the tools' [`ReadContext`](ide_mcp_tools::ReadContext).
pub(crate) struct Live(pub(crate) Arc<LspWorkspace>);

impl LanguageServers for Live {
    fn ask(&self, query: LspQuery) -> LspFuture {
        let ws = Arc::clone(&self.0);
        Box::pin(async move { ws.ask(query).await })
    }
}

/// The message for the model when no route was found.
fn no_route(error: NoRoute, path: &Path, feature: LspFeature) -> String {
    match error {
        NoRoute::NoServer => format!(
            "no language server of the editor's handles {}: open a file of its language in the editor first",
            path.display()
        ),
        NoRoute::Unsupported(Some(name)) => format!(
            "the language server for {} ({name}) does not provide {}",
            path.display(),
            feature.what()
        ),
        NoRoute::Unsupported(None) => format!(
            "the language server for {} does not provide {}",
            path.display(),
            feature.what()
        ),
    }
}

/// A document the IDE opened on a server for a question: closed when the
/// last question using it is done (dropped, answered or not).
struct OpenedForUs {
    servers: Arc<ServerRequests>,
    route: ServerRoute,
    path: PathBuf,
    uri: String,
}

impl Drop for OpenedForUs {
    fn drop(&mut self) {
        if self.servers.release_open(self.route.stream, &self.path) {
            let params = json!({"textDocument": {"uri": self.uri}});
            self.route.notify("textDocument/didClose", &params);
        }
    }
}

/// One question's server and file: the file's text as asked (the
/// editor's, else the disk's), and the file opened on the server for as
/// long as this lives, when the server did not have it.
struct Asking<'a> {
    ws: &'a LspWorkspace,
    route: ServerRoute,
    path: PathBuf,
    uri: String,
    text: Rope,
    /// The editor's version of `text`; `None` when the editor does not
    /// have the file open.
    version: Option<i32>,
    _opened: Option<OpenedForUs>,
}

impl<'a> Asking<'a> {
    /// The `textDocument` of the file.
    fn document(&self) -> Value {
        json!({"uri": self.uri})
    }

    /// The model's `at` in the server's count.
    fn position(&self, at: CharPosition) -> Position {
        to_server(&self.text, at, self.route.encoding)
    }

    /// The encoding the server counts in.
    fn encoding(&self) -> PositionEncoding {
        self.route.encoding
    }

    /// Sends request `method` to the server; its result, or the message
    /// for the model.
    async fn send(&self, method: &str, params: &Value) -> Result<Value, String> {
        self.ws
            .servers
            .send(&self.route, method, params)
            .await
            .map_err(|error| error.to_string())
    }

    /// The texts of the files of answers, this file's as asked.
    fn texts(&self) -> Texts<'a> {
        Texts::new(self.ws).with(&self.path, self.text.clone())
    }

    /// The version of `path` open in the editor: `text`'s for the file
    /// asked about, the editor's current one for the others.
    fn version_of(&self, path: &Path) -> Option<i32> {
        if path == self.path {
            return self.version;
        }
        self.ws
            .handle_for_path(path)
            .map(|handle| handle.snapshot().version)
    }

    /// The edit `edit` (a `WorkspaceEdit`) as the model reads it: diffs
    /// and file operations, in order ([`edit`]).
    fn preview(&self, edit: &Value) -> Result<Vec<Value>, String> {
        edit::preview(
            edit,
            &mut self.texts(),
            self.encoding(),
            &|path| self.version_of(path),
            &self.ws.workspace_folders(),
        )
    }

    /// The message saying the server does not provide `feature`.
    fn unsupported(&self, feature: LspFeature) -> String {
        no_route(
            NoRoute::Unsupported(self.route.name.clone()),
            &self.path,
            feature,
        )
    }

    /// A question about one position: references, definition,
    /// implementation, hover.
    async fn at(&self, feature: LspFeature, at: CharPosition) -> Result<Value, String> {
        let mut params = json!({"textDocument": self.document(), "position": self.position(at)});
        if feature == LspFeature::References {
            params["context"] = json!({"includeDeclaration": true});
        }
        let result = self.send(feature.method(), &params).await?;
        let mut texts = self.texts();
        if feature != LspFeature::Hover {
            return Ok(texts.locations(&result, self.encoding()));
        }
        if result.is_null() {
            return Ok(Value::Null);
        }
        let mut out = Map::new();
        out.insert("contents".into(), hover_text(&result["contents"]));
        if result["range"].is_object() {
            out.extend(texts.range(&self.path, &result["range"], self.encoding()));
        }
        Ok(Value::Object(out))
    }

    /// The file's symbols.
    async fn symbols(&self) -> Result<Value, String> {
        let params = json!({"textDocument": self.document()});
        let result = self
            .send(LspFeature::DocumentSymbols.method(), &params)
            .await?;
        let mut texts = self.texts();
        let symbols = result.as_array().map(Vec::as_slice).unwrap_or_default();
        Ok(symbols
            .iter()
            .map(|s| texts.symbol(Some(&self.path), s, self.encoding()))
            .collect())
    }
}

impl LspWorkspace {
    /// The text of `path`: the editor's when open, else the file's.
    pub(crate) fn text_of(&self, path: &Path) -> Option<Rope> {
        match self.handle_for_path(path) {
            Some(handle) => Some(handle.snapshot().text.clone()),
            None => std::fs::read_to_string(path).ok().map(Rope::from),
        }
    }

    /// Opens `path` on `route`'s server unless its editor has it open there.
    fn open_for_us(
        &self,
        route: &ServerRoute,
        path: &Path,
        uri: &str,
        text: &Rope,
    ) -> Result<Option<OpenedForUs>, String> {
        if self.documents.openers(path).contains(&route.stream) {
            return Ok(None);
        }
        let opened = OpenedForUs {
            servers: Arc::clone(&self.servers),
            route: route.clone(),
            path: path.to_path_buf(),
            uri: uri.to_owned(),
        };
        if self.servers.hold_open(route.stream, path) {
            let params = json!({"textDocument": {
                "uri": uri,
                "languageId": route.language_id.as_deref().unwrap_or_default(),
                "version": 0,
                "text": text.to_string(),
            }});
            if !route.notify("textDocument/didOpen", &params) {
                return Err("the document could not be opened on the language server".into());
            }
        }
        Ok(Some(opened))
    }

    /// The server for `feature` on `path`, with the file's text, the file
    /// opened on the server unless it has it.
    fn asking(&self, path: &Path, feature: LspFeature) -> Result<Asking<'_>, String> {
        let route = self
            .servers
            .route_for(path, &self.documents.openers(path), feature)
            .map_err(|error| no_route(error, path, feature))?;
        let (text, version) = if let Some(handle) = self.handle_for_path(path) {
            let snapshot = handle.snapshot();
            (snapshot.text.clone(), Some(snapshot.version))
        } else {
            let text = std::fs::read_to_string(path)
                .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
            (Rope::from(text), None)
        };
        let uri = encoded_file_uri(path);
        let opened = self.open_for_us(&route, path, &uri, &text)?;
        Ok(Asking {
            ws: self,
            route,
            path: path.to_path_buf(),
            uri,
            text,
            version,
            _opened: opened,
        })
    }

    async fn ask(&self, query: LspQuery) -> Result<Value, String> {
        let feature = query.feature();
        match query {
            LspQuery::WorkspaceSymbols { query } => self.workspace_symbols(&query).await,
            LspQuery::At { path, at, .. } => self.asking(&path, feature)?.at(feature, at).await,
            LspQuery::DocumentSymbols { path } => self.asking(&path, feature)?.symbols().await,
            LspQuery::ReferencesOf { path, symbol } => {
                self.asking(&path, feature)?.references_of(&symbol).await
            }
            LspQuery::Calls {
                path,
                at,
                direction,
            } => self.asking(&path, feature)?.calls(at, direction).await,
            LspQuery::Rename { path, at, new_name } => {
                self.asking(&path, feature)?.rename(at, &new_name).await
            }
            LspQuery::QuickFixes { path, line } => {
                self.asking(&path, feature)?.quick_fixes(line).await
            }
        }
    }

    /// `workspace/symbol` of every server that provides it, merged.
    async fn workspace_symbols(&self, query: &str) -> Result<Value, String> {
        let routes = self.servers.routes_providing(LspFeature::WorkspaceSymbols);
        if routes.is_empty() {
            return Err("no language server of the editor's provides workspace symbols".into());
        }
        let params = json!({"query": query});
        let asked = routes.iter().map(|route| {
            self.servers
                .send(route, LspFeature::WorkspaceSymbols.method(), &params)
        });
        // Concurrently: a slow server costs its own time, not the sum.
        let answers = futures_util::future::join_all(asked).await;
        let mut texts = Texts::new(self);
        let mut symbols = Vec::new();
        let mut errors = Vec::new();
        for (route, answer) in routes.iter().zip(answers) {
            match answer {
                Ok(Value::Array(found)) => {
                    symbols.extend(found.iter().map(|s| texts.symbol(None, s, route.encoding)));
                }
                Ok(_) => {}
                Err(error) => errors.push(error.to_string()),
            }
        }
        if symbols.is_empty()
            && let Some(error) = errors.into_iter().next()
        {
            return Err(error);
        }
        Ok(Value::Array(symbols))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_the_file_and_the_server() {
        let path = Path::new("/w/a.c");
        assert_eq!(
            no_route(
                NoRoute::Unsupported(Some("clangd".into())),
                path,
                LspFeature::References
            ),
            "the language server for /w/a.c (clangd) does not provide references"
        );
        assert!(
            no_route(NoRoute::NoServer, path, LspFeature::Hover).starts_with("no language server")
        );
    }
}
