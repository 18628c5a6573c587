//! `callHierarchy`: `textDocument/prepareCallHierarchy` at a position, then
//! `callHierarchy/incomingCalls` or `callHierarchy/outgoingCalls` of each
//! item it names.
//!
//! Each item is read as a document symbol is (its name's position, to
//! where it ends, its line's text) with its file; each caller or callee
//! comes with its call sites. An incoming call's sites (`fromRanges`) are
//! in the caller's file, an outgoing call's in the file of the item asked
//! about: each site names its file.

use futures_util::future::join_all;
use ide_mcp_tools::{CallDirection, CharPosition};
use serde_json::{Map, Value, json};

use super::answers::Texts;
use super::asking::Asking;
use super::host::ServerHost;
use ide_mcp_tools::position::PositionEncoding;
use ide_mcp_tools::uri::encoded_uri_path;

/// A `CallHierarchyItem` as the model reads it: `{name, kind, detail?,
/// filePath, line, character, endLine, endCharacter, lineText}`.
fn item(texts: &mut Texts<'_>, item: &Value, encoding: PositionEncoding) -> Map<String, Value> {
    let path = item["uri"].as_str().and_then(encoded_uri_path);
    let Value::Object(mut out) = texts.symbol(path.as_deref(), item, encoding) else {
        unreachable!("a symbol is an object")
    };
    if let Some(path) = path {
        out.insert("filePath".into(), path.to_string_lossy().into());
    }
    out
}

/// One call of a `callHierarchy/*Calls` answer: the other function, with
/// its call sites in `sites_uri`'s file.
fn call(
    texts: &mut Texts<'_>,
    other: &Value,
    ranges: &Value,
    sites_uri: Option<&str>,
    encoding: PositionEncoding,
) -> Value {
    let mut out = item(texts, other, encoding);
    let sites_path = sites_uri.and_then(encoded_uri_path);
    let sites: Vec<Value> = ranges
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|range| {
            let path = sites_path.as_deref()?;
            let mut site = Map::new();
            site.insert("filePath".into(), path.to_string_lossy().into());
            site.extend(texts.range(path, range, encoding));
            Some(Value::Object(site))
        })
        .collect();
    out.insert("callSites".into(), Value::Array(sites));
    Value::Object(out)
}

/// The answer of `callHierarchy` from the prepared `items` and the calls
/// answer of each.
pub(super) fn hierarchy(
    texts: &mut Texts<'_>,
    items: &[Value],
    calls: &[Value],
    direction: CallDirection,
    encoding: PositionEncoding,
) -> Value {
    let (other, sites_in_other) = match direction {
        CallDirection::Incoming => ("from", true),
        CallDirection::Outgoing => ("to", false),
    };
    items
        .iter()
        .zip(calls)
        .map(|(asked, calls)| {
            let mut out = item(texts, asked, encoding);
            let list: Vec<Value> = calls
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(|c| {
                    let sites_uri = if sites_in_other {
                        c[other]["uri"].as_str()
                    } else {
                        asked["uri"].as_str()
                    };
                    call(texts, &c[other], &c["fromRanges"], sites_uri, encoding)
                })
                .collect();
            out.insert(direction.name().into(), Value::Array(list));
            Value::Object(out)
        })
        .collect()
}

impl<H: ServerHost> Asking<'_, H> {
    /// The calls into or out of the function at `at`.
    pub(super) async fn calls(
        &self,
        at: CharPosition,
        direction: CallDirection,
    ) -> Result<Value, String> {
        let params = json!({"textDocument": self.document(), "position": self.position(at)});
        let prepared = self
            .send("textDocument/prepareCallHierarchy", &params)
            .await?;
        let items = prepared.as_array().cloned().unwrap_or_default();
        let method = match direction {
            CallDirection::Incoming => "callHierarchy/incomingCalls",
            CallDirection::Outgoing => "callHierarchy/outgoingCalls",
        };
        let asked = items
            .iter()
            .map(|item| async move { self.send(method, &json!({"item": item})).await });
        let calls = join_all(asked)
            .await
            .into_iter()
            .collect::<Result<Vec<Value>, String>>()?;
        Ok(hierarchy(
            &mut self.texts(),
            &items,
            &calls,
            direction,
            self.encoding(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use ropey::Rope;

    use super::*;
    use crate::live::Disk;

    fn range(l: u32, c1: u32, c2: u32) -> Value {
        json!({"start": {"line": l, "character": c1}, "end": {"line": l, "character": c2}})
    }

    #[test]
    fn callers_come_with_their_call_sites() {
        let mut texts = Texts::new(&Disk)
            .with(
                Path::new("/w/util.py"),
                Rope::from("def greet(name):\n    return name\n"),
            )
            .with(
                Path::new("/w/app.py"),
                Rope::from(
                    "from util import greet\n\ndef main():\n    greet(\"a\")\n    greet(\"b\")\n",
                ),
            );
        let greet = json!({"name": "greet", "kind": 12, "uri": "file:///w/util.py",
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 15}},
            "selectionRange": range(0, 4, 9)});
        let main = json!({"name": "main", "kind": 12, "detail": "app", "uri": "file:///w/app.py",
            "range": {"start": {"line": 2, "character": 0}, "end": {"line": 4, "character": 14}},
            "selectionRange": range(2, 4, 8)});
        let incoming = json!([{"from": main, "fromRanges": [range(3, 4, 9), range(4, 4, 9)]}]);
        let answer = hierarchy(
            &mut texts,
            std::slice::from_ref(&greet),
            &[incoming],
            CallDirection::Incoming,
            PositionEncoding::Utf16,
        );
        let site = |line: u32, text: &str| {
            json!({"filePath": "/w/app.py", "line": line, "character": 5, "endLine": line,
                   "endCharacter": 10, "lineText": text})
        };
        assert_eq!(
            answer,
            json!([{
                "name": "greet", "kind": "Function", "filePath": "/w/util.py", "line": 1,
                "character": 5, "endLine": 2, "endCharacter": 16, "lineText": "def greet(name):",
                "incoming": [{
                    "name": "main", "kind": "Function", "detail": "app", "filePath": "/w/app.py",
                    "line": 3, "character": 5, "endLine": 5, "endCharacter": 15,
                    "lineText": "def main():",
                    "callSites": [site(4, "    greet(\"a\")"), site(5, "    greet(\"b\")")],
                }],
            }])
        );
        // Outgoing: the sites are in the asked item's file.
        let outgoing = json!([{"to": greet, "fromRanges": [range(3, 4, 9)]}]);
        let answer = hierarchy(
            &mut texts,
            &[main],
            &[outgoing],
            CallDirection::Outgoing,
            PositionEncoding::Utf16,
        );
        assert_eq!(answer[0]["outgoing"][0]["name"], "greet");
        assert_eq!(
            answer[0]["outgoing"][0]["callSites"],
            json!([site(4, "    greet(\"a\")")])
        );
        assert_eq!(
            hierarchy(
                &mut texts,
                &[],
                &[],
                CallDirection::Incoming,
                PositionEncoding::Utf16
            ),
            json!([])
        );
    }
}
