//! A question to a host's servers: the position questions and document
//! symbols here, the others in their own modules.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ide_mcp_tools::deny::RuleSet;
use ide_mcp_tools::{CharPosition, LanguageServers, LspFeature, LspFuture, LspQuery};
use lsp_types::Position;
use ropey::Rope;
use serde_json::{Map, Value, json};

use super::answers::{Texts, hover_text, to_server};
use super::edit;
use super::host::{Document, ServerFacts, ServerHost, unsupported};
use ide_mcp_tools::position::PositionEncoding;
use ide_mcp_tools::uri::encoded_file_uri;

/// A host's servers, for the tools' [`EditorPorts`](ide_mcp_tools::EditorPorts).
pub(crate) struct Live<H>(pub(crate) Arc<H>);

impl<H: ServerHost> LanguageServers for Live<H> {
    fn ask(&self, query: LspQuery, hidden: Arc<RuleSet>) -> LspFuture {
        let host = Arc::clone(&self.0);
        Box::pin(async move { ask(&*host, query, hidden).await })
    }
}

/// One question's server and file: the file's text as the server has it,
/// and the file opened on the server for as long as this lives, when the
/// server did not have it.
pub(super) struct Asking<'a, H: ServerHost> {
    pub(super) host: &'a H,
    pub(super) route: H::Route,
    pub(super) path: PathBuf,
    pub(super) uri: String,
    pub(super) text: Rope,
    /// The version of `text` the host has open; `None` when it does not
    /// have the file open.
    pub(super) version: Option<i32>,
    /// The user's deny rules: the files whose text is never read.
    pub(super) hidden: Arc<RuleSet>,
    pub(super) _held: Option<H::Held>,
}

impl<'a, H: ServerHost> Asking<'a, H> {
    /// The server for `feature` on `path`, with the file's text, the file
    /// opened on the server unless it has it; `hidden`'s files never read.
    pub(super) fn new(
        host: &'a H,
        path: &Path,
        feature: LspFeature,
        hidden: &Arc<RuleSet>,
    ) -> Result<Self, String> {
        let route = host.route_for(path, feature)?;
        let uri = encoded_file_uri(path);
        let Document {
            text,
            version,
            held,
        } = host.document(&route, path, &uri)?;
        Ok(Self {
            host,
            route,
            path: path.to_path_buf(),
            uri,
            text,
            version,
            hidden: Arc::clone(hidden),
            _held: held,
        })
    }

    /// What the server said of itself.
    pub(super) fn facts(&self) -> &ServerFacts {
        H::facts(&self.route)
    }

    /// The `textDocument` of the file.
    pub(super) fn document(&self) -> Value {
        json!({"uri": self.uri})
    }

    /// The model's `at` in the server's count.
    pub(super) fn position(&self, at: CharPosition) -> Position {
        to_server(&self.text, at, self.encoding())
    }

    /// The encoding the server counts in.
    pub(super) fn encoding(&self) -> PositionEncoding {
        self.facts().encoding
    }

    /// Sends request `method` to the server; its result, or the message
    /// for the model.
    pub(super) async fn send(&self, method: &str, params: &Value) -> Result<Value, String> {
        self.host
            .send(&self.route, method, params)
            .await
            .map_err(|error| error.to_string())
    }

    /// The texts of the files of answers, this file's as asked.
    pub(super) fn texts(&self) -> Texts<'a> {
        Texts::new(self.host)
            .hiding(Arc::clone(&self.hidden))
            .with(&self.path, self.text.clone())
    }

    /// The version of `path` the host has open: `text`'s for the file
    /// asked about, the current one for the others.
    pub(super) fn version_of(&self, path: &Path) -> Option<i32> {
        if path == self.path {
            return self.version;
        }
        self.host.version_of(&self.route, path)
    }

    /// The edit `edit` (a `WorkspaceEdit`) as the model reads it: diffs
    /// and file operations, in order ([`edit`]).
    pub(super) fn preview(&self, edit: &Value) -> Result<Vec<Value>, String> {
        edit::preview(
            edit,
            &mut self.texts(),
            self.encoding(),
            &|path| self.version_of(path),
            &self.host.folders(),
        )
    }

    /// The message saying the server does not provide `feature`.
    pub(super) fn unsupported(&self, feature: LspFeature) -> String {
        unsupported(&self.path, self.facts().name.as_deref(), feature)
    }

    /// A question about one position: references, definition,
    /// implementation, hover.
    pub(super) async fn at(&self, feature: LspFeature, at: CharPosition) -> Result<Value, String> {
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
        if let Some(hidden) = self.defined_in_hidden(&params, &mut texts).await {
            // The hover quotes the definition (a constant's value, a
            // comment): nothing of it, and the hidden file named only to
            // be counted as left out.
            return Ok(json!({"contents": "", "definedIn": [{"filePath": hidden}]}));
        }
        let mut out = Map::new();
        out.insert("contents".into(), hover_text(&result["contents"]));
        if result["range"].is_object() {
            out.extend(texts.range(&self.path, &result["range"], self.encoding()));
        }
        Ok(Value::Object(out))
    }

    /// The file the deny rules hide where the symbol at `params`'s
    /// position is defined, when there is one: asked only when some rule
    /// hides something and the server answers definitions.
    async fn defined_in_hidden(&self, params: &Value, texts: &mut Texts<'a>) -> Option<Value> {
        if self.hidden.is_empty()
            || self
                .host
                .route_for(&self.path, LspFeature::Definition)
                .is_err()
        {
            return None;
        }
        let definition = self
            .send(LspFeature::Definition.method(), params)
            .await
            .ok()?;
        let locations = texts.locations(&definition, self.encoding());
        locations.as_array()?.iter().find_map(|location| {
            let path = location["filePath"].as_str()?;
            self.hidden
                .hides(Path::new(path))
                .then(|| location["filePath"].clone())
        })
    }

    /// The file's symbols.
    pub(super) async fn symbols(&self) -> Result<Value, String> {
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

/// Answers `query` with `host`'s servers, reading no text of a file
/// `hidden` hides.
async fn ask<H: ServerHost>(
    host: &H,
    query: LspQuery,
    hidden: Arc<RuleSet>,
) -> Result<Value, String> {
    let feature = query.feature();
    host.ready(query.path()).await;
    let asking = |path: &Path| Asking::new(host, path, feature, &hidden);
    match query {
        LspQuery::WorkspaceSymbols { query } => workspace_symbols(host, &query, &hidden).await,
        LspQuery::At { path, at, .. } => asking(&path)?.at(feature, at).await,
        LspQuery::DocumentSymbols { path } => asking(&path)?.symbols().await,
        LspQuery::ReferencesOf { path, symbol } => asking(&path)?.references_of(&symbol).await,
        LspQuery::Calls {
            path,
            at,
            direction,
        } => asking(&path)?.calls(at, direction).await,
        LspQuery::Rename { path, at, new_name } => asking(&path)?.rename(at, &new_name).await,
        LspQuery::QuickFixes { path, line } => asking(&path)?.quick_fixes(line).await,
    }
}

/// `workspace/symbol` of every server that provides it, merged.
async fn workspace_symbols<H: ServerHost>(
    host: &H,
    query: &str,
    hidden: &Arc<RuleSet>,
) -> Result<Value, String> {
    let routes = host.routes_providing(LspFeature::WorkspaceSymbols);
    if routes.is_empty() {
        return Err(host.none_provides(LspFeature::WorkspaceSymbols));
    }
    let params = json!({"query": query});
    let asked = routes
        .iter()
        .map(|route| host.send(route, LspFeature::WorkspaceSymbols.method(), &params));
    // Concurrently: a slow server costs its own time, not the sum.
    let answers = futures_util::future::join_all(asked).await;
    let mut texts = Texts::new(host).hiding(Arc::clone(hidden));
    let mut symbols = Vec::new();
    let mut errors = Vec::new();
    for (route, answer) in routes.iter().zip(answers) {
        match answer {
            Ok(Value::Array(found)) => {
                let encoding = H::facts(route).encoding;
                symbols.extend(found.iter().map(|s| texts.symbol(None, s, encoding)));
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
