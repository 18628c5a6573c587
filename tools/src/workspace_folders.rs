//! `getWorkspaceFolders`: the folders the server was started for.

use std::path::PathBuf;
use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use ide_mcp_runtime::PreparedResult;

use crate::cache::ResultCache;
use crate::context::EditorPorts;
use crate::open_editors::label;
use crate::uri::{FileUri, LossyPath};

/// The `getWorkspaceFolders` result: `{"success": true, "folders": [{"name",
/// "uri", "path"}], "rootPath": <first folder or null>}`.
#[derive(Clone, Copy, Debug)]
pub struct WorkspaceFolders<'a> {
    folders: &'a [PathBuf],
}

impl Serialize for WorkspaceFolders<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Folder<'a>(&'a PathBuf);
        impl Serialize for Folder<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("name", &label(self.0))?;
                map.serialize_entry("uri", &FileUri(self.0))?;
                map.serialize_entry("path", &LossyPath(self.0))?;
                map.end()
            }
        }
        struct Folders<'a>(&'a [PathBuf]);
        impl Serialize for Folders<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.iter().map(Folder))
            }
        }
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("success", &true)?;
        map.serialize_entry("folders", &Folders(self.folders))?;
        map.serialize_entry("rootPath", &self.folders.first().map(|p| LossyPath(p)))?;
        map.end()
    }
}

/// Builds the `getWorkspaceFolders` result; the first folder is the root.
pub fn workspace_folders_result(folders: &[PathBuf]) -> WorkspaceFolders<'_> {
    WorkspaceFolders { folders }
}

/// The folders as [`get_workspace_folders`] returns them.
#[derive(Clone, Debug)]
pub struct WorkspaceFoldersState(pub Arc<[PathBuf]>);

impl Serialize for WorkspaceFoldersState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        workspace_folders_result(&self.0).serialize(serializer)
    }
}

/// Returns the workspace (project) folders open in the editor: `{"success":
/// true, "folders": [{"name", "uri", "path"}], "rootPath"}` — `rootPath` is the
/// first folder's absolute path, `null` when there is none.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub fn get_workspace_folders(cx: &EditorPorts) -> PreparedResult {
    // The folders are fixed with the context: serialized once.
    let folders = cx.workspace_folders_arc();
    cx.caches.get::<FoldersCache>().0.get_or_build_by(
        |cached| Arc::ptr_eq(cached, &folders),
        || Arc::clone(&folders),
        || PreparedResult::json_text(&WorkspaceFoldersState(Arc::clone(&folders))),
    )
}

/// The result last serialized, and the folders it was made of (held, so
/// that their address is not reused by other folders).
#[derive(Default)]
struct FoldersCache(ResultCache<Arc<[PathBuf]>>);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::text_of;

    #[test]
    fn folders_and_the_root() {
        let folders = [
            PathBuf::from("/abs/project"),
            PathBuf::from("/abs/other dir"),
        ];
        assert_eq!(
            serde_json::to_string(&workspace_folders_result(&folders)).unwrap(),
            concat!(
                r#"{"success":true,"folders":[{"name":"project","uri":"file:///abs/project","path":"/abs/project"},"#,
                r#"{"name":"other dir","uri":"file:///abs/other dir","path":"/abs/other dir"}],"rootPath":"/abs/project"}"#
            )
        );
    }

    #[test]
    fn no_folders_is_a_null_root() {
        let expected = r#"{"success":true,"folders":[],"rootPath":null}"#;
        assert_eq!(
            serde_json::to_string(&workspace_folders_result(&[])).unwrap(),
            expected
        );
        assert_eq!(
            text_of(get_workspace_folders(&EditorPorts::empty())),
            expected
        );
    }

    #[test]
    fn the_tool_reads_the_context() {
        let cx = EditorPorts::builder()
            .workspace_folders(["/ws", "/lib"])
            .build();
        let expected = r#"{"success":true,"folders":[{"name":"ws","uri":"file:///ws","path":"/ws"},{"name":"lib","uri":"file:///lib","path":"/lib"}],"rootPath":"/ws"}"#;
        assert_eq!(text_of(get_workspace_folders(&cx)), expected);
        // Served again from the bytes serialized the first time.
        let (first, again) = (get_workspace_folders(&cx), get_workspace_folders(&cx));
        assert_eq!(first, again);
        // Another context's folders are not served from this one's cache.
        let other = EditorPorts::builder().workspace_folders(["/other"]).build();
        assert!(text_of(get_workspace_folders(&other)).contains("/other"));
    }
}
