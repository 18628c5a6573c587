//! `findReferences {symbol}`: a name resolved through the file's
//! `textDocument/documentSymbol`, then the references at its name.
//!
//! Both answers the protocol allows are read: hierarchical
//! (`DocumentSymbol`, a symbol's containers are its ancestors) and flat
//! (`SymbolInformation`, its containers are `containerName`). A name is
//! plain (`greet`) or qualified (`Greeter.greet`, `ns::add`): its last
//! segment is the symbol's name, the segments before it its innermost
//! containers. Servers that name a symbol qualified themselves (clangd's
//! out-of-line `Greeter::greet`) match the same way.
//!
//! A name several symbols answer to is resolved when they all have the
//! same references (a C function's declaration and definition, a Python
//! name assigned twice): that one list. Otherwise it is an error listing
//! each candidate with its kind and line, so that the model asks again
//! with a qualified name or a position, rather than receive the
//! references of symbols it did not mean, merged.

use futures_util::future::join_all;
use ide_mcp_tools::LspFeature;
use lsp_types::Position;
use ropey::Rope;
use serde_json::{Value, json};

use super::answers::{from_server, position_of, symbol_kind};
use super::asking::Asking;
use super::host::ServerHost;
use ide_mcp_tools::position::PositionEncoding;
use ide_mcp_tools::position::{char_to_position, position_to_char};

/// At most this many symbols of one name get their references asked for;
/// past it, the name is ambiguous without asking.
pub(super) const MAX_ASKED: usize = 8;

/// At most this many symbols are listed in a message.
const MAX_LISTED: usize = 30;

/// One symbol of a `documentSymbol` answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Candidate {
    /// Its name's segments, the outermost container first.
    pub(super) segments: Vec<String>,
    /// Its `SymbolKind`.
    pub(super) kind: Option<u64>,
    /// Where its name starts, in the server's count.
    pub(super) name_at: Position,
}

impl Candidate {
    /// Its qualified name (`Greeter.greet`).
    fn qualified(&self) -> String {
        self.segments.join(".")
    }

    /// `` `Greeter.greet` (Method, line 5) ``, the line the model's.
    fn describe(&self, text: &Rope, encoding: PositionEncoding) -> String {
        let kind = self.kind.map_or("Unknown", symbol_kind);
        let line = from_server(Some(text), self.name_at, encoding).line;
        format!("`{}` ({kind}, line {line})", self.qualified())
    }
}

/// `name`'s segments: split at `::` and `.`, each without a parameter
/// list or template arguments (`greet(name)`, `max<T>`), empty ones left
/// out.
fn segments(name: &str) -> Vec<String> {
    name.split("::")
        .flat_map(|part| part.split('.'))
        .map(|segment| {
            let end = segment.find(['(', '<']).unwrap_or(segment.len());
            segment[..end].trim().to_owned()
        })
        .filter(|segment| !segment.is_empty())
        .collect()
}

/// Every symbol of a `documentSymbol` answer, depth first, in order.
pub(super) fn candidates(
    result: &Value,
    text: &Rope,
    encoding: PositionEncoding,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    for item in result.as_array().map(Vec::as_slice).unwrap_or_default() {
        if item["location"].is_object() {
            flat(item, text, encoding, &mut out);
        } else {
            hierarchical(item, &[], &mut out);
        }
    }
    out
}

fn hierarchical(item: &Value, containers: &[String], out: &mut Vec<Candidate>) {
    let Some(name) = item["name"].as_str() else {
        return;
    };
    let mut path = containers.to_vec();
    path.extend(segments(name));
    let at = position_of(&item["selectionRange"]["start"])
        .or_else(|| position_of(&item["range"]["start"]));
    if let Some(name_at) = at {
        out.push(Candidate {
            segments: path.clone(),
            kind: item["kind"].as_u64(),
            name_at,
        });
    }
    for child in item["children"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        hierarchical(child, &path, out);
    }
}

/// A `SymbolInformation`: its range is the whole declaration, so its name
/// is looked for in it.
fn flat(item: &Value, text: &Rope, encoding: PositionEncoding, out: &mut Vec<Candidate>) {
    let (Some(name), Some(start)) = (
        item["name"].as_str(),
        position_of(&item["location"]["range"]["start"]),
    ) else {
        return;
    };
    let end = position_of(&item["location"]["range"]["end"]).unwrap_or(start);
    let mut path = item["containerName"]
        .as_str()
        .map(segments)
        .unwrap_or_default();
    let own = segments(name);
    let last = own.last().cloned().unwrap_or_default();
    path.extend(own);
    out.push(Candidate {
        segments: path,
        kind: item["kind"].as_u64(),
        name_at: find_word(text, &last, start, end, encoding).unwrap_or(start),
    });
}

/// Where `word` first appears as a whole word between `start` and `end`.
fn find_word(
    text: &Rope,
    word: &str,
    start: Position,
    end: Position,
    encoding: PositionEncoding,
) -> Option<Position> {
    if word.is_empty() {
        return None;
    }
    let from = position_to_char(text, start, encoding).value;
    let to = position_to_char(text, end, encoding).value.max(from);
    let span: String = text.slice(from..to).to_string();
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut search = 0;
    while let Some(found) = span[search..].find(word) {
        let at = search + found;
        let before = span[..at].chars().next_back();
        let after = span[at + word.len()..].chars().next();
        if !before.is_some_and(is_word) && !after.is_some_and(is_word) {
            let chars = span[..at].chars().count();
            return Some(char_to_position(text, from + chars, encoding));
        }
        search = at + word.len();
    }
    None
}

/// The candidates `query` names: its segments end theirs.
pub(super) fn matching<'c>(candidates: &'c [Candidate], query: &str) -> Vec<&'c Candidate> {
    let wanted = segments(query);
    if wanted.is_empty() {
        return Vec::new();
    }
    candidates
        .iter()
        .filter(|c| c.segments.ends_with(&wanted))
        .collect()
}

/// A list of candidates for a message, shortened past [`MAX_LISTED`].
fn listed<'c>(
    candidates: impl ExactSizeIterator<Item = &'c Candidate>,
    text: &Rope,
    encoding: PositionEncoding,
) -> String {
    let total = candidates.len();
    let mut list: Vec<String> = candidates
        .take(MAX_LISTED)
        .map(|c| c.describe(text, encoding))
        .collect();
    if total > MAX_LISTED {
        list.push(format!("… {} more", total - MAX_LISTED));
    }
    list.join(", ")
}

/// Whether every list of locations holds the same ones (in any order).
fn same_locations(lists: &[Value]) -> bool {
    let sorted = |list: &Value| {
        let mut items: Vec<String> = list
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(Value::to_string)
            .collect();
        items.sort();
        items.dedup();
        items
    };
    let mut each = lists.iter().map(sorted);
    let first = each.next();
    each.all(|other| Some(&other) == first.as_ref())
}

impl<H: ServerHost> Asking<'_, H> {
    /// The references of the symbol of the file named `symbol`.
    pub(super) async fn references_of(&self, symbol: &str) -> Result<Value, String> {
        if self.facts().provider(LspFeature::DocumentSymbols).is_none() {
            return Err(format!(
                "{}, which finding a symbol by name needs: pass `line` and `character` instead",
                self.unsupported(LspFeature::DocumentSymbols)
            ));
        }
        let params = json!({"textDocument": self.document()});
        let result = self
            .send(LspFeature::DocumentSymbols.method(), &params)
            .await?;
        let all = candidates(&result, &self.text, self.encoding());
        let found = matching(&all, symbol);
        let path = self.path.display();
        if found.is_empty() {
            if all.is_empty() {
                return Err(format!(
                    "the language server lists no symbols in {path}: pass `line` and `character` instead"
                ));
            }
            return Err(format!(
                "no symbol named `{symbol}` in {path}; its symbols: {}",
                listed(all.iter(), &self.text, self.encoding())
            ));
        }
        let ambiguous = |which: &str| {
            format!(
                "`{symbol}` names {} symbols in {path}{which}: {}; \
                 pass a qualified name (`Container.name`) or `line` and `character`",
                found.len(),
                listed(found.iter().copied(), &self.text, self.encoding())
            )
        };
        if found.len() > MAX_ASKED {
            return Err(ambiguous(""));
        }
        let asked = found.iter().map(|candidate| async move {
            let params = json!({
                "textDocument": self.document(),
                "position": candidate.name_at,
                "context": {"includeDeclaration": true},
            });
            self.send(LspFeature::References.method(), &params).await
        });
        let mut texts = self.texts();
        let mut lists = Vec::new();
        for answer in join_all(asked).await {
            lists.push(texts.locations(&answer?, self.encoding()));
        }
        if !same_locations(&lists) {
            return Err(ambiguous(" with different references"));
        }
        Ok(lists.swap_remove(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(l1: u32, c1: u32, l2: u32, c2: u32) -> Value {
        json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
    }

    const PY: &str =
        "def greet(name):\n    return name\n\nclass Greeter:\n    def greet(self):\n        pass\n";

    fn names(found: &[&Candidate]) -> Vec<(String, u32)> {
        found
            .iter()
            .map(|c| (c.qualified(), c.name_at.line))
            .collect()
    }

    #[test]
    fn hierarchical_answers_nest_and_qualified_names_pick_one() {
        let text = Rope::from(PY);
        let answer = json!([
            {"name": "greet", "kind": 12, "range": range(0, 0, 1, 15), "selectionRange": range(0, 4, 0, 9)},
            {"name": "Greeter", "kind": 5, "range": range(3, 0, 5, 12), "selectionRange": range(3, 6, 3, 13),
             "children": [{"name": "greet", "kind": 6, "range": range(4, 4, 5, 12), "selectionRange": range(4, 8, 4, 13)}]},
        ]);
        let all = candidates(&answer, &text, PositionEncoding::Utf16);
        assert_eq!(all.len(), 3);
        assert_eq!(
            names(&matching(&all, "greet")),
            [("greet".to_owned(), 0), ("Greeter.greet".to_owned(), 4)]
        );
        assert_eq!(
            names(&matching(&all, "Greeter.greet")),
            [("Greeter.greet".to_owned(), 4)]
        );
        assert_eq!(
            names(&matching(&all, "Greeter::greet")),
            [("Greeter.greet".to_owned(), 4)]
        );
        assert_eq!(matching(&all, "Other.greet"), Vec::<&Candidate>::new());
        assert_eq!(matching(&all, "reet"), Vec::<&Candidate>::new());
        assert_eq!(all[2].name_at, Position::new(4, 8));
        assert_eq!(
            all[2].describe(&text, PositionEncoding::Utf16),
            "`Greeter.greet` (Method, line 5)"
        );
    }

    #[test]
    fn flat_answers_find_the_name_in_the_declaration() {
        let text = Rope::from(PY);
        let uri = "file:///w/a.py";
        let answer = json!([
            {"name": "greet", "kind": 12, "location": {"uri": uri, "range": range(0, 0, 1, 15)}},
            {"name": "Greeter", "kind": 5, "location": {"uri": uri, "range": range(3, 0, 5, 12)}},
            {"name": "greet(self)", "kind": 6, "containerName": "a.Greeter", "location": {"uri": uri, "range": range(4, 4, 5, 12)}},
        ]);
        let all = candidates(&answer, &text, PositionEncoding::Utf8);
        assert_eq!(
            all.iter()
                .map(|c| (c.qualified(), c.name_at))
                .collect::<Vec<_>>(),
            [
                ("greet".to_owned(), Position::new(0, 4)),
                ("Greeter".to_owned(), Position::new(3, 6)),
                ("a.Greeter.greet".to_owned(), Position::new(4, 8)),
            ]
        );
        assert_eq!(names(&matching(&all, "Greeter.greet")).len(), 1);
        // clangd's out-of-line definition, named qualified at top level.
        let c = Rope::from("int Greeter::greet() { return 1; }\n");
        let answer = json!([{"name": "Greeter::greet", "kind": 6, "range": range(0, 0, 0, 34), "selectionRange": range(0, 13, 0, 18)}]);
        let all = candidates(&answer, &c, PositionEncoding::Utf8);
        assert_eq!(
            names(&matching(&all, "greet")),
            [("Greeter.greet".to_owned(), 0)]
        );
    }

    #[test]
    fn the_same_references_in_any_order_are_the_same() {
        let (a, b) = (json!({"line": 1}), json!({"line": 2}));
        assert!(same_locations(&[json!([a, b]), json!([b, a, a])]));
        assert!(!same_locations(&[json!([a, b]), json!([a])]));
        assert!(same_locations(&[json!([a])]));
    }

    #[test]
    fn a_word_is_found_whole_and_counted_in_the_server_s_encoding() {
        let text = Rope::from("é = greeting; greet = 1\n");
        let found = find_word(
            &text,
            "greet",
            Position::new(0, 0),
            Position::new(0, 30),
            PositionEncoding::Utf8,
        );
        assert_eq!(found, Some(Position::new(0, 15)));
        assert_eq!(
            find_word(
                &text,
                "x",
                Position::new(0, 0),
                Position::new(0, 30),
                PositionEncoding::Utf8
            ),
            None
        );
        assert_eq!(
            segments("ns::Greeter.greet(int)"),
            ["ns", "Greeter", "greet"]
        );
        assert_eq!(segments("max<T>"), ["max"]);
    }
}
