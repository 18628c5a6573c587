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
//! nor the host's observer sees it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ide_mcp_tools::{BufferStore, CharPosition, LanguageServers, LspFeature, LspFuture, LspQuery};
use lsp_types::Position;
use ropey::Rope;
use serde_json::{Map, Value, json};

use super::LspWorkspace;
use super::servers::{NoRoute, ServerRequests, ServerRoute};
use crate::mirror::{PositionEncoding, char_to_position_in, position_to_char};
use crate::uri::{encoded_file_uri, uri_path};

/// The workspace's servers, for the tools' [`ReadContext`](ide_mcp_tools::ReadContext).
pub(crate) struct Live(pub(crate) Arc<LspWorkspace>);

impl LanguageServers for Live {
    fn ask(&self, query: LspQuery) -> LspFuture {
        let ws = Arc::clone(&self.0);
        Box::pin(async move { ws.ask(query).await })
    }
}

/// The position of `at` (the model's) in `text`, counted in `encoding`.
pub(crate) fn to_server(text: &Rope, at: CharPosition, encoding: PositionEncoding) -> Position {
    let model = Position::new(at.line.saturating_sub(1), at.character.saturating_sub(1));
    let char_idx = position_to_char(text, model, PositionEncoding::Utf32).value;
    char_to_position_in(text, char_idx, encoding)
}

/// `position` (the server's, counted in `encoding`) as the model counts.
pub(crate) fn from_server(
    text: Option<&Rope>,
    position: Position,
    encoding: PositionEncoding,
) -> CharPosition {
    let position = match text {
        Some(text) => {
            let char_idx = position_to_char(text, position, encoding).value;
            char_to_position_in(text, char_idx, PositionEncoding::Utf32)
        }
        None => position,
    };
    CharPosition {
        line: position.line + 1,
        character: position.character + 1,
    }
}

/// The text of line `line` (0-based) without its line break.
fn line_text(text: &Rope, line: u32) -> Option<String> {
    let line = text.get_line(line as usize)?;
    let line = line.to_string();
    Some(line.trim_end_matches(['\n', '\r']).to_owned())
}

fn position_of(value: &Value) -> Option<Position> {
    serde_json::from_value(value.clone()).ok()
}

/// Texts of the files results name: the editor's when open, else the
/// file's; read once per file.
struct Texts<'a> {
    ws: &'a LspWorkspace,
    read: HashMap<PathBuf, Option<Rope>>,
}

impl Texts<'_> {
    fn of(&mut self, path: &Path) -> Option<&Rope> {
        self.read
            .entry(path.to_path_buf())
            .or_insert_with(|| self.ws.text_of(path))
            .as_ref()
    }

    /// The model's range of a server's `range` in `path`, with the text of
    /// its first line, as members of an object.
    fn range(
        &mut self,
        path: &Path,
        range: &Value,
        encoding: PositionEncoding,
    ) -> Map<String, Value> {
        let mut out = Map::new();
        let (Some(start), Some(end)) = (position_of(&range["start"]), position_of(&range["end"]))
        else {
            return out;
        };
        let text = self.of(path);
        let (from, to) = (
            from_server(text, start, encoding),
            from_server(text, end, encoding),
        );
        let line = text.and_then(|t| line_text(t, start.line));
        out.insert("line".into(), from.line.into());
        out.insert("character".into(), from.character.into());
        out.insert("endLine".into(), to.line.into());
        out.insert("endCharacter".into(), to.character.into());
        out.insert("lineText".into(), line.map_or(Value::Null, Value::from));
        out
    }

    /// A `Location` or `LocationLink` as the model's location.
    fn location(&mut self, item: &Value, encoding: PositionEncoding) -> Option<Value> {
        let uri = item["uri"]
            .as_str()
            .or_else(|| item["targetUri"].as_str())?;
        let path = uri_path(uri)?;
        let range = [
            &item["range"],
            &item["targetSelectionRange"],
            &item["targetRange"],
        ]
        .into_iter()
        .find(|r| r.is_object());
        let mut out = Map::new();
        out.insert("filePath".into(), path.to_string_lossy().into());
        if let Some(range) = range {
            out.extend(self.range(&path, range, encoding));
        }
        Some(Value::Object(out))
    }

    /// A definition or references answer (`null`, one location, or a list
    /// of locations or links) as a list of locations.
    fn locations(&mut self, result: &Value, encoding: PositionEncoding) -> Value {
        let items: Vec<&Value> = match result {
            Value::Array(items) => items.iter().collect(),
            Value::Null => Vec::new(),
            one => vec![one],
        };
        items
            .into_iter()
            .filter_map(|item| self.location(item, encoding))
            .collect()
    }

    /// A symbol (`DocumentSymbol`, `SymbolInformation`, `WorkspaceSymbol`).
    fn symbol(&mut self, path: Option<&Path>, item: &Value, encoding: PositionEncoding) -> Value {
        let mut out = Map::new();
        out.insert("name".into(), item["name"].clone());
        out.insert(
            "kind".into(),
            item["kind"]
                .as_u64()
                .map_or(Value::Null, |k| symbol_kind(k).into()),
        );
        for member in ["detail", "containerName"] {
            if let Some(value) = item[member].as_str().filter(|v| !v.is_empty()) {
                out.insert(member.into(), value.into());
            }
        }
        if item["location"].is_object() {
            if let Some(Value::Object(location)) = self.location(&item["location"], encoding) {
                out.extend(location);
            }
        } else if let Some(path) = path {
            // A `DocumentSymbol`: where its name is, to where it ends.
            let mut range = self.range(path, &item["selectionRange"], encoding);
            let whole = self.range(path, &item["range"], encoding);
            for end in ["endLine", "endCharacter"] {
                if let Some(value) = whole.get(end) {
                    range.insert(end.into(), value.clone());
                }
            }
            out.extend(range);
            if let Some(children) = item["children"].as_array().filter(|c| !c.is_empty()) {
                let children = children
                    .iter()
                    .map(|child| self.symbol(Some(path), child, encoding))
                    .collect();
                out.insert("children".into(), Value::Array(children));
            }
        }
        Value::Object(out)
    }
}

/// The name of an LSP `SymbolKind`.
fn symbol_kind(kind: u64) -> &'static str {
    const KINDS: [&str; 26] = [
        "File",
        "Module",
        "Namespace",
        "Package",
        "Class",
        "Method",
        "Property",
        "Field",
        "Constructor",
        "Enum",
        "Interface",
        "Function",
        "Variable",
        "Constant",
        "String",
        "Number",
        "Boolean",
        "Array",
        "Object",
        "Key",
        "Null",
        "EnumMember",
        "Struct",
        "Event",
        "Operator",
        "TypeParameter",
    ];
    usize::try_from(kind)
        .ok()
        .and_then(|k| k.checked_sub(1))
        .and_then(|k| KINDS.get(k))
        .copied()
        .unwrap_or("Unknown")
}

/// A hover's `contents` as one text: `MarkupContent`, a `MarkedString` or
/// a list of them.
fn hover_text(contents: &Value) -> Value {
    fn one(item: &Value) -> Option<String> {
        match item {
            Value::String(text) => Some(text.clone()),
            Value::Object(object) => {
                let value = object.get("value")?.as_str()?;
                Some(match object.get("language").and_then(Value::as_str) {
                    Some(language) => format!("```{language}\n{value}\n```"),
                    None => value.to_owned(),
                })
            }
            _ => None,
        }
    }
    match contents {
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().filter_map(one).collect();
            Value::from(parts.join("\n\n"))
        }
        other => one(other).map_or(Value::Null, Value::from),
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

    async fn ask(&self, query: LspQuery) -> Result<Value, String> {
        let feature = query.feature;
        if feature == LspFeature::WorkspaceSymbols {
            return self
                .workspace_symbols(query.query.as_deref().unwrap_or_default())
                .await;
        }
        let path = query.path.ok_or("no `filePath`")?;
        let route = self
            .servers
            .route_for(&path, &self.documents.openers(&path), feature)
            .map_err(|error| no_route(error, &path, feature))?;
        let text = self
            .text_of(&path)
            .ok_or_else(|| format!("cannot read {}", path.display()))?;
        let uri = encoded_file_uri(&path);
        let mut params = json!({"textDocument": {"uri": uri}});
        if let Some(at) = query.position {
            params["position"] = json!(to_server(&text, at, route.encoding));
        }
        if feature == LspFeature::References {
            params["context"] = json!({"includeDeclaration": true});
        }
        let opened = self.open_for_us(&route, &path, &uri, &text)?;
        let answer = self.servers.send(&route, feature.method(), &params).await;
        drop(opened);
        let result = answer.map_err(|error| error.to_string())?;
        let mut texts = Texts {
            ws: self,
            read: HashMap::from([(path.clone(), Some(text))]),
        };
        Ok(match feature {
            LspFeature::Hover if result.is_null() => Value::Null,
            LspFeature::Hover => {
                let mut out = Map::new();
                out.insert("contents".into(), hover_text(&result["contents"]));
                if result["range"].is_object() {
                    out.extend(texts.range(&path, &result["range"], route.encoding));
                }
                Value::Object(out)
            }
            LspFeature::DocumentSymbols => result.as_array().map_or_else(
                || Value::Array(Vec::new()),
                |symbols| {
                    symbols
                        .iter()
                        .map(|s| texts.symbol(Some(&path), s, route.encoding))
                        .collect()
                },
            ),
            _ => texts.locations(&result, route.encoding),
        })
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
        let mut texts = Texts {
            ws: self,
            read: HashMap::new(),
        };
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
    fn positions_go_to_the_server_and_back_in_each_encoding() {
        let text = Rope::from("fn 😀x() {}\n  é = x\n");
        let at = CharPosition {
            line: 1,
            character: 5,
        };
        assert_eq!(
            to_server(&text, at, PositionEncoding::Utf32),
            Position::new(0, 4)
        );
        assert_eq!(
            to_server(&text, at, PositionEncoding::Utf16),
            Position::new(0, 5)
        );
        assert_eq!(
            to_server(&text, at, PositionEncoding::Utf8),
            Position::new(0, 7)
        );
        for encoding in [
            PositionEncoding::Utf8,
            PositionEncoding::Utf16,
            PositionEncoding::Utf32,
        ] {
            let there = to_server(&text, at, encoding);
            assert_eq!(
                from_server(Some(&text), there, encoding),
                at,
                "{encoding:?}"
            );
        }
        let after_e = from_server(Some(&text), Position::new(1, 4), PositionEncoding::Utf8);
        assert_eq!((after_e.line, after_e.character), (2, 4));
        let unknown = from_server(None, Position::new(4, 2), PositionEncoding::Utf16);
        assert_eq!((unknown.line, unknown.character), (5, 3));
    }

    #[test]
    fn answers_become_the_models_locations() {
        let ws = LspWorkspace::new();
        let mut texts = Texts {
            ws: &ws,
            read: HashMap::from([(
                PathBuf::from("/w/a.py"),
                Some(Rope::from("def f():\n    return é(1)\n")),
            )]),
        };
        let range =
            json!({"start": {"line": 1, "character": 13}, "end": {"line": 1, "character": 14}});
        let links = json!([
            {"uri": "file:///w/a.py", "range": range},
            {"targetUri": "file:///w/a.py", "targetRange": range, "targetSelectionRange": range},
            {"uri": "file:///w/missing.py", "range": range},
        ]);
        let located = texts.locations(&links, PositionEncoding::Utf8);
        let expected = json!({
            "filePath": "/w/a.py", "line": 2, "character": 13, "endLine": 2,
            "endCharacter": 14, "lineText": "    return é(1)",
        });
        assert_eq!(located[0], expected);
        assert_eq!(located[1], expected);
        assert_eq!(
            located[2],
            json!({"filePath": "/w/missing.py", "line": 2, "character": 14,
                   "endLine": 2, "endCharacter": 15, "lineText": null})
        );
        assert_eq!(
            texts.locations(&Value::Null, PositionEncoding::Utf8),
            json!([])
        );
    }

    #[test]
    fn symbols_and_hovers_read_plainly() {
        let ws = LspWorkspace::new();
        let path = PathBuf::from("/w/a.py");
        let mut texts = Texts {
            ws: &ws,
            read: HashMap::from([(
                path.clone(),
                Some(Rope::from("class A:\n    def m(self): ...\n")),
            )]),
        };
        let r = |l1, c1, l2, c2| json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}});
        let symbol = json!({
            "name": "A", "kind": 5, "range": r(0, 0, 1, 20), "selectionRange": r(0, 6, 0, 7),
            "children": [{"name": "m", "kind": 6, "detail": "", "range": r(1, 4, 1, 20), "selectionRange": r(1, 8, 1, 9)}],
        });
        assert_eq!(
            texts.symbol(Some(&path), &symbol, PositionEncoding::Utf16),
            json!({
                "name": "A", "kind": "Class", "line": 1, "character": 7, "endLine": 2,
                "endCharacter": 21, "lineText": "class A:",
                "children": [{"name": "m", "kind": "Method", "line": 2, "character": 9,
                              "endLine": 2, "endCharacter": 21, "lineText": "    def m(self): ..."}],
            })
        );
        assert_eq!(symbol_kind(0), "Unknown");
        assert_eq!(symbol_kind(26), "TypeParameter");
        assert_eq!(
            hover_text(&json!({"kind": "markdown", "value": "**x**"})),
            json!("**x**")
        );
        assert_eq!(
            hover_text(&json!(["a", {"language": "python", "value": "x: int"}])),
            json!("a\n\n```python\nx: int\n```")
        );
    }

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
