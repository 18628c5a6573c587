//! `ide/contextUpdate`: the open files, newest first, the active one with
//! its cursor and selected text, as `gemini` reads them:
//! `{workspaceState: {openFiles: [{path, timestamp, isActive?,
//! selectedText?, cursor?: {line, character}}]}}`.
//!
//! The CLI keeps at most [`MAX_FILES`] files, sorted by `timestamp`
//! (milliseconds, when the file was last focused), and takes cursor and
//! selection from the newest only, which must be the active one; its
//! schema says line and character are 1-based. No `isTrusted`: an editor
//! reached through LSP has no notion of folder trust, and the field would
//! override the user's own choice in the CLI.

use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::ports::{Document, OpenBuffer, Selection};
use crate::position::slice;

/// The most files a context update lists.
pub const MAX_FILES: usize = 10;

/// The longest `selectedText` sent, in bytes (cut on a character boundary).
pub const MAX_SELECTED_BYTES: usize = 16 * 1024;

/// The params of `ide/contextUpdate`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUpdate {
    /// The editor's state.
    pub workspace_state: WorkspaceState,
}

/// `workspaceState`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceState {
    /// Newest first, at most [`MAX_FILES`].
    pub open_files: Vec<OpenFile>,
}

/// One open file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenFile {
    /// The file's absolute path.
    pub path: String,
    /// When it was last focused, in milliseconds since the epoch.
    pub timestamp: u64,
    /// `true` for the active file, absent for the others.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_active: Option<bool>,
    /// The active file's selected text, when something is selected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected_text: Option<String>,
    /// The active file's cursor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
}

/// A 1-based line and character (UTF-16 code units).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Cursor {
    /// The 1-based line.
    pub line: u32,
    /// The 1-based character.
    pub character: u32,
}

/// When each open file was last focused, as this face saw it: the one
/// thing the protocol asks that the editor's state does not hold.
#[derive(Debug, Default)]
pub struct Stamps {
    seen: FxHashMap<Arc<Path>, u64>,
    active: Option<Arc<Path>>,
}

impl Stamps {
    /// Updates the stamps for `buffers` at `now` (milliseconds): a file
    /// seen for the first time is stamped now, the active one is the
    /// newest, closed ones are forgotten. Returns each file-backed buffer's
    /// stamp, in `buffers`' order.
    pub fn update(&mut self, buffers: &[OpenBuffer], now: u64) -> Vec<u64> {
        let open: Vec<&Arc<Path>> = buffers.iter().filter_map(|b| b.path.as_ref()).collect();
        self.seen.retain(|path, _| open.contains(&path));
        for path in &open {
            self.seen.entry(Arc::clone(path)).or_insert(now);
        }
        let active = buffers
            .iter()
            .find(|b| b.is_active)
            .and_then(|b| b.path.clone());
        if let Some(path) = &active
            && self.active.as_ref() != Some(path)
        {
            let newest = self.seen.values().copied().max().unwrap_or(0);
            self.seen.insert(Arc::clone(path), now.max(newest + 1));
        }
        self.active = active;
        open.iter().map(|path| self.seen[*path]).collect()
    }
}

/// The update for `buffers` (with their `stamps`, as [`Stamps::update`]
/// returned them), the active `selection` in its `document`, leaving out
/// what `shown` refuses.
pub fn context_update(
    buffers: &[OpenBuffer],
    stamps: &[u64],
    selection: Option<(&Selection, &Document)>,
    shown: &dyn Fn(&Path) -> bool,
) -> ContextUpdate {
    let mut files: Vec<(&OpenBuffer, u64)> = buffers
        .iter()
        .filter(|b| b.path.is_some())
        .zip(stamps.iter().copied())
        .filter(|(b, _)| b.path.as_deref().is_some_and(shown))
        .collect();
    files.sort_by_key(|(_, stamp)| std::cmp::Reverse(*stamp));
    files.truncate(MAX_FILES);
    let open_files = files
        .into_iter()
        .enumerate()
        .map(|(i, (buffer, timestamp))| {
            let path = buffer.path.as_deref().expect("filtered");
            let mut file = OpenFile {
                path: path.to_string_lossy().into_owned(),
                timestamp,
                is_active: None,
                selected_text: None,
                cursor: None,
            };
            // Only the newest may be active (the CLI ignores the rest).
            if i == 0 && buffer.is_active {
                file.is_active = Some(true);
                if let Some((selection, document)) =
                    selection.filter(|(s, _)| s.buffer == buffer.id)
                {
                    let (start, end) = selection.ordered();
                    file.cursor = Some(Cursor {
                        line: selection.end.line + 1,
                        character: selection.end.character + 1,
                    });
                    if start != end {
                        let text = slice(&document.text, start, end).to_string();
                        file.selected_text = Some(cut(text, MAX_SELECTED_BYTES));
                    }
                }
            }
            file
        })
        .collect();
    ContextUpdate {
        workspace_state: WorkspaceState { open_files },
    }
}

/// `text` cut to at most `max` bytes on a character boundary.
fn cut(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut at = max;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
    }
    text
}

#[cfg(test)]
mod tests {
    use lsp_types::Position;

    use super::*;
    use crate::ports::BufferId;

    fn buffer(id: u64, path: &str) -> OpenBuffer {
        OpenBuffer::new(BufferId(id), Path::new(path), "rust")
    }

    #[test]
    fn newest_first_the_active_one_with_cursor_and_selection() {
        let mut stamps = Stamps::default();
        let a = buffer(1, "/ws/a.rs");
        let b = buffer(2, "/ws/b.rs").active();
        let got = stamps.update(&[a.clone(), b.clone()], 1000);
        assert_eq!(got, [1000, 1001], "the active one is the newest");
        let document = Document::new("fn main() {\n    let é = 1;\n}\n", None);
        let selection = Selection {
            buffer: BufferId(2),
            path: b.path.clone(),
            start: Position::new(1, 4),
            end: Position::new(1, 10),
        };
        let all = |_: &Path| true;
        let update = context_update(
            &[a.clone(), b.clone()],
            &got,
            Some((&selection, &document)),
            &all,
        );
        assert_eq!(
            serde_json::to_string(&update).unwrap(),
            r#"{"workspaceState":{"openFiles":[{"path":"/ws/b.rs","timestamp":1001,"isActive":true,"selectedText":"let é ","cursor":{"line":2,"character":11}},{"path":"/ws/a.rs","timestamp":1000}]}}"#
        );
        // `a` focused later: newest and active; `b` keeps its stamp.
        let (a, b) = (a.active(), buffer(2, "/ws/b.rs"));
        let got = stamps.update(&[a.clone(), b.clone()], 2000);
        assert_eq!(got, [2000, 1001]);
        // A denied file is left out; the cursor of another buffer is not shown.
        let not_a = |p: &Path| p != Path::new("/ws/a.rs");
        let update = context_update(&[a, b], &got, Some((&selection, &document)), &not_a);
        assert_eq!(
            serde_json::to_string(&update).unwrap(),
            r#"{"workspaceState":{"openFiles":[{"path":"/ws/b.rs","timestamp":1001}]}}"#
        );
    }

    #[test]
    fn at_most_ten_files_and_sixteen_kib_of_selection() {
        let buffers: Vec<_> = (0..12)
            .map(|i| buffer(i, &format!("/ws/{i:02}.rs")))
            .collect();
        let stamps: Vec<u64> = (0..12).collect();
        let update = context_update(&buffers, &stamps, None, &|_| true);
        let paths: Vec<_> = update
            .workspace_state
            .open_files
            .iter()
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(paths.len(), MAX_FILES);
        assert_eq!(paths[0], "/ws/11.rs");
        assert_eq!(paths[9], "/ws/02.rs");
        let long = "é".repeat(MAX_SELECTED_BYTES);
        let cut = cut(long, MAX_SELECTED_BYTES + 1);
        assert_eq!(cut.len(), MAX_SELECTED_BYTES);
    }
}
