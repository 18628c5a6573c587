//! Which file changes can change a check: [`WatchFilter`] leaves out what
//! `.gitignore` (and `.git/info/exclude`, `.ignore`) exclude, build output
//! (`target/` and cargo's reported output directories), `.git/`,
//! `node_modules/`, and editors' swap, backup and lock files; and the file
//! watcher that watches only the directories that pass it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ide_mcp_lsp::sync::lock;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Match, WalkBuilder};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

/// Directory names that never hold sources a check reads.
const IGNORED_DIRS: [&str; 4] = [".git", "node_modules", ".hg", ".svn"];

/// Decides whether a changed path can change a check's result.
#[derive(Debug)]
pub struct WatchFilter {
    root: PathBuf,
    /// Build output: `target/` and the directories cargo reported.
    output_dirs: Vec<PathBuf>,
    /// The ignore files found under the root, deepest last.
    ignores: Vec<Gitignore>,
}

impl WatchFilter {
    /// The rules for the tree at `root` (absolute), reading its ignore files.
    pub fn new(root: &Path, output_dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut filter = Self {
            root: root.to_path_buf(),
            output_dirs: vec![root.join("target")],
            ignores: Vec::new(),
        };
        filter.add_output_dirs(output_dirs);
        filter.reload_ignore_files();
        filter
    }

    /// Adds directories a build writes to.
    pub fn add_output_dirs(&mut self, dirs: impl IntoIterator<Item = PathBuf>) {
        for dir in dirs {
            if !self.output_dirs.contains(&dir) {
                self.output_dirs.push(dir);
            }
        }
    }

    /// Reads the ignore files again (after one of them changed).
    pub fn reload_ignore_files(&mut self) {
        let mut ignores = Vec::new();
        let mut root_rules = GitignoreBuilder::new(&self.root);
        for name in [".git/info/exclude", ".gitignore", ".ignore"] {
            let path = self.root.join(name);
            if path.is_file()
                && let Some(error) = root_rules.add(&path)
            {
                tracing::warn!(path = %path.display(), %error, "cannot read an ignore file");
            }
        }
        ignores.extend(build(&root_rules));
        for dir in self.directories().into_iter().skip(1) {
            let mut rules = GitignoreBuilder::new(&dir);
            let mut any = false;
            for name in [".gitignore", ".ignore"] {
                let path = dir.join(name);
                if path.is_file() {
                    any = true;
                    if let Some(error) = rules.add(&path) {
                        tracing::warn!(path = %path.display(), %error, "cannot read an ignore file");
                    }
                }
            }
            if any {
                ignores.extend(build(&rules));
            }
        }
        self.ignores = ignores;
    }

    /// Whether a change to `path` cannot change a check.
    pub fn is_ignored(&self, path: &Path) -> bool {
        if !path.starts_with(&self.root) {
            return true;
        }
        if self.output_dirs.iter().any(|dir| path.starts_with(dir)) {
            return true;
        }
        let Ok(relative) = path.strip_prefix(&self.root) else {
            return true;
        };
        if relative
            .components()
            .any(|part| IGNORED_DIRS.iter().any(|dir| part.as_os_str() == *dir))
        {
            return true;
        }
        if path.file_name().is_some_and(is_editor_scratch) {
            return true;
        }
        self.is_ignored_by_files(path, path.is_dir())
    }

    /// Whether a change to `path` means the ignore rules changed.
    pub fn is_ignore_file(path: &Path) -> bool {
        path.ends_with(".git/info/exclude")
            || path
                .file_name()
                .is_some_and(|name| name == ".gitignore" || name == ".ignore")
    }

    fn is_ignored_by_files(&self, path: &Path, is_dir: bool) -> bool {
        // The deepest rule that matches decides, as in git.
        for rules in self.ignores.iter().rev() {
            if !path.starts_with(rules.path()) {
                continue;
            }
            match rules.matched_path_or_any_parents(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    /// The directories to watch: the root and every directory under it that
    /// is not ignored, parents before children.
    pub fn directories(&self) -> Vec<PathBuf> {
        self.directories_under(&self.root)
    }

    /// Like [`directories`](Self::directories), from `dir` down.
    pub fn directories_under(&self, dir: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let output_dirs = self.output_dirs.clone();
        let walk = WalkBuilder::new(dir)
            .hidden(false)
            .parents(true)
            .require_git(false)
            .git_global(false)
            .filter_entry(move |entry| {
                let name = entry.file_name();
                entry.file_type().is_some_and(|kind| kind.is_dir())
                    && !IGNORED_DIRS.iter().any(|ignored| name == *ignored)
                    && !output_dirs.iter().any(|out| entry.path().starts_with(out))
            })
            .build();
        for entry in walk.flatten() {
            found.push(entry.into_path());
        }
        found
    }
}

fn build(rules: &GitignoreBuilder) -> Option<Gitignore> {
    match rules.build() {
        Ok(ignore) if !ignore.is_empty() => Some(ignore),
        Ok(_) => None,
        Err(error) => {
            tracing::warn!(%error, "cannot use the ignore rules");
            None
        }
    }
}

/// Editors' swap, backup, lock and probe files: from vim `.x.swp`, `x~` and
/// `4913`; from Emacs `#x#` and `.#x`; from `JetBrains` IDEs
/// `x___jb_tmp___`; and `x.bak`.
fn is_editor_scratch(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    name.ends_with('~')
        || name == "4913"
        || name.starts_with(".#")
        || (name.starts_with('#') && name.ends_with('#'))
        || name.ends_with("___jb_tmp___")
        || name.ends_with("___jb_old___")
        || [".swp", ".swo", ".swx", ".swn", ".bak", ".orig", ".tmp"]
            .iter()
            .any(|suffix| name.ends_with(suffix))
}

/// Watches each directory of `dirs` (not recursively: the ignored ones, such
/// as `target/` with its thousands of directories, take no inotify watch).
pub fn watch_dirs(watcher: &mut RecommendedWatcher, dirs: &[PathBuf]) {
    for dir in dirs {
        if let Err(error) = watcher.watch(dir, RecursiveMode::NonRecursive) {
            tracing::warn!(dir = %dir.display(), %error, "cannot watch a directory");
        }
    }
}

/// A watcher of a whole tree that reports the file changes [`WatchFilter`]
/// lets through, and watches the directories created in it (reporting the
/// files already in them); dropping it stops.
pub struct TreeWatcher {
    filter: Arc<Mutex<WatchFilter>>,
    _watcher: Arc<Mutex<RecommendedWatcher>>,
}

impl std::fmt::Debug for TreeWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeWatcher").finish_non_exhaustive()
    }
}

/// What a [`TreeWatcher`] calls with the changed files; on the watcher's
/// thread, so it must be quick.
type OnChange = Arc<dyn Fn(Vec<PathBuf>) + Send + Sync>;

impl TreeWatcher {
    /// Watches `root` (absolute), leaving out `output_dirs` too; must be
    /// called within a tokio runtime.
    pub fn start(
        root: &Path,
        output_dirs: impl IntoIterator<Item = PathBuf>,
        on_change: impl Fn(Vec<PathBuf>) + Send + Sync + 'static,
    ) -> notify::Result<Self> {
        let on_change: OnChange = Arc::new(on_change);
        let filter = Arc::new(Mutex::new(WatchFilter::new(root, output_dirs)));
        let (new_dirs, mut queue) = tokio::sync::mpsc::unbounded_channel::<PathBuf>();
        let callback_filter = Arc::clone(&filter);
        let callback = Arc::clone(&on_change);
        let watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
            let event = match event {
                Ok(event) => event,
                Err(error) => {
                    tracing::warn!(%error, "file watcher error");
                    return;
                }
            };
            // Access events (a build reading the sources) change nothing.
            if !matches!(
                event.kind,
                EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Any
            ) {
                return;
            }
            let mut filter = lock(&callback_filter);
            if event.paths.iter().any(|p| WatchFilter::is_ignore_file(p)) {
                filter.reload_ignore_files();
            }
            let changed: Vec<PathBuf> = event
                .paths
                .into_iter()
                .filter(|p| !WatchFilter::is_ignore_file(p) && !filter.is_ignored(p))
                .collect();
            drop(filter);
            let (dirs, files): (Vec<PathBuf>, Vec<PathBuf>) =
                changed.into_iter().partition(|p| p.is_dir());
            for dir in dirs {
                let _ = new_dirs.send(dir);
            }
            if !files.is_empty() {
                tracing::debug!(paths = ?files, "files changed");
                callback(files);
            }
        })?;
        let watcher = Arc::new(Mutex::new(watcher));
        let dirs = lock(&filter).directories();
        watch_dirs(&mut lock(&watcher), &dirs);
        let weak = Arc::downgrade(&watcher);
        let task_filter = Arc::clone(&filter);
        tokio::spawn(async move {
            while let Some(dir) = queue.recv().await {
                let Some(watcher) = weak.upgrade() else { break };
                let dirs = lock(&task_filter).directories_under(&dir);
                watch_dirs(&mut lock(&watcher), &dirs);
                // Files written before the watch was in place.
                let files: Vec<PathBuf> = dirs
                    .iter()
                    .filter_map(|dir| std::fs::read_dir(dir).ok())
                    .flat_map(Iterator::flatten)
                    .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
                    .map(|entry| entry.path())
                    .filter(|path| !lock(&task_filter).is_ignored(path))
                    .collect();
                if !files.is_empty() {
                    on_change(files);
                }
            }
        });
        Ok(Self {
            filter,
            _watcher: watcher,
        })
    }

    /// Leaves out more build output from now on.
    pub fn add_output_dirs(&self, dirs: impl IntoIterator<Item = PathBuf>) {
        lock(&self.filter).add_output_dirs(dirs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_rules_cover_git_build_output_editors_and_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for sub in [
            "src/gen",
            "target/debug",
            ".git/info",
            "node_modules/x",
            "web/dist",
            "web/keep",
        ] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        std::fs::write(root.join(".gitignore"), "/generated.rs\n*.log\nweb/keep/\n").unwrap();
        std::fs::write(root.join(".git/info/exclude"), "local.rs\n").unwrap();
        std::fs::write(root.join("web/.gitignore"), "dist/\n!keep/\n").unwrap();
        let filter = WatchFilter::new(&root, [root.join("out")]);

        let ignored = |relative: &str| filter.is_ignored(&root.join(relative));
        for kept in [
            "src/lib.rs",
            "Cargo.toml",
            "src/gen/mod.rs",
            "web/keep/a.ts",
            "build.rs",
        ] {
            assert!(!ignored(kept), "{kept} must start a check");
        }
        for skipped in [
            "target/debug/foo.d",
            "out/x",
            ".git/index",
            "node_modules/x/index.js",
            "generated.rs",
            "src/trace.log",
            "local.rs",
            "web/dist/bundle.js",
            "src/.lib.rs.swp",
            "src/lib.rs~",
            "src/4913",
            "src/#lib.rs#",
            "src/.#lib.rs",
        ] {
            assert!(ignored(skipped), "{skipped} must start no check");
        }
        assert!(filter.is_ignored(Path::new("/elsewhere/a.rs")));

        let dirs = filter.directories();
        assert_eq!(dirs[0], root);
        for watched in ["src", "src/gen", "web", "web/keep"] {
            assert!(
                dirs.contains(&root.join(watched)),
                "{watched} is watched: {dirs:?}"
            );
        }
        for unwatched in ["target", ".git", "node_modules", "web/dist", "out"] {
            assert!(
                !dirs.contains(&root.join(unwatched)),
                "{unwatched}: {dirs:?}"
            );
        }
    }
}
