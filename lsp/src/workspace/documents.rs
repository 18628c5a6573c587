//! The documents the editor has open, united over every stream: the
//! editor's tabs (a [`MemoryEditor`]) and their text (a [`MemoryBuffers`]).
//!
//! One editor often runs several servers for one file (pyright and ruff):
//! each stream opens it, and the file is one tab while any stream has it
//! open. Every stream applies the editor's edits to its own mirror and
//! publishes the result here; since the editor sends every server the same
//! edits, the published text is the same whichever stream published last.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use ide_mcp_tools::memory::{MemoryBuffers, MemoryEditor};
use ide_mcp_tools::{BufferId, BufferStore, Document, DocumentHandle, OpenBuffer};
use lsp_types::Position;
use ropey::Rope;

use super::stream::StreamId;
use crate::sync::lock;

/// The united documents.
#[derive(Debug, Default)]
pub(crate) struct Documents {
    pub(crate) editor: MemoryEditor,
    pub(crate) buffers: MemoryBuffers,
    index: Mutex<HashMap<Arc<Path>, Entry>>,
    next_id: AtomicU64,
    /// How many times the editor saved each file (`didSave`), and the text
    /// it saved last, kept across closing and opening it again (Emacs
    /// reverts a buffer that way).
    saves: Mutex<HashMap<Arc<Path>, Saves>>,
}

/// The editor's saves of one file.
#[derive(Debug, Default)]
struct Saves {
    count: u64,
    /// The document's text at the last `didSave`.
    text: Option<Rope>,
}

#[derive(Debug)]
struct Entry {
    id: BufferId,
    /// The streams that have the document open, in opening order.
    openers: Vec<StreamId>,
    /// Whether an opener's server gets `didSave` (else dirtiness is told by
    /// comparing with the file on disk, when asked).
    saves: bool,
    /// The last comparison with the file on disk.
    disk_check: Option<DiskCheck>,
    /// Whether the editor's modified flag is stale (an edit of ours, a
    /// reload or a revert, or the editor's own reload of a write): dirtiness
    /// is then told by comparing with the file on disk even when the server
    /// gets `didSave`.
    flag_stale: bool,
}

/// What a comparison with the disk found, and for which state of both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DiskCheck {
    version: i32,
    len: u64,
    modified: Option<SystemTime>,
    same: bool,
}

impl Documents {
    fn index(&self) -> MutexGuard<'_, HashMap<Arc<Path>, Entry>> {
        lock(&self.index)
    }

    /// `stream` opened `path` with `text` at `version`; the document becomes
    /// active. A document new to the editor is clean; one another stream has
    /// open keeps its dirty state. Returns whether the document is new.
    pub(crate) fn open(
        &self,
        stream: StreamId,
        saves: bool,
        path: &Arc<Path>,
        language_id: &str,
        text: Rope,
        version: i32,
    ) -> bool {
        let mut index = self.index();
        if let Some(entry) = index.get_mut(path) {
            if !entry.openers.contains(&stream) {
                entry.openers.push(stream);
            }
            entry.saves |= saves;
            let id = entry.id;
            drop(index);
            self.buffers.update(id, |doc| Document {
                text: text.clone(),
                version,
                ..doc.clone()
            });
            self.editor.set_active(Some(id));
            return false;
        }
        let id = BufferId(self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        index.insert(
            Arc::clone(path),
            Entry {
                id,
                openers: vec![stream],
                saves,
                disk_check: None,
                flag_stale: false,
            },
        );
        self.buffers.open(
            id,
            Document {
                version,
                ..Document::new(text, Some(Arc::clone(path)))
            },
        );
        self.editor
            .open(OpenBuffer::new(id, Arc::clone(path), language_id).active());
        true
    }

    fn id(&self, path: &Path) -> Option<BufferId> {
        self.index().get(path).map(|entry| entry.id)
    }

    /// Publishes `text` at `version`, dirty or clean, and activates the
    /// document; returns whether the active document changed. Ignored when
    /// the document is not open.
    pub(crate) fn publish(&self, path: &Path, text: &Rope, version: i32, dirty: bool) -> bool {
        let Some(id) = self.id(path) else {
            return false;
        };
        self.buffers.update(id, |doc| Document {
            text: text.clone(),
            version,
            dirty,
            ..doc.clone()
        });
        self.activate(path)
    }

    /// Marks the document saved (clean) and activates it; returns whether
    /// the active document changed.
    pub(crate) fn saved(&self, path: &Path) -> bool {
        let Some(id) = self.id(path) else {
            return false;
        };
        self.buffers.set_dirty(id, false);
        self.activate(path)
    }

    /// The editor saved `path` (`didSave`, with or without its text).
    pub(crate) fn count_save(&self, path: &Path) {
        if let Some(entry) = self.index().get_mut(path) {
            entry.flag_stale = false;
        }
        let text = self
            .handle_for_path(path)
            .map(|handle| handle.snapshot().text.clone());
        let mut saves = lock(&self.saves);
        let saves = saves.entry(Arc::from(path)).or_default();
        saves.count += 1;
        saves.text = text;
    }

    /// How many times the editor saved `path`.
    #[cfg_attr(not(unix), expect(dead_code, reason = "the host (Unix only) asks"))]
    pub(crate) fn saves_seen(&self, path: &Path) -> u64 {
        let saves = lock(&self.saves);
        saves.get(path).map_or(0, |saves| saves.count)
    }

    /// What the editor saved of `path` last (the file held it then).
    #[cfg_attr(not(unix), expect(dead_code, reason = "the host (Unix only) asks"))]
    pub(crate) fn saved_text(&self, path: &Path) -> Option<String> {
        let saves = lock(&self.saves);
        saves.get(path)?.text.as_ref().map(Rope::to_string)
    }

    /// The editor's modified flag of `path` is stale (an edit of ours, a
    /// reload, a revert, was applied to the buffer; the editor reloaded it
    /// by itself without telling): from now on, until it is saved, its
    /// dirtiness is told by comparing it with the file.
    #[cfg_attr(not(unix), expect(dead_code, reason = "the host (Unix only) asks"))]
    pub(crate) fn compare_with_disk(&self, path: &Path) {
        if let Some(entry) = self.index().get_mut(path) {
            entry.flag_stale = true;
            entry.disk_check = None;
        }
    }

    /// From now on `stream`'s server gets `didSave` (it registered for it).
    pub(crate) fn stream_saves(&self, stream: StreamId) {
        for entry in self.index().values_mut() {
            entry.saves |= entry.openers.contains(&stream);
        }
    }

    /// Makes the document active with the selection `start..end` (UTF-16);
    /// returns whether anything changed.
    pub(crate) fn select(&self, path: &Path, start: Position, end: Position) -> bool {
        let Some(id) = self.id(path) else {
            return false;
        };
        let before = ide_mcp_tools::EditorAccess::active_selection(&self.editor);
        if before
            .as_ref()
            .is_some_and(|s| s.buffer == id && s.start == start && s.end == end)
        {
            return false;
        }
        self.editor.set_selection(id, start, end)
    }

    /// Makes the document active (keeping its last selection); returns
    /// whether the active document changed.
    pub(crate) fn activate(&self, path: &Path) -> bool {
        let Some(id) = self.id(path) else {
            return false;
        };
        let active = ide_mcp_tools::EditorAccess::active_selection(&self.editor).map(|s| s.buffer);
        active != Some(id) && self.editor.set_active(Some(id))
    }

    /// `stream` closed `path`; the tab goes when no stream has it open.
    pub(crate) fn close(&self, stream: StreamId, path: &Path) {
        let mut index = self.index();
        let Some(entry) = index.get_mut(path) else {
            return;
        };
        entry.openers.retain(|&s| s != stream);
        if entry.openers.is_empty() {
            let id = entry.id;
            index.remove(path);
            drop(index);
            self.editor.close(id);
            self.buffers.close(id);
        }
    }

    /// The streams that have `path` open, in opening order.
    pub(crate) fn openers(&self, path: &Path) -> Vec<StreamId> {
        self.index()
            .get(path)
            .map(|entry| entry.openers.clone())
            .unwrap_or_default()
    }

    /// The paths `stream` has open, in opening order of the editor's tabs.
    pub(crate) fn paths_of(&self, stream: StreamId) -> Vec<Arc<Path>> {
        let index = self.index();
        ide_mcp_tools::EditorAccess::open_buffers(&self.editor)
            .into_iter()
            .filter_map(|b| b.path)
            .filter(|p| index.get(p).is_some_and(|e| e.openers.contains(&stream)))
            .collect()
    }

    /// The handle of `path`, with its dirty flag first corrected from the
    /// disk when no opener's server gets `didSave` or an edit of ours set
    /// its text.
    pub(crate) fn handle_checked(&self, path: &Path) -> Option<DocumentHandle> {
        let handle = self.buffers.handle_for_path(path)?;
        if handle.is_dirty() {
            self.check_disk(path, &handle);
        }
        Some(handle)
    }

    /// Compares a dirty document with its file: when they are equal (the
    /// editor saved without telling the server, or our reload made the
    /// buffer the file's text and the editor flagged it modified), the
    /// document is clean.
    /// Lengths first; the contents only when the lengths are equal; and not
    /// again while neither the document nor the file changed.
    fn check_disk(&self, path: &Path, handle: &DocumentHandle) {
        let snapshot = handle.snapshot();
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        let key = DiskCheck {
            version: snapshot.version,
            len: meta.len(),
            modified: meta.modified().ok(),
            same: false,
        };
        let cached = {
            let index = self.index();
            match index.get(path) {
                Some(entry) if entry.saves && !entry.flag_stale => return,
                Some(entry) => entry.disk_check,
                None => return,
            }
        };
        let same = match cached {
            Some(check)
                if DiskCheck {
                    same: false,
                    ..check
                } == key =>
            {
                check.same
            }
            _ => key.len == snapshot.text.len_bytes() as u64 && same_as_file(&snapshot.text, path),
        };
        if let Some(entry) = self.index().get_mut(path) {
            entry.disk_check = Some(DiskCheck { same, ..key });
        }
        if same {
            let version = snapshot.version;
            handle.update(|doc| Document {
                // Only the state that was compared turns clean.
                dirty: doc.dirty && doc.version != version,
                ..doc.clone()
            });
        }
    }
}

/// Whether the file at `path` holds exactly `text`.
fn same_as_file(text: &Rope, path: &Path) -> bool {
    let Ok(mut file) = File::open(path) else {
        return false;
    };
    let mut buf = vec![0; 64 * 1024];
    let mut chunks = text.chunks().map(str::as_bytes);
    let mut pending: &[u8] = &[];
    loop {
        let n = match file.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return false,
        };
        if n == 0 {
            return pending.is_empty() && chunks.all(<[u8]>::is_empty);
        }
        let mut disk = &buf[..n];
        while !disk.is_empty() {
            if pending.is_empty() {
                match chunks.next() {
                    Some(chunk) => pending = chunk,
                    None => return false,
                }
                continue;
            }
            let k = pending.len().min(disk.len());
            if pending[..k] != disk[..k] {
                return false;
            }
            pending = &pending[k..];
            disk = &disk[k..];
        }
    }
}

impl BufferStore for Documents {
    fn handle_for(&self, id: BufferId) -> Option<DocumentHandle> {
        let handle = self.buffers.handle_for(id)?;
        if handle.is_dirty()
            && let Some(path) = handle.snapshot().path.clone()
        {
            self.check_disk(&path, &handle);
        }
        Some(handle)
    }

    fn handle_for_path(&self, path: &Path) -> Option<DocumentHandle> {
        self.handle_checked(path)
    }

    fn dirty_flags(&self, ids: &[BufferId]) -> Vec<bool> {
        ids.iter()
            .map(|&id| self.handle_for(id).is_some_and(|h| h.is_dirty()))
            .collect()
    }

    fn generation(&self) -> Option<u64> {
        self.buffers.generation()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_compare_by_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        let text = "x".repeat(200_000) + "é\n";
        std::fs::write(&path, &text).unwrap();
        assert!(same_as_file(&Rope::from_str(&text), &path));
        assert!(!same_as_file(&Rope::from_str(&text[1..]), &path));
        let mut other = text.clone().into_bytes();
        other[150_000] = b'y';
        std::fs::write(&path, &other).unwrap();
        assert!(!same_as_file(&Rope::from_str(&text), &path));
        assert!(!same_as_file(
            &Rope::from_str(""),
            &dir.path().join("absent")
        ));
    }
}
