//! Positions between the model's count and the server's, and the server's
//! answers (locations, symbols, hovers) as the model reads them, each with
//! its line's text.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ide_mcp_tools::CharPosition;
use ide_mcp_tools::deny::RuleSet;
use lsp_types::Position;
use ropey::Rope;
use serde_json::{Map, Value};

use super::host::FileTexts;
use ide_mcp_tools::position::PositionEncoding;
use ide_mcp_tools::position::convert;
use ide_mcp_tools::uri::encoded_uri_path;

/// The position of `at` (the model's) in `text`, counted in `encoding`.
pub(crate) fn to_server(text: &Rope, at: CharPosition, encoding: PositionEncoding) -> Position {
    let model = Position::new(at.line.saturating_sub(1), at.character.saturating_sub(1));
    convert(text, model, PositionEncoding::Utf32, encoding)
}

/// `position` (the server's, counted in `encoding`) as the model counts.
pub(crate) fn from_server(
    text: Option<&Rope>,
    position: Position,
    encoding: PositionEncoding,
) -> CharPosition {
    let position = match text {
        Some(text) => convert(text, position, encoding, PositionEncoding::Utf32),
        None => position,
    };
    CharPosition {
        line: position.line + 1,
        character: position.character + 1,
    }
}

/// The text of line `line` (0-based) without its line break.
pub(super) fn line_text(text: &Rope, line: u32) -> Option<String> {
    let line = text.get_line(line as usize)?;
    let line = line.to_string();
    Some(line.trim_end_matches(['\n', '\r']).to_owned())
}

pub(super) fn position_of(value: &Value) -> Option<Position> {
    serde_json::from_value(value.clone()).ok()
}

/// Texts of the files results name, as the host has them (through the
/// LSP proxy, the editor's when open, else the file's); read once per
/// file. A file the user's deny rules hide has no text: it is never read.
pub(super) struct Texts<'a> {
    files: &'a dyn FileTexts,
    read: HashMap<PathBuf, Option<Rope>>,
    hidden: Arc<RuleSet>,
}

impl<'a> Texts<'a> {
    /// No text read yet; no file hidden.
    pub(super) fn new(files: &'a dyn FileTexts) -> Self {
        Self {
            files,
            read: HashMap::new(),
            hidden: Arc::default(),
        }
    }

    /// With the files `hidden` hides having no text.
    pub(super) fn hiding(mut self, hidden: Arc<RuleSet>) -> Self {
        self.hidden = hidden;
        self
    }

    /// Whether the deny rules hide `path`.
    pub(super) fn hides(&self, path: &Path) -> bool {
        self.hidden.hides(path)
    }

    /// With `text` as `path`'s (the text a question was asked on).
    pub(super) fn with(mut self, path: &Path, text: Rope) -> Self {
        self.read.insert(path.to_path_buf(), Some(text));
        self
    }

    /// The text of `path` as the host has it, read once; `None` for a
    /// hidden file, which is not read.
    pub(super) fn of(&mut self, path: &Path) -> Option<&Rope> {
        if self.hidden.hides(path) {
            return None;
        }
        self.read
            .entry(path.to_path_buf())
            .or_insert_with(|| self.files.text_of(path))
            .as_ref()
    }

    /// The model's range of a server's `range` in `path`, with the text of
    /// its first line, as members of an object.
    pub(super) fn range(
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
    pub(super) fn location(&mut self, item: &Value, encoding: PositionEncoding) -> Option<Value> {
        let uri = item["uri"]
            .as_str()
            .or_else(|| item["targetUri"].as_str())?;
        let path = encoded_uri_path(uri)?;
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
    pub(super) fn locations(&mut self, result: &Value, encoding: PositionEncoding) -> Value {
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
    pub(super) fn symbol(
        &mut self,
        path: Option<&Path>,
        item: &Value,
        encoding: PositionEncoding,
    ) -> Value {
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
pub(super) fn symbol_kind(kind: u64) -> &'static str {
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
pub(super) fn hover_text(contents: &Value) -> Value {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::live::Disk;

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
        let mut texts = Texts {
            files: &Disk,
            hidden: Arc::default(),
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
        let path = PathBuf::from("/w/a.py");
        let mut texts = Texts {
            files: &Disk,
            hidden: Arc::default(),
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
}
