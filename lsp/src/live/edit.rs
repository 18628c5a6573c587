//! A server's `WorkspaceEdit` as the model reads it, applied nowhere:
//! one unified diff per file against its current text (the editor's, else
//! the disk's), and each file operation stated (`renamePreview`, and the
//! edits of `quickFixes`).
//!
//! The edit is played on copies of the texts, in the order the protocol
//! gives it: `documentChanges` in order (each `TextDocumentEdit` against
//! the text as the changes before it left it; `CreateFile`, `RenameFile`,
//! `DeleteFile` as they come), else `changes` file by file. The answer
//! lists, in that order, `{filePath, diff}` for a file's text edits (all
//! of them until an operation touches the file) and `{operation:
//! "create" | "rename" | "delete", filePath, newFilePath?, …options}`.
//! Applied in order (operations as stated, diffs with `git apply` or
//! `patch -p1` in the workspace folder), they make what the server meant.
//!
//! A diff names its file relative to the workspace folder holding it
//! (`a/src/x.py`, `b/src/x.py`, as git does), else by its absolute path.
//! A `TextDocumentEdit` for a version of an open document other than the
//! editor's current one is refused: the user typed since the server
//! computed it, and its positions no longer hold.
//!
//! The text edits of a file the user's deny rules hide are not played (its
//! text is never read): the answer lists it as `{filePath}` alone, which
//! the tool leaves out, counting it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ide_mcp_tools::review::unified_diff;
use ropey::Rope;
use serde_json::{Map, Value, json};

use super::answers::{Texts, position_of};
use ide_mcp_tools::position::PositionEncoding;
use ide_mcp_tools::position::position_to_char;
use ide_mcp_tools::uri::encoded_uri_path;

/// What the answer lists, in order.
enum Change {
    /// A file's text edits: its text before them, and after (set when an
    /// operation touches the file, or at the end).
    Diff {
        path: PathBuf,
        before: String,
        after: Option<String>,
    },
    /// A file operation, as the model reads it.
    Operation(Value),
    /// The text edits of a file the deny rules hide: listed by path only.
    Hidden(PathBuf),
}

/// The edit being played.
struct Play<'t, 'a> {
    texts: &'t mut Texts<'a>,
    encoding: PositionEncoding,
    version_of: &'t dyn Fn(&Path) -> Option<i32>,
    /// Each file the edit touched: its text now (`None`: it does not
    /// exist), and the index of its open [`Change::Diff`].
    files: HashMap<PathBuf, (Option<Rope>, Option<usize>)>,
    changes: Vec<Change>,
}

/// `edit` (a `WorkspaceEdit`) as the list of changes the module
/// documentation describes. `version_of` gives an open document's
/// current version; `folders` are the workspace folders diffs are
/// relative to.
pub(super) fn preview(
    edit: &Value,
    texts: &mut Texts<'_>,
    encoding: PositionEncoding,
    version_of: &dyn Fn(&Path) -> Option<i32>,
    folders: &[PathBuf],
) -> Result<Vec<Value>, String> {
    let mut play = Play {
        texts,
        encoding,
        version_of,
        files: HashMap::new(),
        changes: Vec::new(),
    };
    if let Some(document_changes) = edit["documentChanges"].as_array() {
        for change in document_changes {
            if let Some(kind) = change["kind"].as_str() {
                play.operation(kind, change)?;
            } else {
                let document = &change["textDocument"];
                let path = path_of(&document["uri"])?;
                if play.hidden(&path) {
                    continue;
                }
                play.check_version(&path, &document["version"])?;
                play.text_edits(&path, &change["edits"])?;
            }
        }
    } else if let Some(changes) = edit["changes"].as_object() {
        for (uri, edits) in changes {
            let path = path_of(&Value::from(uri.as_str()))?;
            if !play.hidden(&path) {
                play.text_edits(&path, edits)?;
            }
        }
    }
    Ok(play.finish(folders))
}

fn path_of(uri: &Value) -> Result<PathBuf, String> {
    let uri = uri.as_str().unwrap_or_default();
    encoded_uri_path(uri)
        .map(|path| path.to_path_buf())
        .ok_or_else(|| format!("the edit names {uri:?}, which is not a file"))
}

impl Play<'_, '_> {
    /// Whether the deny rules hide `path`; if so, it is listed once as
    /// [`Change::Hidden`].
    fn hidden(&mut self, path: &Path) -> bool {
        if !self.texts.hides(path) {
            return false;
        }
        let listed = self
            .changes
            .iter()
            .any(|change| matches!(change, Change::Hidden(p) if p == path));
        if !listed {
            self.changes.push(Change::Hidden(path.to_path_buf()));
        }
        true
    }

    fn check_version(&self, path: &Path, version: &Value) -> Result<(), String> {
        let (Some(theirs), Some(ours)) = (version.as_i64(), (self.version_of)(path)) else {
            return Ok(());
        };
        if theirs == i64::from(ours) {
            return Ok(());
        }
        Err(format!(
            "{} changed while the language server computed the edit (its version {theirs}, now {ours}): ask again",
            path.display()
        ))
    }

    /// The entry of `path`, its text read when first touched.
    fn file(&mut self, path: &Path) -> &mut (Option<Rope>, Option<usize>) {
        if !self.files.contains_key(path) {
            let text = self.texts.of(path).cloned();
            self.files.insert(path.to_path_buf(), (text, None));
        }
        self.files.get_mut(path).expect("just inserted")
    }

    /// Ends `path`'s open diff at its text now.
    fn close(&mut self, path: &Path) {
        let Some((text, open)) = self.files.get_mut(path) else {
            return;
        };
        if let Some(index) = open.take()
            && let Change::Diff { after, .. } = &mut self.changes[index]
        {
            *after = Some(text.as_ref().map(Rope::to_string).unwrap_or_default());
        }
    }

    fn text_edits(&mut self, path: &Path, edits: &Value) -> Result<(), String> {
        let encoding = self.encoding;
        let next_index = self.changes.len();
        let (text, open) = self.file(path);
        let Some(text) = text else {
            return Err(format!(
                "the edit changes {}, which does not exist",
                path.display()
            ));
        };
        let before = open.is_none().then(|| text.to_string());
        let mut spans = Vec::new();
        for (index, edit) in edits
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let (Some(start), Some(end)) = (
                position_of(&edit["range"]["start"]),
                position_of(&edit["range"]["end"]),
            ) else {
                return Err(format!("an edit of {} has no range", path.display()));
            };
            let new_text = edit["newText"]
                .as_str()
                .or_else(|| edit["snippet"]["value"].as_str())
                .unwrap_or_default();
            let from = position_to_char(text, start, encoding).value;
            let to = position_to_char(text, end, encoding).value.max(from);
            spans.push((from, to, index, new_text));
        }
        spans.sort_by_key(|&(from, to, index, _)| (from, to, index));
        if spans.windows(2).any(|pair| pair[0].1 > pair[1].0) {
            return Err(format!("the edits of {} overlap", path.display()));
        }
        // From the end, so that each range still holds; inserts at one
        // position keep their order.
        for &(from, to, _, new_text) in spans.iter().rev() {
            text.remove(from..to);
            text.insert(from, new_text);
        }
        if let Some(before) = before {
            *open = Some(next_index);
            self.changes.push(Change::Diff {
                path: path.to_path_buf(),
                before,
                after: None,
            });
        }
        Ok(())
    }

    fn operation(&mut self, kind: &str, change: &Value) -> Result<(), String> {
        let options = &change["options"];
        let mut out = Map::new();
        out.insert("operation".into(), kind.into());
        let flags: &[&str] = match kind {
            "create" => {
                let path = path_of(&change["uri"])?;
                self.close(&path);
                let overwrite = options["overwrite"] == true;
                let (text, _) = self.file(&path);
                if text.is_none() || overwrite {
                    *text = Some(Rope::new());
                }
                out.insert("filePath".into(), path.to_string_lossy().into());
                &["overwrite", "ignoreIfExists"]
            }
            "rename" => {
                let (old, new) = (path_of(&change["oldUri"])?, path_of(&change["newUri"])?);
                self.close(&old);
                self.close(&new);
                let moved = self.file(&old).0.take();
                let overwrite = options["overwrite"] == true;
                let (target, _) = self.file(&new);
                if target.is_none() || overwrite {
                    *target = moved;
                }
                out.insert("filePath".into(), old.to_string_lossy().into());
                out.insert("newFilePath".into(), new.to_string_lossy().into());
                &["overwrite", "ignoreIfExists"]
            }
            "delete" => {
                let path = path_of(&change["uri"])?;
                self.close(&path);
                self.file(&path).0 = None;
                out.insert("filePath".into(), path.to_string_lossy().into());
                &["recursive", "ignoreIfNotExists"]
            }
            other => {
                return Err(format!(
                    "the edit has an operation of unknown kind {other:?}"
                ));
            }
        };
        for &flag in flags {
            if options[flag] == true {
                out.insert(flag.into(), true.into());
            }
        }
        self.changes.push(Change::Operation(Value::Object(out)));
        Ok(())
    }

    fn finish(mut self, folders: &[PathBuf]) -> Vec<Value> {
        let open: Vec<PathBuf> = self.files.keys().cloned().collect();
        for path in open {
            self.close(&path);
        }
        self.changes
            .into_iter()
            .filter_map(|change| match change {
                Change::Operation(value) => Some(value),
                Change::Hidden(path) => Some(json!({"filePath": path.to_string_lossy()})),
                Change::Diff {
                    path,
                    before,
                    after,
                } => {
                    let after = after.unwrap_or_default();
                    let (old, new) = diff_names(&path, folders);
                    let diff = unified_diff(&before, &after, &old, &new);
                    (!diff.is_empty())
                        .then(|| json!({"filePath": path.to_string_lossy(), "diff": diff}))
                }
            })
            .collect()
    }
}

/// The names of `path` in its diff's headers: `a/…` and `b/…` relative to
/// the innermost workspace folder holding it, else its absolute path.
fn diff_names(path: &Path, folders: &[PathBuf]) -> (String, String) {
    let relative = folders
        .iter()
        .filter_map(|folder| path.strip_prefix(folder).ok())
        .min_by_key(|relative| relative.components().count())
        .filter(|relative| relative.components().count() > 0);
    if let Some(relative) = relative {
        let relative = relative.to_string_lossy();
        (format!("a/{relative}"), format!("b/{relative}"))
    } else {
        let path = path.to_string_lossy().into_owned();
        (path.clone(), path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::Disk;

    fn edit(l1: u32, c1: u32, l2: u32, c2: u32, text: &str) -> Value {
        json!({"range": {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}, "newText": text})
    }

    fn no_versions(_: &Path) -> Option<i32> {
        None
    }

    fn texts() -> Texts<'static> {
        Texts::new(&Disk)
            .with(
                Path::new("/w/util.py"),
                Rope::from("def greet(name):\n    return name\n"),
            )
            .with(
                Path::new("/w/app.py"),
                Rope::from("from util import greet\n\ngreet(\"é\")\n"),
            )
    }

    #[test]
    fn changes_become_one_diff_per_file() {
        let changes = json!({"changes": {
            "file:///w/util.py": [edit(0, 4, 0, 9, "hello")],
            "file:///w/app.py": [edit(2, 0, 2, 5, "hello"), edit(0, 17, 0, 22, "hello")],
        }});
        let folders = [PathBuf::from("/w")];
        let answer = preview(
            &changes,
            &mut texts(),
            PositionEncoding::Utf16,
            &no_versions,
            &folders,
        )
        .unwrap();
        assert_eq!(
            answer,
            [
                json!({"filePath": "/w/app.py", "diff": "--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n-from util import greet\n+from util import hello\n \n-greet(\"é\")\n+hello(\"é\")\n"}),
                json!({"filePath": "/w/util.py", "diff": "--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n-def greet(name):\n+def hello(name):\n     return name\n"}),
            ]
        );
    }

    #[test]
    fn document_changes_play_in_order_with_file_operations() {
        let edit = json!({"documentChanges": [
            {"textDocument": {"uri": "file:///w/util.py", "version": null}, "edits": [edit(0, 4, 0, 9, "hello")]},
            {"kind": "rename", "oldUri": "file:///w/util.py", "newUri": "file:///w/hello.py"},
            {"textDocument": {"uri": "file:///w/hello.py", "version": null}, "edits": [edit(1, 11, 1, 15, "who")]},
            {"kind": "create", "uri": "file:///w/new.py", "options": {"ignoreIfExists": true}},
            {"textDocument": {"uri": "file:///w/new.py", "version": null}, "edits": [edit(0, 0, 0, 0, "x = 1\n"), edit(0, 0, 0, 0, "y = 2\n")]},
            {"kind": "delete", "uri": "file:///elsewhere/old.py", "options": {"recursive": false}},
        ]});
        let answer = preview(
            &edit,
            &mut texts(),
            PositionEncoding::Utf16,
            &no_versions,
            &[PathBuf::from("/w")],
        )
        .unwrap();
        assert_eq!(
            answer,
            [
                json!({"filePath": "/w/util.py", "diff": "--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n-def greet(name):\n+def hello(name):\n     return name\n"}),
                json!({"operation": "rename", "filePath": "/w/util.py", "newFilePath": "/w/hello.py"}),
                json!({"filePath": "/w/hello.py", "diff": "--- a/hello.py\n+++ b/hello.py\n@@ -1,2 +1,2 @@\n def hello(name):\n-    return name\n+    return who\n"}),
                json!({"operation": "create", "filePath": "/w/new.py", "ignoreIfExists": true}),
                json!({"filePath": "/w/new.py", "diff": "--- a/new.py\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"}),
                json!({"operation": "delete", "filePath": "/elsewhere/old.py"}),
            ]
        );
    }

    #[test]
    fn a_hidden_files_edits_are_listed_by_path_and_its_text_never_read() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(folder.join(".claude")).unwrap();
        std::fs::write(
            folder.join(".claude/settings.json"),
            r#"{"permissions": {"deny": ["Read(secret.py)"]}}"#,
        )
        .unwrap();
        let roots = ide_mcp_tools::deny::SettingsRoots {
            home: None,
            config_dir: None,
            managed_dir: folder.join("managed"),
        };
        let hidden = ide_mcp_tools::deny::RuleSet::read(&roots, std::slice::from_ref(&folder));
        let secret = folder.join("secret.py");
        // On disk, but never read: its edit would not apply to this text.
        std::fs::write(&secret, "").unwrap();
        let uri = ide_mcp_tools::uri::encoded_file_uri(&secret);
        let edit = json!({"documentChanges": [
            {"textDocument": {"uri": uri, "version": 9}, "edits": [edit(5, 0, 5, 1, "x")]},
            {"textDocument": {"uri": "file:///w/util.py", "version": null}, "edits": [edit(0, 4, 0, 9, "hello")]},
            {"textDocument": {"uri": uri, "version": 9}, "edits": [edit(7, 0, 7, 1, "y")]},
        ]});
        let at_one = |_: &Path| Some(1);
        let answer = preview(
            &edit,
            &mut texts().hiding(std::sync::Arc::new(hidden)),
            PositionEncoding::Utf16,
            &at_one,
            &[PathBuf::from("/w")],
        )
        .unwrap();
        assert_eq!(
            answer,
            [
                json!({"filePath": secret.to_str().unwrap()}),
                json!({"filePath": "/w/util.py", "diff": "--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n-def greet(name):\n+def hello(name):\n     return name\n"}),
            ]
        );
    }

    #[test]
    fn stale_overlapping_and_missing_are_refused() {
        let versioned = json!({"documentChanges": [
            {"textDocument": {"uri": "file:///w/app.py", "version": 3}, "edits": [edit(0, 0, 0, 1, "F")]},
        ]});
        let at_five = |path: &Path| (path == Path::new("/w/app.py")).then_some(5);
        let stale = preview(
            &versioned,
            &mut texts(),
            PositionEncoding::Utf16,
            &at_five,
            &[],
        );
        assert_eq!(
            stale.unwrap_err(),
            "/w/app.py changed while the language server computed the edit (its version 3, now 5): ask again"
        );
        let at_three = |_: &Path| Some(3);
        let fresh = preview(
            &versioned,
            &mut texts(),
            PositionEncoding::Utf16,
            &at_three,
            &[],
        )
        .unwrap();
        assert_eq!(
            fresh[0]["diff"],
            "--- /w/app.py\n+++ /w/app.py\n@@ -1,3 +1,3 @@\n-from util import greet\n+From util import greet\n \n greet(\"é\")\n"
        );
        let overlapping = json!({"changes": {"file:///w/app.py": [edit(0, 0, 0, 4, "a"), edit(0, 2, 0, 6, "b")]}});
        assert_eq!(
            preview(
                &overlapping,
                &mut texts(),
                PositionEncoding::Utf16,
                &no_versions,
                &[]
            )
            .unwrap_err(),
            "the edits of /w/app.py overlap"
        );
        let missing = json!({"changes": {"file:///nowhere/x.py": [edit(0, 0, 0, 0, "a")]}});
        assert_eq!(
            preview(
                &missing,
                &mut texts(),
                PositionEncoding::Utf16,
                &no_versions,
                &[]
            )
            .unwrap_err(),
            "the edit changes /nowhere/x.py, which does not exist"
        );
        assert_eq!(
            preview(
                &json!({}),
                &mut texts(),
                PositionEncoding::Utf16,
                &no_versions,
                &[]
            )
            .unwrap(),
            Vec::<Value>::new()
        );
    }

    #[test]
    fn positions_count_in_the_server_s_encoding() {
        // `é` is two bytes: the string's closing quote is at byte 9.
        let changes = json!({"changes": {"file:///w/app.py": [edit(2, 7, 2, 9, "ü")]}});
        let answer = preview(
            &changes,
            &mut texts(),
            PositionEncoding::Utf8,
            &no_versions,
            &[],
        )
        .unwrap();
        assert!(
            answer[0]["diff"]
                .as_str()
                .unwrap()
                .ends_with("-greet(\"é\")\n+greet(\"ü\")\n"),
            "{answer:?}"
        );
    }
}
