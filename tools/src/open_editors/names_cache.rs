//! The tabs' names kept between `getOpenEditors` calls, a speed-up behind
//! its own wall.
//!
//! What it buys (BENCHMARKS.md § 3, "the names kept by the tool"):
//! deriving a tab's `uri` and label as it is written costs a UTF-8 check of
//! the path, the URI assembled and the last `/` found; with the names kept,
//! a list that changed is written from strings made before, and only the
//! tabs whose path changed are named again. The price is a second copy of
//! every path (the URI), kept with the ports' last generation.
//!
//! The plain path is [`names::derive`](super::names::derive), used whenever
//! the editor keeps no generation or a kept name is not the buffer's; the
//! tests check that both write the same bytes.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use rustc_hash::FxHashMap;

use super::names::derive;
use crate::ports::OpenBuffer;

/// A tab's `uri` and label, in one allocation.
#[derive(Debug)]
pub(crate) struct TabNames {
    /// The URI, then the label.
    text: Box<str>,
    /// Where the label starts in `text`.
    split: usize,
}

impl TabNames {
    fn of(path: &Path) -> Self {
        let (uri, label) = derive(path);
        let mut text = uri.to_string();
        let split = text.len();
        text.push_str(&label);
        Self {
            text: text.into_boxed_str(),
            split,
        }
    }

    /// `file://` + the path.
    pub(crate) fn uri(&self) -> &str {
        &self.text[..self.split]
    }

    /// The file name.
    pub(crate) fn label(&self) -> &str {
        &self.text[self.split..]
    }
}

/// One buffer's names and the path they were derived from.
#[derive(Clone, Debug)]
struct Kept {
    path: Arc<Path>,
    names: Arc<TabNames>,
}

impl Kept {
    fn is_for(&self, path: &Arc<Path>) -> bool {
        Arc::ptr_eq(&self.path, path) || self.path.as_os_str() == path.as_os_str()
    }
}

/// The names of a buffer list, one entry per buffer (`None` for buffers
/// without a path), and the editor's generation it was read at.
#[derive(Debug)]
pub(crate) struct NameTable {
    generation: u64,
    entries: Vec<Option<Kept>>,
}

impl NameTable {
    /// The names kept for `buffers[i]`, when they are that buffer's path's.
    pub(crate) fn get(&self, i: usize, buffer: &OpenBuffer) -> Option<&TabNames> {
        let kept = self.entries.get(i)?.as_ref()?;
        kept.is_for(buffer.path.as_ref()?).then(|| &*kept.names)
    }

    /// Whether every entry is the names of its buffer's path.
    fn fits(&self, buffers: &[OpenBuffer]) -> bool {
        self.entries.len() == buffers.len()
            && self
                .entries
                .iter()
                .zip(buffers)
                .all(|(kept, buffer)| match (kept, &buffer.path) {
                    (Some(kept), Some(path)) => kept.is_for(path),
                    (None, None) => true,
                    _ => false,
                })
    }

    /// The names of `buffers`, taken from `last` where a path is unchanged
    /// (at the same place, or moved), derived otherwise.
    fn build(generation: u64, buffers: &[OpenBuffer], last: Option<&Self>) -> Self {
        let last_entries = last.map_or(&[][..], |last| &last.entries[..]);
        // Built only when a tab moved: most changes keep the order. Keyed by
        // the path's bytes: `Path`'s own equality parses components, and
        // takes `/a/` and `/a/.` for the same path, which are two URIs.
        let mut by_path: Option<FxHashMap<&OsStr, &Kept>> = None;
        let entries = buffers
            .iter()
            .enumerate()
            .map(|(i, buffer)| {
                let path = buffer.path.as_ref()?;
                if let Some(Some(kept)) = last_entries.get(i)
                    && kept.is_for(path)
                {
                    return Some(kept.clone());
                }
                let moved = by_path.get_or_insert_with(|| {
                    last_entries
                        .iter()
                        .flatten()
                        .map(|kept| (kept.path.as_os_str(), kept))
                        .collect()
                });
                let names = match moved.get(path.as_os_str()) {
                    Some(kept) => Arc::clone(&kept.names),
                    None => Arc::new(TabNames::of(path)),
                };
                Some(Kept {
                    path: Arc::clone(path),
                    names,
                })
            })
            .collect();
        Self {
            generation,
            entries,
        }
    }
}

/// The name table last made, kept in the context's caches.
#[derive(Default)]
pub(crate) struct NamesCache {
    last: ArcSwapOption<NameTable>,
}

impl NamesCache {
    /// The names of `buffers`, read from the editor at `generation` (read
    /// before the buffers): the table kept, when it fits them, or one made
    /// from it, then kept.
    pub(crate) fn names_for(&self, generation: u64, buffers: &[OpenBuffer]) -> Arc<NameTable> {
        let last = self.last.load_full();
        if let Some(last) = &last
            && last.generation == generation
            && last.fits(buffers)
        {
            return Arc::clone(last);
        }
        let table = Arc::new(NameTable::build(generation, buffers, last.as_deref()));
        self.last.store(Some(Arc::clone(&table)));
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::BufferId;

    fn buffers(paths: &[&str]) -> Vec<OpenBuffer> {
        paths
            .iter()
            .enumerate()
            .map(|(i, path)| OpenBuffer::new(BufferId(i as u64), Path::new(path), "rust"))
            .collect()
    }

    #[test]
    fn unchanged_paths_keep_their_names_and_new_ones_are_derived() {
        let cache = NamesCache::default();
        let mut list = buffers(&["/ws/a.rs", "/ws/b.rs"]);
        let first = cache.names_for(1, &list);
        assert!(Arc::ptr_eq(&first, &cache.names_for(1, &list)), "kept");

        // A new tab in front: the others moved, and keep their names.
        list.insert(0, OpenBuffer::new(BufferId(9), Path::new("/ws/c/"), "rust"));
        list.push(OpenBuffer::without_path(BufferId(10), "rust"));
        let second = cache.names_for(2, &list);
        let names: Vec<_> = (0..list.len())
            .map(|i| second.get(i, &list[i]).map(|n| (n.uri(), n.label())))
            .collect();
        assert_eq!(
            names,
            [
                Some(("file:///ws/c/", "c")),
                Some(("file:///ws/a.rs", "a.rs")),
                Some(("file:///ws/b.rs", "b.rs")),
                None,
            ]
        );
        let a = first.get(0, &list[1]).expect("a");
        assert!(std::ptr::eq(a, second.get(1, &list[1]).expect("a")));

        // Names are never given for another path, nor for one that is the
        // same `Path` but another URI.
        assert!(second.get(0, &list[1]).is_none());
        let dot = buffers(&["/ws/c/."]);
        assert_eq!(
            cache.names_for(3, &dot).get(0, &dot[0]).map(TabNames::uri),
            Some("file:///ws/c/.")
        );
    }

    #[test]
    fn a_table_read_at_the_same_generation_is_checked_against_the_buffers() {
        let cache = NamesCache::default();
        cache.names_for(1, &buffers(&["/ws/a.rs"]));
        let other = buffers(&["/ws/b.rs"]);
        let table = cache.names_for(1, &other);
        assert_eq!(
            table.get(0, &other[0]).map(TabNames::uri),
            Some("file:///ws/b.rs")
        );
    }
}
