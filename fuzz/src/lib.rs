//! The bodies of the fuzz targets, as plain functions: `cargo fuzz` calls
//! them from `fuzz_targets/`, and the stable test `tests/tests/fuzz_corpus.rs`
//! includes this file and replays the committed corpus through them.
//!
//! Each body panics when a property fails; libFuzzer reports that as a crash.

mod admission;
mod uri_template;

pub use admission::admission;
pub use uri_template::uri_template;

use std::path::Path;
use std::sync::{Arc, OnceLock};

use ide_mcp_runtime::{Registry, Server, Session};
use ide_mcp_tools::memory::MemoryWorkspace;
use ide_mcp_tools::position::{
    PositionEncoding, RopeText, char_to_position, position_to_char, slice,
};
use ide_mcp_tools::uri::{PathInput, file_uri};
use ide_mcp_tools::{BufferId, EditorPorts};
use lsp_types::{Diagnostic, Position, Range};
use ropey::Rope;
use serde_json::Value;
use serde_json::value::RawValue;

const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#;
const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The JSON-RPC error codes the server may answer with.
const CODES: [i64; 5] = [-32700, -32600, -32601, -32602, -32603];

struct Fixture {
    runtime: tokio::runtime::Runtime,
    server: Server,
}

/// One runtime and one server for every input: the five read tools over a
/// small in-memory workspace (a buffer with non-ASCII text and CRLF, a
/// selection, diagnostics).
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let ws = MemoryWorkspace::new();
        let path = Path::new("/ws/src/main.rs");
        ws.open(
            BufferId(1),
            Some(path),
            "rust",
            "fn main() {\r\n    let 😀 = \"é\";\n}\n",
        );
        ws.open(BufferId(2), Some(Path::new("/ws/a b%20c.rs")), "rust", "x");
        ws.buffers.set_dirty(BufferId(2), true);
        ws.select(BufferId(1), Position::new(1, 4), Position::new(1, 10));
        ws.diagnostics.set(
            path,
            vec![Diagnostic::new_simple(
                Range::new(Position::new(1, 8), Position::new(1, 10)),
                "unused variable".into(),
            )],
        );
        let cx: EditorPorts = ws.editor_ports().workspace_folder("/ws").build();
        let tools = ide_mcp_runtime::tools()
            .iter()
            .filter(|t| t.location.crate_name == "ide-mcp-tools" && t.face.is_none());
        let server = Server::builder("fuzz", "0")
            .registry(Arc::new(Registry::from_tools(tools).expect("valid tools")))
            .state(cx)
            .build()
            .expect("a server");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        Fixture { runtime, server }
    })
}

/// The frame target: the first byte chooses whether the session is
/// initialized first (even) or not (odd); the rest is split at `\n` into
/// messages, each handed to [`Session::handle`] as one frame.
///
/// Properties: nothing panics; a message either gets exactly one answer or
/// none (and then nothing was written); every answer is one JSON-RPC 2.0
/// response object with the request's id, exactly one of `result` and
/// `error`, a known error code, and never -32603 (no tool of the five may
/// fail internally); a `tools/call` result's first content item is text
/// that is itself JSON unless `isError` is set.
pub fn frame(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let fixture = fixture();
    fixture.runtime.block_on(async {
        let mut session = Session::new(fixture.server.clone());
        let mut out = Vec::new();
        if mode & 1 == 0 {
            assert!(session.handle(INIT, &mut out));
            assert!(!session.handle(INITIALIZED, &mut out));
            out.clear();
        }
        for message in rest.split(|&b| b == b'\n') {
            out.clear();
            if session.handle(message, &mut out) {
                check_answer(message, &out);
            } else {
                assert!(out.is_empty(), "no answer, yet bytes were written");
            }
        }
        // Calls that completed later (none of the five tools should need to).
        tokio::task::yield_now().await;
        out.clear();
        while session.try_complete(&mut out) {
            check_answer(b"", &out);
            out.clear();
        }
    });
}

fn check_answer(request: &[u8], answer: &[u8]) {
    let text = std::str::from_utf8(answer).expect("answers are UTF-8");
    let value: Value = serde_json::from_str(text).unwrap_or_else(|e| {
        // Valid JSON whose echoed id serde_json cannot hold: a number out of
        // its range (`1e400`) or a string with a lone surrogate escape
        // (`"\ud83d"`: valid JSON grammar, echoed as the client wrote it)?
        // Check the id as raw JSON, then the rest without it.
        #[derive(serde::Deserialize)]
        struct Id<'a> {
            #[serde(borrow)]
            id: &'a RawValue,
        }
        let id = serde_json::from_str::<Id<'_>>(text)
            .unwrap_or_else(|_| panic!("an answer is not JSON ({e}): {text}"))
            .id
            .get();
        assert!(
            id.starts_with(['"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']),
            "{text}"
        );
        let rest = text.replacen(&format!(r#""id":{id}"#), r#""id":"big""#, 1);
        serde_json::from_str(&rest)
            .unwrap_or_else(|e| panic!("an answer is not JSON ({e}): {text}"))
    });
    let object = value.as_object().expect("an answer is an object");
    assert_eq!(object.get("jsonrpc"), Some(&Value::from("2.0")), "{text}");
    let id = object.get("id").expect("an answer has an id");
    assert!(
        id.is_null() || id.is_string() || id.is_number(),
        "odd id: {text}"
    );
    // A null id only on an error (the request's id could not be read);
    // otherwise the request's id, when it has a valid one, is echoed.
    if id.is_null() {
        assert!(object.contains_key("error"), "a result for id null: {text}");
    } else if let Ok(Value::Object(req)) = serde_json::from_slice::<Value>(request)
        && id != "big"
        && let Some(req_id) = req.get("id")
        && (req_id.is_string() || req_id.is_number())
    {
        assert_eq!(id, req_id, "the id is echoed: {text}");
    }
    match (object.get("result"), object.get("error")) {
        (Some(result), None) => {
            if let Some(content) = result.get("content") {
                let first = &content[0];
                assert_eq!(first["type"], "text", "{text}");
                let body = first["text"].as_str().expect("text content is a string");
                if result.get("isError") != Some(&Value::Bool(true)) {
                    serde_json::from_str::<Value>(body)
                        .unwrap_or_else(|e| panic!("tool text is not JSON ({e}): {text}"));
                }
            }
        }
        (None, Some(error)) => {
            let code = error["code"].as_i64().expect("an integer code");
            assert!(CODES.contains(&code), "unknown code: {text}");
            assert_ne!(code, -32603, "an internal error: {text}");
            assert!(
                error["message"].as_str().is_some_and(|m| !m.is_empty()),
                "{text}"
            );
        }
        _ => panic!("exactly one of result and error: {text}"),
    }
    assert_eq!(object.len(), 3, "no other members: {text}");
}

/// The `uri_position` target: the input (lossily UTF-8) is a `uri` or
/// `filePath` argument and a document's text; its first bytes also pick
/// offsets and positions.
///
/// Properties: nothing panics; every reading of an input is absolute and
/// NUL-free; a reading written back with `file_uri` reads back as itself,
/// and as a plain path it is taken as is; for the text, char offset →
/// position → char offset round-trips (except between `\r` and `\n`, which
/// is no position), positions agree with a linear reference walk, any
/// position maps inside the text, and slices serialize as the JSON string of
/// their text.
pub fn uri_position(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Some(input) = PathInput::parse(&text) {
        for reading in input.candidates() {
            assert!(reading.is_absolute(), "{}", reading.display());
            assert!(!reading.as_os_str().as_encoded_bytes().contains(&0));
            if let Some(s) = reading.to_str() {
                let uri = file_uri(reading);
                let back = PathInput::parse(&uri).expect("a written URI parses");
                assert_eq!(back.path(), reading, "{uri}");
                let plain = PathInput::parse(s).expect("an absolute path parses");
                assert_eq!(plain.path(), reading);
                assert_eq!(plain.candidates().count(), 1, "{s}");
            }
        }
    }
    let _ = PathInput::parse(&format!("file://{text}"));
    let _ = PathInput::parse(&format!("file:///{text}"));

    let rope = Rope::from_str(&text);
    let chars: Vec<char> = text.chars().collect();
    let len = rope.len_chars();
    let word = |i: usize| -> u32 {
        let b = |j: usize| u32::from(data.get(i * 4 + j).copied().unwrap_or(0));
        b(0) | b(1) << 8 | b(2) << 16 | b(3) << 24
    };
    for i in 0..4 {
        let idx = word(i) as usize % (len + 2);
        let position = char_to_position(&rope, idx, PositionEncoding::Utf16);
        if chars.len() <= 4096 {
            assert_eq!(position, reference_position(&chars, idx.min(len)), "{idx}");
        }
        let inside_crlf = idx > 0 && idx < len && chars[idx - 1] == '\r' && chars[idx] == '\n';
        if !inside_crlf {
            assert_eq!(
                position_to_char(&rope, position, PositionEncoding::Utf16).value,
                idx.min(len)
            );
        }
    }
    let lines = rope.len_lines() as u32;
    let a = Position::new(word(4) % (lines + 2), word(5) % 300);
    let b = Position::new(word(6) % (lines + 2), word(7));
    for p in [a, b, Position::new(u32::MAX, u32::MAX)] {
        let idx = position_to_char(&rope, p, PositionEncoding::Utf16).value;
        assert!(idx <= len);
        let back = char_to_position(&rope, idx, PositionEncoding::Utf16);
        assert!(back <= p, "{p:?} → {idx} → {back:?}");
    }
    let piece = slice(&rope, a, b);
    let json = serde_json::to_string(&RopeText(piece)).expect("text serializes");
    assert_eq!(
        serde_json::from_str::<String>(&json).expect("valid JSON"),
        piece.to_string()
    );
}

/// The reference LSP position of a char offset (UTF-16), by a linear walk.
fn reference_position(chars: &[char], idx: usize) -> Position {
    let (line, character) = ide_mcp_test_support::position::position(
        chars,
        idx,
        ide_mcp_test_support::position::Units::Utf16,
    );
    Position::new(line, character)
}

/// The jsonrpc target: the input as one message.
///
/// Property: a `tools/call` the runtime reads in one pass
/// (`request::one_pass`) is read exactly as the general parser and the
/// session's reading of its params read it, and nothing the general parser
/// refuses is accepted.
pub fn jsonrpc(data: &[u8]) {
    ide_mcp_runtime::__check_one_pass(data);
}
