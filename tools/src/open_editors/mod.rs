//! `getOpenEditors`: the file-backed buffers open in the editor.

mod names;
mod names_cache;

use std::borrow::Cow;
use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use ide_mcp_runtime::PreparedResult;

use crate::cache::ResultCache;
use crate::context::EditorPorts;
use crate::ports::{BufferId, EditorAccess, OpenBuffer};
pub use names::{TabUri, label};
use names_cache::{NameTable, NamesCache};

/// One tab: `{"uri", "isActive", "label", "languageId", "isDirty"}`, its
/// strings those kept for the buffer, or derived from its path as it is
/// written.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tab<'a> {
    /// `file://` + the raw path.
    pub uri: TabUri<'a>,
    /// Whether this is the active buffer.
    pub is_active: bool,
    /// The file name ([`label`]).
    pub label: Cow<'a, str>,
    /// The LSP language identifier.
    pub language_id: &'a str,
    /// Whether the buffer has unsaved changes.
    pub is_dirty: bool,
}

/// The `getOpenEditors` result: `{"tabs": […]}`, the file-backed buffers in
/// the order given. Serialized lazily, straight from the buffers.
#[derive(Clone, Copy, Debug)]
pub struct OpenEditors<'a> {
    buffers: &'a [OpenBuffer],
    dirty: &'a [bool],
    names: Option<&'a NameTable>,
}

impl<'a> OpenEditors<'a> {
    /// The tabs, buffers without a path skipped.
    pub fn tabs(&self) -> impl Iterator<Item = Tab<'a>> + 'a {
        let Self {
            buffers,
            dirty,
            names,
        } = *self;
        buffers.iter().enumerate().filter_map(move |(i, buffer)| {
            let path = buffer.path.as_deref()?;
            let (uri, label) = match names.and_then(|names| names.get(i, buffer)) {
                Some(kept) => (TabUri::Kept(kept.uri()), Cow::Borrowed(kept.label())),
                None => names::derive(path),
            };
            Some(Tab {
                uri,
                is_active: buffer.is_active,
                label,
                language_id: &buffer.language_id,
                is_dirty: dirty.get(i).copied().unwrap_or(false),
            })
        })
    }
}

impl Serialize for OpenEditors<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Tabs<'a>(OpenEditors<'a>);
        impl Serialize for Tabs<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.tabs())
            }
        }
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("tabs", &Tabs(*self))?;
        map.end()
    }
}

/// Builds the `getOpenEditors` result; `dirty[i]` is whether `buffers[i]`
/// has unsaved changes (missing entries: `false`). The names are derived
/// as each tab is written.
pub fn open_editors_result<'a>(buffers: &'a [OpenBuffer], dirty: &'a [bool]) -> OpenEditors<'a> {
    OpenEditors {
        buffers,
        dirty,
        names: None,
    }
}

/// The open buffers and their dirty flags, read from the ports; what
/// [`get_open_editors`] serializes (through [`open_editors_result`]).
#[derive(Clone, Debug, Default)]
pub struct OpenEditorsState {
    /// The open buffers, in tab order.
    pub buffers: Vec<OpenBuffer>,
    /// Each buffer's dirty flag.
    pub dirty: Vec<bool>,
    /// The tabs' names kept by the tool, when the editor keeps a generation.
    names: Option<Arc<NameTable>>,
}

impl OpenEditorsState {
    /// Copies the buffer list out of the editor port, less the files the
    /// deny rules hide, and reads each file-backed buffer's dirty flag from
    /// the buffer store (`false` when unknown). The tabs' names come from
    /// the tool's names cache when the editor keeps a generation (read
    /// first, as for the cached bytes).
    pub fn read(cx: &EditorPorts) -> Self {
        let generation = cx.editor().and_then(EditorAccess::generation);
        let mut buffers = cx
            .editor()
            .map(EditorAccess::open_buffers)
            .unwrap_or_default();
        if !cx.deny_rules().current().is_empty() {
            buffers.retain(|b| !b.path.as_deref().is_some_and(|path| cx.hides(path)));
        }
        let names = generation
            .filter(|_| !buffers.is_empty())
            .map(|generation| {
                cx.caches
                    .get::<NamesCache>()
                    .names_for(generation, &buffers)
            });
        let dirty = match cx.buffers() {
            Some(store) if !buffers.is_empty() => {
                let ids: Vec<BufferId> = buffers.iter().map(|b| b.id).collect();
                store.dirty_flags(&ids)
            }
            _ => Vec::new(),
        };
        Self {
            buffers,
            dirty,
            names,
        }
    }

    /// The same buffers with the names derived as they are written (what
    /// [`read`](Self::read) gives for an editor without a generation).
    #[must_use]
    pub fn without_kept_names(mut self) -> Self {
        self.names = None;
        self
    }
}

impl Serialize for OpenEditorsState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        OpenEditors {
            buffers: &self.buffers,
            dirty: &self.dirty,
            names: self.names.as_deref(),
        }
        .serialize(serializer)
    }
}

/// Returns the files open in the editor's tabs: `{"tabs": [{"uri":
/// "file:///abs/a.rs", "isActive", "label": "a.rs", "languageId": "rust",
/// "isDirty"}]}` — `isDirty` when the buffer has unsaved changes. Buffers not
/// backed by a file are left out; `{"tabs": []}` when nothing is open.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub fn get_open_editors(cx: &EditorPorts) -> PreparedResult {
    // With generations from both ports, unchanged tabs are answered from the
    // bytes serialized last time. They are read before the data (see
    // `EditorAccess::generation`), so new data is never filed under an old key.
    let rules = cx.deny_rules().generation();
    let key = match (cx.editor().map(EditorAccess::generation), cx.buffers()) {
        (Some(Some(editor)), Some(buffers)) => buffers.generation().map(|b| (editor, b, rules)),
        (Some(Some(editor)), None) => Some((editor, 0, rules)),
        _ => None,
    };
    let build = || PreparedResult::json_text(&OpenEditorsState::read(cx));
    match key {
        Some(key) => cx
            .caches
            .get::<OpenEditorsCache>()
            .0
            .get_or_build(key, build),
        None => build(),
    }
}

/// The `getOpenEditors` result last serialized, and the generations of the
/// editor, the buffer store and the deny rules it was built from.
#[derive(Default)]
struct OpenEditorsCache(ResultCache<(u64, u64, u64)>);

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::memory::MemoryWorkspace;
    use crate::ports::{BufferStore as _, Document};
    use crate::test_util::text_of;

    #[test]
    fn unchanged_tabs_are_served_from_the_cache_and_changes_rebuild_it() {
        let ws = MemoryWorkspace::new();
        ws.open(BufferId(1), Some(Path::new("/ws/a.rs")), "rust", "a");
        let cx = ws.editor_ports().build();
        let first = get_open_editors(&cx);
        let again = get_open_editors(&cx);
        assert!(
            std::ptr::eq(first.as_bytes(), again.as_bytes()),
            "served from the cache"
        );

        ws.buffers.set_dirty(BufferId(1), true);
        let dirty = text_of(get_open_editors(&cx));
        assert!(dirty.contains(r#""isDirty":true"#), "{dirty}");

        // A publish through the handle the store gave out counts too.
        ws.buffers
            .handle_for(BufferId(1))
            .expect("open")
            .update(|doc| Document {
                dirty: false,
                ..doc.clone()
            });
        let clean = text_of(get_open_editors(&cx));
        assert!(clean.contains(r#""isDirty":false"#), "{clean}");

        ws.open(BufferId(2), Some(Path::new("/ws/b.rs")), "rust", "b");
        let two = text_of(get_open_editors(&cx));
        assert!(two.contains("/ws/b.rs"), "{two}");
        ws.close(BufferId(1));
        let one = text_of(get_open_editors(&cx));
        assert!(!one.contains("/ws/a.rs"), "{one}");
    }

    /// The names cache's answers are byte for byte the plain path's, for
    /// awkward paths and across changes that keep, move, rename and drop tabs.
    #[test]
    fn kept_names_write_the_same_bytes_as_derived_ones() {
        let ws = MemoryWorkspace::new();
        let paths = [
            "/abs/src/a.rs",
            "/abs/ü #1%.ts",
            "/",
            "/abs/dir/",
            "/abs/dir/.",
            "/abs/..",
            "/abs//a.rs",
            "/abs/a\"b.rs",
        ];
        for (i, path) in (1..).zip(paths) {
            ws.open(BufferId(i), Some(Path::new(path)), "rust", "x");
        }
        ws.open(BufferId(99), None, "rust", "scratch");
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt as _;
            let lossy = Path::new(std::ffi::OsStr::from_bytes(b"/abs/\xffa.rs"));
            ws.open(BufferId(100), Some(lossy), "rust", "x");
        }
        let cx = ws.editor_ports().build();
        let check = |step: &str| {
            let kept = OpenEditorsState::read(&cx);
            assert!(kept.names.is_some(), "{step}: names kept");
            let derived = OpenEditorsState::read(&cx).without_kept_names();
            assert_eq!(
                serde_json::to_string(&kept).unwrap(),
                serde_json::to_string(&derived).unwrap(),
                "{step}"
            );
            assert_eq!(
                PreparedResult::json_text(&kept).as_bytes(),
                PreparedResult::json_text(&derived).as_bytes(),
                "{step}"
            );
        };
        check("first read");
        check("unchanged");
        ws.editor.set_active(Some(BufferId(3)));
        check("active moved");
        ws.close(BufferId(1));
        ws.open(BufferId(200), Some(Path::new("/abs/new.rs")), "rust", "n");
        check("closed and opened");
        ws.editor
            .set_path(BufferId(2), Some(Path::new("/abs/renamed.ts")));
        ws.editor
            .set_path(BufferId(99), Some(Path::new("/abs/saved.rs")));
        ws.editor.set_path(BufferId(4), None);
        check("renamed, saved, path dropped");
    }

    #[test]
    fn file_backed_buffers_become_tabs() {
        let buffers = [
            OpenBuffer::new(BufferId(1), Path::new("/abs/src/a.rs"), "rust").active(),
            OpenBuffer::without_path(BufferId(2), "plaintext"),
            OpenBuffer::new(BufferId(3), Path::new("/abs/ü #1.ts"), "typescript"),
            OpenBuffer::new(BufferId(4), Path::new("/"), "plaintext"),
        ];
        assert_eq!(
            serde_json::to_string(&open_editors_result(&buffers, &[true, true])).unwrap(),
            concat!(
                r#"{"tabs":[{"uri":"file:///abs/src/a.rs","isActive":true,"label":"a.rs","languageId":"rust","isDirty":true},"#,
                r#"{"uri":"file:///abs/ü #1.ts","isActive":false,"label":"ü #1.ts","languageId":"typescript","isDirty":false},"#,
                r#"{"uri":"file:///","isActive":false,"label":"/","languageId":"plaintext","isDirty":false}]}"#
            )
        );
    }

    #[test]
    fn a_tab_is_named_after_its_path() {
        for (path, uri, label) in [
            ("/abs/a b#1%.rs", "file:///abs/a b#1%.rs", "a b#1%.rs"),
            ("/abs/dir/", "file:///abs/dir/", "dir"),
            ("/abs/dir/.", "file:///abs/dir/.", "dir"),
            ("/abs/..", "file:///abs/..", "/abs/.."),
            ("/abs//a.rs", "file:///abs//a.rs", "a.rs"),
            ("/abs/a.rs/", "file:///abs/a.rs/", "a.rs"),
            ("/abs/.hidden", "file:///abs/.hidden", ".hidden"),
            ("/", "file:///", "/"),
        ] {
            let buffers = [OpenBuffer::new(BufferId(1), Path::new(path), "rust")];
            let tab = open_editors_result(&buffers, &[]).tabs().next().unwrap();
            assert_eq!((tab.uri.to_string(), &*tab.label), (uri.to_owned(), label));
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_is_named_lossily() {
        use std::os::unix::ffi::OsStrExt as _;
        let path = Path::new(std::ffi::OsStr::from_bytes(b"/abs/\xffa.rs"));
        let buffers = [OpenBuffer::new(BufferId(1), path, "rust")];
        assert_eq!(
            serde_json::to_string(&open_editors_result(&buffers, &[])).unwrap(),
            r#"{"tabs":[{"uri":"file:///abs/?a.rs","isActive":false,"label":"?a.rs","languageId":"rust","isDirty":false}]}"#
                .replace('?', "\u{fffd}")
        );
    }

    #[test]
    fn nothing_open_is_no_tabs() {
        assert_eq!(
            serde_json::to_string(&open_editors_result(&[], &[])).unwrap(),
            r#"{"tabs":[]}"#
        );
        let untitled = [OpenBuffer::without_path(BufferId(1), "rust").active()];
        assert_eq!(
            serde_json::to_string(&open_editors_result(&untitled, &[true])).unwrap(),
            r#"{"tabs":[]}"#
        );
    }

    #[test]
    fn the_tool_reads_the_ports() {
        assert_eq!(
            text_of(get_open_editors(&EditorPorts::empty())),
            r#"{"tabs":[]}"#
        );
        let ws = MemoryWorkspace::new();
        ws.open(BufferId(1), Some(Path::new("/ws/a.rs")), "rust", "a");
        ws.open(BufferId(2), None, "rust", "scratch");
        ws.open(BufferId(3), Some(Path::new("/ws/b.py")), "python", "b");
        ws.editor.set_active(Some(BufferId(3)));
        ws.buffers.set_text(BufferId(1), "a changed");
        let expected = concat!(
            r#"{"tabs":[{"uri":"file:///ws/a.rs","isActive":false,"label":"a.rs","languageId":"rust","isDirty":true},"#,
            r#"{"uri":"file:///ws/b.py","isActive":true,"label":"b.py","languageId":"python","isDirty":false}]}"#
        );
        assert_eq!(
            text_of(get_open_editors(&ws.editor_ports().build())),
            expected
        );
        // Without a buffer store, nothing is known to be dirty.
        let cx = EditorPorts::builder().editor(ws.editor.clone()).build();
        assert_eq!(
            text_of(get_open_editors(&cx)),
            expected.replace(r#""isDirty":true"#, r#""isDirty":false"#)
        );
    }
}
