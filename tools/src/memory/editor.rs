//! `MemoryEditor`: an [`EditorAccess`] kept in memory.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use lsp_types::Position;

use crate::ports::{BufferId, EditorAccess, OpenBuffer, Selection};

/// The open buffers, the active one and each buffer's selection, behind one
/// briefly held `Mutex`; readers copy out.
///
/// Activating a buffer restores the selection it last had (a cursor at 0:0 at
/// first), as editors do.
#[derive(Debug, Default)]
pub struct MemoryEditor {
    state: Mutex<EditorState>,
    /// Bumped after every change (see [`EditorAccess::generation`]).
    generation: AtomicU64,
}

/// The state, locked for a change: the generation is bumped when the change
/// is done (on drop, still under the lock).
struct Changing<'a> {
    state: MutexGuard<'a, EditorState>,
    generation: &'a AtomicU64,
}

impl std::ops::Deref for Changing<'_> {
    type Target = EditorState;
    fn deref(&self) -> &EditorState {
        &self.state
    }
}

impl std::ops::DerefMut for Changing<'_> {
    fn deref_mut(&mut self) -> &mut EditorState {
        &mut self.state
    }
}

impl Drop for Changing<'_> {
    fn drop(&mut self) {
        self.generation.fetch_add(1, Ordering::Release);
    }
}

#[derive(Debug, Default)]
struct EditorState {
    /// In tab order; `is_active` is not kept here but derived from `active`.
    buffers: Vec<OpenBuffer>,
    /// Where each id is in `buffers`, so focus and selection changes cost
    /// O(1) with thousands of buffers open (closing one is O(n)).
    positions: HashMap<BufferId, usize>,
    active: Option<BufferId>,
    selections: HashMap<BufferId, (Position, Position)>,
}

impl EditorState {
    fn get(&self, id: BufferId) -> Option<&OpenBuffer> {
        self.positions.get(&id).map(|&i| &self.buffers[i])
    }

    fn get_mut(&mut self, id: BufferId) -> Option<&mut OpenBuffer> {
        self.positions.get(&id).map(|&i| &mut self.buffers[i])
    }
}

impl MemoryEditor {
    /// An editor with nothing open.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, EditorState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn changing(&self) -> Changing<'_> {
        Changing {
            state: self.state(),
            generation: &self.generation,
        }
    }

    /// Opens `buffer` as the last tab (or replaces the open buffer with its
    /// id, in place); it becomes active when `buffer.is_active` is set.
    pub fn open(&self, buffer: OpenBuffer) {
        let mut state = self.changing();
        if buffer.is_active {
            state.active = Some(buffer.id);
        }
        if let Some(slot) = state.get_mut(buffer.id) {
            *slot = buffer;
        } else {
            let (id, at) = (buffer.id, state.buffers.len());
            state.buffers.push(buffer);
            state.positions.insert(id, at);
        }
    }

    /// Closes buffer `id`; returns whether it was open. Closing the active
    /// buffer leaves no buffer active.
    pub fn close(&self, id: BufferId) -> bool {
        let mut state = self.changing();
        let Some(at) = state.positions.remove(&id) else {
            return false;
        };
        state.buffers.remove(at);
        let EditorState {
            buffers, positions, ..
        } = &mut *state;
        for (i, buffer) in buffers.iter().enumerate().skip(at) {
            positions.insert(buffer.id, i);
        }
        state.selections.remove(&id);
        if state.active == Some(id) {
            state.active = None;
        }
        true
    }

    /// Makes buffer `id` the active one (`None`: no buffer has focus); returns
    /// `false`, changing nothing, when `id` is not open.
    pub fn set_active(&self, id: Option<BufferId>) -> bool {
        let mut state = self.changing();
        if let Some(id) = id
            && state.get(id).is_none()
        {
            return false;
        }
        state.active = id;
        true
    }

    /// Sets buffer `id`'s selection (in either order; a cursor when
    /// `start == end`) and makes it active; `false` when `id` is not open.
    pub fn set_selection(&self, id: BufferId, start: Position, end: Position) -> bool {
        let mut state = self.changing();
        if state.get(id).is_none() {
            return false;
        }
        state.selections.insert(id, (start, end));
        state.active = Some(id);
        true
    }

    /// Sets buffer `id`'s path (after "save as"); `false` when `id` is not open.
    pub fn set_path(&self, id: BufferId, path: Option<&Path>) -> bool {
        let mut state = self.changing();
        match state.get_mut(id) {
            Some(buffer) => {
                buffer.path = path.map(Arc::from);
                true
            }
            None => false,
        }
    }
}

impl EditorAccess for MemoryEditor {
    fn generation(&self) -> Option<u64> {
        Some(self.generation.load(Ordering::Acquire))
    }

    fn open_buffers(&self) -> Vec<OpenBuffer> {
        let state = self.state();
        state
            .buffers
            .iter()
            .map(|b| {
                let mut buffer = b.clone();
                buffer.is_active = state.active == Some(b.id);
                buffer
            })
            .collect()
    }

    fn active_selection(&self) -> Option<Selection> {
        let state = self.state();
        let id = state.active?;
        let buffer = state.get(id)?;
        let (start, end) = state.selections.get(&id).copied().unwrap_or_default();
        Some(Selection {
            buffer: id,
            path: buffer.path.clone(),
            start,
            end,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(id: u64, path: &str) -> OpenBuffer {
        OpenBuffer::new(BufferId(id), Path::new(path), "rust")
    }

    #[test]
    fn buffers_selection_and_focus() {
        let editor = MemoryEditor::new();
        assert_eq!(editor.active_selection(), None);
        editor.open(buffer(1, "/ws/a.rs"));
        editor.open(buffer(2, "/ws/b.rs"));
        assert_eq!(editor.active_selection(), None);
        assert!(editor.set_selection(BufferId(2), Position::new(1, 2), Position::new(0, 0)));
        let flags: Vec<bool> = editor.open_buffers().iter().map(|b| b.is_active).collect();
        assert_eq!(flags, [false, true]);
        assert!(editor.set_active(Some(BufferId(1))));
        let sel = editor.active_selection().unwrap();
        assert_eq!(
            (sel.buffer, sel.start, sel.end),
            (BufferId(1), Position::default(), Position::default())
        );
        assert!(editor.set_active(Some(BufferId(2))));
        let sel = editor.active_selection().unwrap();
        assert_eq!(sel.ordered(), (Position::new(0, 0), Position::new(1, 2)));
        assert_eq!(sel.path.as_deref(), Some(Path::new("/ws/b.rs")));
        assert!(!editor.set_active(Some(BufferId(9))));
        editor.open(buffer(3, "/ws/c.rs"));
        assert!(editor.close(BufferId(2)));
        assert!(!editor.close(BufferId(2)));
        assert_eq!(editor.active_selection(), None);
        let ids: Vec<_> = editor.open_buffers().iter().map(|b| b.id).collect();
        assert_eq!(ids, [BufferId(1), BufferId(3)]);
        assert!(editor.set_selection(BufferId(3), Position::new(0, 1), Position::new(0, 1)));
        assert_eq!(
            editor.active_selection().unwrap().path.as_deref(),
            Some(Path::new("/ws/c.rs"))
        );
        // Reopening an id replaces the buffer in place.
        editor.open(OpenBuffer::new(BufferId(1), Path::new("/ws/a2.rs"), "rust"));
        let paths: Vec<_> = editor
            .open_buffers()
            .into_iter()
            .map(|b| b.path.clone().unwrap())
            .collect();
        assert_eq!(
            paths,
            [
                Arc::from(Path::new("/ws/a2.rs")),
                Arc::from(Path::new("/ws/c.rs"))
            ]
        );
    }
}
