//! `MemoryBuffers`: a [`BufferStore`] of ropes published through `ArcSwap`.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use ropey::Rope;
use rustc_hash::FxHashMap;

use crate::ports::{BufferId, BufferStore, Document, DocumentHandle};

/// Open documents by id and by path.
///
/// The index (which ids and paths are open) sits behind an `RwLock` taken
/// briefly on open, close and lookup; the documents themselves are
/// [`DocumentHandle`]s, so publishing new text never takes a write lock and
/// reading a snapshot is a wait-free load. An editor that keeps the handle
/// [`open`](Self::open) returns can publish through it directly.
#[derive(Debug, Default)]
pub struct MemoryBuffers {
    index: RwLock<Index>,
    /// Bumped after every change, by the store and by its handles' publishes.
    generation: Arc<AtomicU64>,
}

/// The open buffers, by id and by path. Hashed with `FxHash`, not `SipHash`:
/// the keys come from the editor, and a lookup (each `checkDocumentDirty`,
/// each `getDiagnostics` of one file) would spend more on `SipHash` than on
/// the rest of the lookup. Paths are keyed by their bytes in the form their
/// components make ([`path_key`]): hashing a `Path` walks its components.
#[derive(Debug, Default)]
struct Index {
    by_id: FxHashMap<BufferId, DocumentHandle>,
    by_path: FxHashMap<Box<[u8]>, BufferId>,
}

/// The key of `path` in the path index: its bytes as its components make
/// them (`/a//b/./c/` is `/a/b/c`), so that two paths `Path` calls equal
/// have one key. Clean absolute paths (those a tool's `filePath` becomes,
/// those editors send) are in that form already: their own key, with no
/// copy.
fn path_key(path: &Path) -> Cow<'_, [u8]> {
    #[cfg(unix)]
    if let bytes = path.as_os_str().as_encoded_bytes()
        && crate::uri::is_clean(bytes)
    {
        return Cow::Borrowed(bytes);
    }
    let joined: PathBuf = path.components().collect();
    Cow::Owned(joined.into_os_string().into_encoded_bytes())
}

impl MemoryBuffers {
    /// A store with nothing open.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> RwLockReadGuard<'_, Index> {
        self.index.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Index> {
        self.index.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens buffer `id` with `document` (replacing any open buffer with that
    /// id) and returns its handle.
    pub fn open(&self, id: BufferId, document: Document) -> DocumentHandle {
        let path = document.path.clone();
        let handle = DocumentHandle::with_generation(document, Arc::clone(&self.generation));
        let mut index = self.write();
        if let Some(old) = index.by_id.insert(id, handle.clone()) {
            forget_path(&mut index, id, &old);
        }
        if let Some(path) = path {
            index.by_path.insert(path_key(&path).into(), id);
        }
        self.generation.fetch_add(1, Ordering::Release);
        handle
    }

    /// Closes buffer `id`, returning its handle (readers holding snapshots keep them).
    pub fn close(&self, id: BufferId) -> Option<DocumentHandle> {
        let mut index = self.write();
        let handle = index.by_id.remove(&id)?;
        forget_path(&mut index, id, &handle);
        self.generation.fetch_add(1, Ordering::Release);
        Some(handle)
    }

    /// Publishes new text for buffer `id`: version + 1, dirty. `false` when
    /// `id` is not open.
    pub fn set_text(&self, id: BufferId, text: impl Into<Rope>) -> bool {
        let text = text.into();
        self.update(id, |doc| Document {
            text: text.clone(),
            version: doc.version.wrapping_add(1),
            dirty: true,
            ..doc.clone()
        })
    }

    /// Sets buffer `id`'s dirty flag (`false` after a save); `false` when `id`
    /// is not open.
    pub fn set_dirty(&self, id: BufferId, dirty: bool) -> bool {
        self.update(id, |doc| Document {
            dirty,
            ..doc.clone()
        })
    }

    /// Publishes `change(current)` for buffer `id`; `false` when `id` is not
    /// open. `change` must keep the document's path: use
    /// [`set_path`](Self::set_path) to move it.
    pub fn update(&self, id: BufferId, change: impl FnMut(&Document) -> Document) -> bool {
        let Some(handle) = self.handle_for(id) else {
            return false;
        };
        handle.update(change);
        true
    }

    /// Moves buffer `id` to `path` ("save as": no longer untitled) or makes it
    /// path-less; `false` when `id` is not open.
    pub fn set_path(&self, id: BufferId, path: Option<&Path>) -> bool {
        let path: Option<Arc<Path>> = path.map(Arc::from);
        let mut index = self.write();
        let Some(handle) = index.by_id.get(&id).cloned() else {
            return false;
        };
        forget_path(&mut index, id, &handle);
        if let Some(path) = &path {
            index.by_path.insert(path_key(path).into(), id);
        }
        handle.update(|doc| Document {
            path: path.clone(),
            untitled: doc.untitled && path.is_none(),
            ..doc.clone()
        });
        true
    }

    /// The ids of the open buffers, in no particular order.
    pub fn ids(&self) -> Vec<BufferId> {
        self.read().by_id.keys().copied().collect()
    }
}

/// Removes `handle`'s path from the path index if it points at `id`.
fn forget_path(index: &mut Index, id: BufferId, handle: &DocumentHandle) {
    if let Some(path) = &handle.snapshot().path {
        let key = path_key(path);
        if index.by_path.get(&*key) == Some(&id) {
            index.by_path.remove(&*key);
        }
    }
}

impl BufferStore for MemoryBuffers {
    fn handle_for(&self, id: BufferId) -> Option<DocumentHandle> {
        self.read().by_id.get(&id).cloned()
    }

    fn handle_for_path(&self, path: &Path) -> Option<DocumentHandle> {
        let index = self.read();
        let id = index.by_path.get(&*path_key(path))?;
        index.by_id.get(id).cloned()
    }

    fn dirty_flags(&self, ids: &[BufferId]) -> Vec<bool> {
        let index = self.read();
        ids.iter()
            .map(|id| index.by_id.get(id).is_some_and(DocumentHandle::is_dirty))
            .collect()
    }

    fn generation(&self) -> Option<u64> {
        Some(self.generation.load(Ordering::Acquire))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Two paths have one key exactly when `Path` calls them equal, and
        /// a path's key is its components joined.
        #[test]
        fn path_keys_follow_path_equality(a in "[/a.]{0,7}", b in "[/a.]{0,7}") {
            let (a, b) = (Path::new(&a), Path::new(&b));
            prop_assert_eq!(a == b, path_key(a) == path_key(b), "{:?} {:?}", a, b);
            let joined: PathBuf = a.components().collect();
            prop_assert_eq!(&*path_key(a), joined.as_os_str().as_encoded_bytes());
        }
    }

    #[test]
    fn a_path_is_found_in_any_spelling() {
        let buffers = MemoryBuffers::new();
        buffers.open(BufferId(1), doc("x", "/ws/src/a.rs"));
        for spelling in ["/ws/src/a.rs", "/ws//src/./a.rs", "//ws/src/a.rs/"] {
            assert!(
                buffers.handle_for_path(Path::new(spelling)).is_some(),
                "{spelling}"
            );
        }
        assert!(
            buffers
                .handle_for_path(Path::new("/ws/src/../src/a.rs"))
                .is_none()
        );
        buffers.set_path(BufferId(1), Some(Path::new("/ws//b.rs")));
        assert!(buffers.handle_for_path(Path::new("/ws/src/a.rs")).is_none());
        assert!(buffers.handle_for_path(Path::new("/ws/b.rs")).is_some());
        buffers.close(BufferId(1));
        assert!(buffers.handle_for_path(Path::new("/ws/b.rs")).is_none());
    }

    fn doc(text: &str, path: &str) -> Document {
        Document::new(text, Some(Arc::from(Path::new(path))))
    }

    #[test]
    fn open_publish_close() {
        let store = MemoryBuffers::new();
        let handle = store.open(BufferId(1), doc("fn main() {}", "/ws/a.rs"));
        assert!(store.set_text(BufferId(1), "fn main() { x }"));
        let snap = store
            .handle_for_path(Path::new("/ws/a.rs"))
            .unwrap()
            .snapshot();
        assert_eq!((snap.version, snap.dirty), (1, true));
        assert_eq!(snap.text.to_string(), "fn main() { x }");
        assert_eq!(handle.snapshot().version, 1, "the handle sees the publish");
        assert_eq!(
            store.dirty_flags(&[BufferId(9), BufferId(1)]),
            [false, true]
        );
        assert!(store.set_dirty(BufferId(1), false));
        assert!(!handle.snapshot().dirty);
        assert!(store.set_path(BufferId(1), Some(Path::new("/ws/b.rs"))));
        assert!(store.handle_for_path(Path::new("/ws/a.rs")).is_none());
        assert!(store.handle_for_path(Path::new("/ws/b.rs")).is_some());
        assert!(store.close(BufferId(1)).is_some());
        assert!(store.handle_for(BufferId(1)).is_none());
        assert!(store.handle_for_path(Path::new("/ws/b.rs")).is_none());
        assert!(!store.set_text(BufferId(1), "x"));
        assert_eq!(
            snap.text.to_string(),
            "fn main() { x }",
            "old snapshots live on"
        );
    }

    #[test]
    fn reopening_an_id_moves_its_path() {
        let store = MemoryBuffers::new();
        store.open(BufferId(1), doc("a", "/ws/a.rs"));
        store.open(BufferId(1), doc("b", "/ws/b.rs"));
        assert!(store.handle_for_path(Path::new("/ws/a.rs")).is_none());
        assert_eq!(store.ids(), [BufferId(1)]);
    }
}
