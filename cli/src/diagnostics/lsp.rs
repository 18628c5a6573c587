//! The `--lsp` sources: one [`LspDiagnostics`] per language server, told of
//! every file that changes under the workspace folders, its long work
//! shown on the [`ProgressBoard`].

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ide_mcp_lsp::client::{LspDiagnostics, LspServerOptions};
use ide_mcp_lsp::sync::lock;

use super::progress::{ProgressBoard, ProgressTask};
use super::watch::TreeWatcher;

/// Files `--lsp-open` may open at most, per pattern set: a glob that
/// matches a whole tree should not flood the server.
pub const MAX_LSP_OPEN: usize = 2000;

/// The running language servers and the watchers that feed them.
#[derive(Debug, Default)]
pub struct LspSources {
    /// One per `--lsp`.
    pub servers: Vec<Arc<LspDiagnostics>>,
    /// Kept for their side effect: dropping one stops its watching.
    _watchers: Vec<TreeWatcher>,
}

impl LspSources {
    /// Starts each server of `commands` on `folders`, opening `open` (the
    /// `--open` files and the `--lsp-open` matches) in those that diagnose
    /// them; watches the folders when `watch` is set.
    pub fn start(
        commands: &[Vec<String>],
        folders: &[PathBuf],
        open: &[PathBuf],
        base: &LspServerOptions,
        watch: bool,
        progress: &ProgressBoard,
    ) -> Self {
        let servers: Vec<Arc<LspDiagnostics>> = commands
            .iter()
            .map(|command| {
                let options = LspServerOptions {
                    command: command.clone(),
                    folders: folders.to_vec(),
                    open: open.to_vec(),
                    ..base.clone()
                };
                let title = command.first().cloned().unwrap_or_default();
                Arc::new(LspDiagnostics::start(
                    &options,
                    Some(progress_callback(progress, title)),
                ))
            })
            .collect();
        let mut watchers = Vec::new();
        if watch && !servers.is_empty() {
            for folder in folders {
                let notified = servers.clone();
                match TreeWatcher::start(folder, [], move |paths| {
                    for server in &notified {
                        server.files_changed(&paths);
                    }
                }) {
                    Ok(watcher) => watchers.push(watcher),
                    Err(error) => tracing::warn!(folder = %folder.display(), %error,
                        "cannot watch the folder; language servers see no changes"),
                }
            }
        }
        Self {
            servers,
            _watchers: watchers,
        }
    }

    /// Shuts every server down, each bounded.
    pub async fn shutdown(&self) {
        let all = self.servers.iter().map(|server| server.shutdown());
        for shutdown in all {
            shutdown.await;
        }
    }
}

/// The files of `folders` that match `globs` (gitignore syntax, relative to
/// each folder), ignored files left out, at most [`MAX_LSP_OPEN`].
pub fn glob_files(folders: &[PathBuf], globs: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    if globs.is_empty() {
        return Ok(found);
    }
    for folder in folders {
        let mut overrides = ignore::overrides::OverrideBuilder::new(folder);
        for glob in globs {
            overrides
                .add(glob)
                .map_err(|error| format!("--lsp-open `{glob}`: {error}"))?;
        }
        let overrides = overrides
            .build()
            .map_err(|error| format!("--lsp-open: {error}"))?;
        let walk = ignore::WalkBuilder::new(folder)
            .overrides(overrides)
            .require_git(false)
            .build();
        for entry in walk.flatten() {
            if entry.file_type().is_some_and(|kind| kind.is_file()) {
                if found.len() == MAX_LSP_OPEN {
                    tracing::warn!(
                        "--lsp-open matches more than {MAX_LSP_OPEN} files; opening the first {MAX_LSP_OPEN}"
                    );
                    return Ok(found);
                }
                found.push(entry.into_path());
            }
        }
    }
    Ok(found)
}

/// Shows a server's work-done progress as one task on the board.
fn progress_callback(
    board: &ProgressBoard,
    title: String,
) -> ide_mcp_lsp::client::ProgressCallback {
    let board = board.clone();
    let task: Mutex<Option<ProgressTask>> = Mutex::new(None);
    Arc::new(move |line: Option<String>| {
        let mut task = lock(&task);
        match line {
            Some(line) => task
                .get_or_insert_with(|| board.begin(title.clone()))
                .message(line),
            None => *task = None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsp_open_globs_match_under_each_folder_and_skip_ignored_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for file in ["src/a.c", "src/sub/b.c", "src/c.h", "build/gen.c", "top.c"] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        let mut found =
            glob_files(std::slice::from_ref(&root), &["src/**/*.c".to_owned()]).unwrap();
        found.sort();
        assert_eq!(found, [root.join("src/a.c"), root.join("src/sub/b.c")]);
        let mut found = glob_files(std::slice::from_ref(&root), &["*.c".to_owned()]).unwrap();
        found.sort();
        assert_eq!(
            found,
            [
                root.join("src/a.c"),
                root.join("src/sub/b.c"),
                root.join("top.c")
            ]
        );
        assert!(glob_files(&[root], &["[".to_owned()]).is_err());
    }
}
