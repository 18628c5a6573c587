//! Edits the host makes in an editor's buffer (a reload, a revert): the
//! whole-line edits turning the buffer's text into another, sent as one
//! `workspace/applyEdit` to an editor that has the document open. The host
//! never writes a file.

use std::path::Path;

use ide_mcp_tools::BufferStore as _;
use ide_mcp_tools::position::line_length;
use ide_mcp_tools::review::hunks;
use ide_mcp_tools::uri::encoded_file_uri;
use ropey::Rope;
use serde_json::{Value, json};

use crate::workspace::{EditorRequest, LspWorkspace};
use ide_mcp_tools::position::PositionEncoding;

/// Why an edit of ours did not reach the buffer.
#[derive(Debug)]
pub(super) enum NotApplied {
    /// The document is not open, or no editor that has it applies edits.
    NoEditor,
    /// The editor refused it (its user said no, the buffer changed since),
    /// or did not answer.
    Refused(String),
}

/// Makes `path`'s buffer (its text `rope` at `version`) show `target`,
/// with one `workspace/applyEdit` titled `label`; the edit is versioned
/// where the editor takes versioned edits, so that a buffer changed since
/// is left alone.
pub(super) async fn apply(
    ws: &LspWorkspace,
    path: &Path,
    (rope, version): (&Rope, i32),
    target: &str,
    label: &str,
) -> Result<(), NotApplied> {
    let to = ws
        .requests
        .destination(EditorRequest::ApplyEdit, &ws.openers(path))
        .ok_or(NotApplied::NoEditor)?;
    let edits = text_edits(rope, &rope.to_string(), target, to.encoding);
    let uri = encoded_file_uri(path);
    let edit = if to.can.document_changes {
        json!({"documentChanges": [{"textDocument": {"uri": uri, "version": version}, "edits": edits}]})
    } else {
        json!({"changes": {uri: edits}})
    };
    match ws
        .requests
        .send(&to, json!({"label": label, "edit": edit}))
        .await
    {
        Ok(answer) if answer["applied"] == true => {
            ws.documents.compare_with_disk(path);
            Ok(())
        }
        Ok(answer) => Err(NotApplied::Refused(answer.to_string())),
        Err(error) => Err(NotApplied::Refused(error.to_string())),
    }
}

/// The buffer of `path` as the editor holds it: its text and version.
pub(super) fn buffer(ws: &LspWorkspace, path: &Path) -> Option<(Rope, i32)> {
    let document = ws.handle_for_path(path)?.snapshot();
    Some((document.text.clone(), document.version))
}

/// The edits turning `text` (the buffer, `rope`) into `target`, by whole
/// lines, in `encoding`; none starts or ends past the last line's end (see
/// [`within_the_lines`]).
pub(super) fn text_edits(
    rope: &Rope,
    text: &str,
    target: &str,
    encoding: PositionEncoding,
) -> Vec<Value> {
    let lines = u32::try_from(rope.len_lines()).unwrap_or(u32::MAX);
    let last = lines.saturating_sub(1);
    let end_of = |line: u32| (line, line_length(rope, line, encoding));
    hunks(text, target)
        .into_iter()
        .map(|hunk| {
            let start = (hunk.old_start, 0);
            let end_line = hunk.old_start + hunk.old_len;
            // Past the last line: the end of the text.
            let end = if end_line < lines {
                (end_line, 0)
            } else {
                end_of(last)
            };
            let (start, end, new_text) = within_the_lines(start, end, hunk.new_text, rope, end_of);
            json!({
                "range": {"start": {"line": start.0, "character": start.1},
                          "end": {"line": end.0, "character": end.1}},
                "newText": new_text,
            })
        })
        .collect()
}

/// An edit ending on the empty line after the text's last line break
/// (`end_of` the previous line, at 0) said the same way without touching
/// that line: editors handle it badly (Neovim 0.7 appends a line there,
/// removes it after, and tells the servers a text with an extra line
/// break). The text keeps its last line break either way.
fn within_the_lines(
    start: (u32, u32),
    end: (u32, u32),
    new_text: String,
    rope: &Rope,
    end_of: impl Fn(u32) -> (u32, u32),
) -> ((u32, u32), (u32, u32), String) {
    let phantom = u32::try_from(rope.len_lines()).unwrap_or(u32::MAX) - 1;
    let ends_with_break = rope.len_chars() > 0 && rope.char(rope.len_chars() - 1) == '\n';
    if end != (phantom, 0) || phantom == 0 || !ends_with_break {
        return (start, end, new_text);
    }
    let last = end_of(phantom - 1);
    if let Some(body) = new_text.strip_suffix('\n') {
        if start == end {
            // An insertion at the end: after the last line's text.
            return (last, last, format!("\n{body}"));
        }
        return (start, last, body.to_owned());
    }
    if new_text.is_empty() && start.0 > 0 && start.1 == 0 {
        // The last lines deleted: from the end of the line before them.
        return (end_of(start.0 - 1), last, new_text);
    }
    (start, end, new_text)
}

#[cfg(test)]
mod tests {
    use ide_mcp_tools::position::position_to_char;
    use lsp_types::Position;

    use super::*;

    fn apply_edits(text: &str, edits: &[Value]) -> String {
        // Applied from the last, as an editor does.
        let mut rope = Rope::from_str(text);
        for edit in edits.iter().rev() {
            let at = |p: &Value| {
                let position: Position = serde_json::from_value(p.clone()).unwrap();
                position_to_char(&rope, position, PositionEncoding::Utf32).value
            };
            let (start, end) = (at(&edit["range"]["start"]), at(&edit["range"]["end"]));
            rope.remove(start..end);
            rope.insert(start, edit["newText"].as_str().unwrap());
        }
        rope.to_string()
    }

    #[test]
    fn the_edits_make_the_target_text() {
        for (text, target) in [
            ("a\nb\nc\n", "a\nB\nc\n"),
            ("a\nb\nc", "a\nb\nC"),
            ("a\nb\nc", "a\nb\nc\nd\n"),
            ("a\nb\n", ""),
            ("", "new\n"),
            ("x\ny\n", "y\nx\n"),
            ("a\nb\n", "a\nb\nc\n"),
            ("a\nb\nc\n", "a\nb\n"),
            ("a\nb\nc\n", "a\nX\n"),
            ("a\nb\nc\n", "a\nb\nc"),
            ("a\nb\n", "a\nb\nc"),
            ("a\n", "b\n"),
            ("a\n", ""),
        ] {
            let rope = Rope::from_str(text);
            let edits = text_edits(&rope, text, target, PositionEncoding::Utf32);
            assert_eq!(apply_edits(text, &edits), target, "{text:?} -> {target:?}");
        }
    }

    #[test]
    fn no_edit_reaches_past_the_last_line_break_where_it_need_not() {
        let text = "int a;\n}\n";
        let rope = Rope::from_str(text);
        let at = |target: &str| text_edits(&rope, text, target, PositionEncoding::Utf16);
        assert_eq!(
            at("int a;\n}\n// more\n"),
            [
                json!({"range": {"start": {"line": 1, "character": 1}, "end": {"line": 1, "character": 1}},
                    "newText": "\n// more"})
            ]
        );
        assert_eq!(
            at("int a;\n"),
            [
                json!({"range": {"start": {"line": 0, "character": 6}, "end": {"line": 1, "character": 1}},
                    "newText": ""})
            ]
        );
        assert_eq!(
            at("int a;\nend\n"),
            [
                json!({"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 1}},
                    "newText": "end"})
            ]
        );
    }

    #[test]
    fn the_last_line_s_end_is_counted_in_the_stream_s_encoding() {
        let text = "a\n🦀é";
        let rope = Rope::from_str(text);
        let end = |encoding| text_edits(&rope, text, "a\nz", encoding)[0]["range"]["end"].clone();
        assert_eq!(
            end(PositionEncoding::Utf16),
            json!({"line": 1, "character": 3})
        );
        assert_eq!(
            end(PositionEncoding::Utf8),
            json!({"line": 1, "character": 6})
        );
        assert_eq!(
            end(PositionEncoding::Utf32),
            json!({"line": 1, "character": 2})
        );
    }
}
