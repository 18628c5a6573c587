//! Edits the host makes in an editor's buffer (a reload, a revert): the
//! whole-line edits turning the buffer's text into another, sent as one
//! `workspace/applyEdit` to an editor that has the document open. The host
//! never writes a file.

use std::path::Path;

use ide_mcp_tools::BufferStore as _;
use ide_mcp_tools::review::hunks;
use ide_mcp_tools::uri::encoded_file_uri;
use ropey::Rope;
use serde_json::{Value, json};

use crate::mirror::PositionEncoding;
use crate::observer::review::line_length;
use crate::workspace::{EditorRequest, LspWorkspace};

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
            ws.documents.edited_by_us(path);
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
/// lines, in `encoding`.
pub(super) fn text_edits(
    rope: &Rope,
    text: &str,
    target: &str,
    encoding: PositionEncoding,
) -> Vec<Value> {
    let lines = u32::try_from(rope.len_lines()).unwrap_or(u32::MAX);
    hunks(text, target)
        .into_iter()
        .map(|hunk| {
            let end_line = hunk.old_start + hunk.old_len;
            let end = if end_line < lines {
                json!({"line": end_line, "character": 0})
            } else {
                // The last line, without a line break after it.
                let last = lines.saturating_sub(1);
                json!({"line": last, "character": line_length(rope, last, encoding)})
            };
            json!({
                "range": {"start": {"line": hunk.old_start, "character": 0}, "end": end},
                "newText": hunk.new_text,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply_edits(text: &str, edits: &[Value]) -> String {
        // Applied from the last, as an editor does.
        let mut rope = Rope::from_str(text);
        for edit in edits.iter().rev() {
            let at = |p: &Value| {
                let line = p["line"].as_u64().unwrap() as usize;
                rope.line_to_char(line) + p["character"].as_u64().unwrap() as usize
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
        ] {
            let rope = Rope::from_str(text);
            let edits = text_edits(&rope, text, target, PositionEncoding::Utf32);
            assert_eq!(apply_edits(text, &edits), target, "{text:?} -> {target:?}");
        }
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
