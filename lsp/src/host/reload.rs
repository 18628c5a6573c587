//! Claude's writes reach open buffers: when a file that is open and clean
//! in an editor changes on disk to a text other than the buffer's, the host
//! sends that editor `workspace/applyEdit` with the minimal edit (the same
//! line diff as the review's), so that the buffer shows what is on disk.
//! Never for a dirty buffer (unsaved work is never overwritten), never for
//! an editor that did not advertise `workspace.applyEdit`, and never when
//! the disk's text is the buffer's (an editor's own save, or its answer to
//! our edit, coming back). Editors without auto-reload (Helix, Neovim
//! without `:checktime`, Emacs without auto-revert) otherwise keep showing
//! the old text after Claude writes a file.
//!
//! The open files are polled (their size and modification time, every
//! [`POLL`]) rather than watched: they are few, a poll costs one `stat`
//! each, and it follows files replaced by a rename (how the CLI and most
//! editors write) without a watch per directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use ide_mcp_tools::review::hunks;
use ide_mcp_tools::{BufferStore as _, EditorAccess as _};
use ropey::Rope;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::observer::review::line_length;
use crate::workspace::{EditorRequest, LspWorkspace};
use ide_mcp_tools::uri::encoded_file_uri;

/// How often the open files are looked at.
pub const POLL: Duration = Duration::from_millis(250);

/// What a file looked like on disk when last seen.
type Seen = (u64, Option<SystemTime>);

/// Reloads clean buffers whose files change on disk, until aborted.
pub fn spawn(ws: Arc<LspWorkspace>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut seen: HashMap<PathBuf, Seen> = HashMap::new();
        let mut tick = tokio::time::interval(POLL);
        loop {
            tick.tick().await;
            let open: Vec<Arc<Path>> = ws
                .open_buffers()
                .into_iter()
                .filter_map(|buffer| buffer.path)
                .collect();
            seen.retain(|path, _| open.iter().any(|p| **p == **path));
            for path in open {
                let Ok(meta) = std::fs::metadata(&path) else {
                    continue;
                };
                let now = (meta.len(), meta.modified().ok());
                // First seen, or unchanged: nothing to do.
                if seen
                    .insert(path.to_path_buf(), now)
                    .is_some_and(|before| before != now)
                {
                    reload(&ws, &path).await;
                }
            }
        }
    })
}

/// `path` changed on disk: shown in the editors that have it open and
/// clean.
async fn reload(ws: &LspWorkspace, path: &Path) {
    let Some(handle) = ws.handle_for_path(path) else {
        return;
    };
    let document = handle.snapshot();
    if document.dirty {
        tracing::debug!(
            ?path,
            "changed on disk, but unsaved in the editor: left alone"
        );
        return;
    }
    let Ok(disk) = std::fs::read_to_string(path) else {
        return;
    };
    let text = document.text.to_string();
    if disk == text {
        return;
    }
    let Some(to) = ws
        .requests
        .destination(EditorRequest::ApplyEdit, &ws.openers(path))
    else {
        tracing::debug!(
            ?path,
            "changed on disk; no editor that has it open applies edits"
        );
        return;
    };
    let edits = text_edits(&document.text, &text, &disk, to.encoding);
    let uri = encoded_file_uri(path);
    let edit = if to.can.document_changes {
        json!({"documentChanges": [{"textDocument": {"uri": uri, "version": document.version}, "edits": edits}]})
    } else {
        json!({"changes": {uri: edits}})
    };
    let label = format!(
        "Claude Code: {} changed on disk",
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned()
        )
    );
    match ws
        .requests
        .send(&to, json!({"label": label, "edit": edit}))
        .await
    {
        Ok(answer) if answer["applied"] == true => {
            tracing::info!(?path, "changed on disk; the editor's buffer shows it");
        }
        answer => tracing::info!(
            ?path,
            ?answer,
            "changed on disk; the editor did not apply it"
        ),
    }
}

/// The edits turning `text` (the buffer, `rope`) into `disk`, by whole
/// lines, in `encoding`.
fn text_edits(
    rope: &Rope,
    text: &str,
    disk: &str,
    encoding: crate::mirror::PositionEncoding,
) -> Vec<Value> {
    let lines = u32::try_from(rope.len_lines()).unwrap_or(u32::MAX);
    hunks(text, disk)
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
    use crate::mirror::PositionEncoding;

    fn apply(text: &str, edits: &[Value]) -> String {
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
    fn the_edits_make_the_disk_s_text() {
        for (text, disk) in [
            ("a\nb\nc\n", "a\nB\nc\n"),
            ("a\nb\nc", "a\nb\nC"),
            ("a\nb\nc", "a\nb\nc\nd\n"),
            ("a\nb\n", ""),
            ("", "new\n"),
            ("x\ny\n", "y\nx\n"),
        ] {
            let rope = Rope::from_str(text);
            let edits = text_edits(&rope, text, disk, PositionEncoding::Utf32);
            assert_eq!(apply(text, &edits), disk, "{text:?} -> {disk:?}");
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
