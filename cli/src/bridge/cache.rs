//! The tools the bridge last saw for each workspace, so that a bridge
//! started before its IDE lists them: one file, `bridge-tools.json`, in our
//! private directory (mode 0700; never the CLI's IDE directory, which must
//! hold nothing but lockfiles). Written atomically (a 0600 temporary file,
//! renamed); a cache that cannot be read or written is only a miss.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The file's name in the private directory.
const FILE: &str = "bridge-tools.json";

/// How many workspaces are remembered; the least recently seen are dropped.
const MAX_ENTRIES: usize = 32;

/// The largest file read.
const MAX_BYTES: u64 = 16 << 20;

/// What the file holds: the most recently seen workspace first.
#[derive(Default, Deserialize, Serialize)]
struct File {
    entries: Vec<Entry>,
}

/// The tools an IDE listed, with what says which bridges it was for.
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    /// The CLI configuration directory the IDE's lockfile was in.
    config_dir: PathBuf,
    /// The IDE's workspace folders, canonical.
    workspace_folders: Vec<PathBuf>,
    /// Its `tools/list` entries, as it wrote them (all of them: `--all` or not).
    tools: Vec<Box<RawValue>>,
}

/// The cache in a private directory.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// The cache in `dir`, a directory only this user can enter.
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The cache in ide-mcp's private directory (`$XDG_RUNTIME_DIR/ide-mcp`,
    /// else `ide-mcp` under the user's cache directory), made if needed.
    #[cfg(unix)]
    pub fn private() -> io::Result<Self> {
        ide_mcp_lsp::host::private_dir().map(Self::new)
    }

    fn path(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    fn read(&self) -> File {
        let path = self.path();
        let readable = fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= MAX_BYTES);
        readable
            .then(|| fs::read(&path).ok())
            .flatten()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// The tools last seen for an IDE of `config_dir` whose folders hold
    /// `cwd` (canonical): the most recently seen such IDE's.
    pub fn load(&self, config_dir: &Path, cwd: &Path) -> Option<Vec<Box<RawValue>>> {
        self.read()
            .entries
            .into_iter()
            .find(|entry| {
                entry.config_dir == config_dir
                    && entry.workspace_folders.iter().any(|f| cwd.starts_with(f))
            })
            .map(|entry| entry.tools)
    }

    /// Remembers `tools` for the IDE of `config_dir` serving `folders`; a
    /// write only when they changed.
    pub fn store(
        &self,
        config_dir: &Path,
        folders: &[String],
        tools: &[Box<RawValue>],
    ) -> io::Result<()> {
        let mut folders: Vec<PathBuf> = folders
            .iter()
            .map(|folder| {
                Path::new(folder)
                    .canonicalize()
                    .unwrap_or_else(|_| folder.into())
            })
            .collect();
        folders.sort();
        folders.dedup();
        let mut file = self.read();
        let same = |e: &Entry| e.config_dir == config_dir && e.workspace_folders == folders;
        if let Some(first) = file.entries.first()
            && same(first)
            && same_tools(&first.tools, tools)
        {
            return Ok(());
        }
        file.entries.retain(|e| !same(e));
        file.entries.insert(
            0,
            Entry {
                config_dir: config_dir.to_path_buf(),
                workspace_folders: folders,
                tools: tools.to_vec(),
            },
        );
        file.entries.truncate(MAX_ENTRIES);
        let json = serde_json::to_vec(&file).map_err(io::Error::other)?;
        self.write(&json)
    }

    fn write(&self, bytes: &[u8]) -> io::Result<()> {
        let path = self.path();
        let tmp = self.dir.join(format!(".{FILE}.{}.tmp", std::process::id()));
        let _ = fs::remove_file(&tmp);
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let written = options
            .open(&tmp)
            .and_then(|mut file| file.write_all(bytes))
            .and_then(|()| fs::rename(&tmp, &path));
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written
    }
}

fn same_tools(a: &[Box<RawValue>], b: &[Box<RawValue>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.get() == b.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(names: &[&str]) -> Vec<Box<RawValue>> {
        names
            .iter()
            .map(|name| RawValue::from_string(format!(r#"{{"name":"{name}"}}"#)).unwrap())
            .collect()
    }

    fn names(tools: Option<Vec<Box<RawValue>>>) -> Option<Vec<String>> {
        tools.map(|tools| tools.iter().map(|t| t.get().to_owned()).collect())
    }

    #[test]
    fn the_tools_of_the_workspace_that_holds_the_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (ws, other) = (root.join("ws"), root.join("other"));
        fs::create_dir_all(ws.join("sub")).unwrap();
        fs::create_dir_all(&other).unwrap();
        let config = root.join("config");
        let cache = Cache::new(root.join("cache"));
        fs::create_dir(root.join("cache")).unwrap();
        assert!(cache.load(&config, &ws).is_none());

        let folder = |p: &Path| p.to_str().unwrap().to_owned();
        cache
            .store(&config, &[folder(&ws)], &tools(&["a"]))
            .unwrap();
        cache
            .store(&config, &[folder(&other)], &tools(&["b"]))
            .unwrap();
        assert_eq!(
            names(cache.load(&config, &ws.join("sub"))),
            Some(vec![r#"{"name":"a"}"#.to_owned()])
        );
        assert_eq!(
            names(cache.load(&config, &other)),
            Some(vec![r#"{"name":"b"}"#.to_owned()])
        );
        // Another CLI configuration's IDEs are not these.
        assert!(cache.load(&root.join("elsewhere"), &ws).is_none());
        // Seen again with other tools: replaced, and first.
        let dotted = format!("{}/sub/..", ws.display());
        cache.store(&config, &[dotted], &tools(&["c"])).unwrap();
        assert_eq!(
            names(cache.load(&config, &ws)),
            Some(vec![r#"{"name":"c"}"#.to_owned()])
        );
        assert_eq!(cache.read().entries.len(), 2);
        // Only the file, private; no temporary left.
        let files: Vec<_> = fs::read_dir(root.join("cache"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(files, [FILE]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = fs::metadata(cache.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_broken_file_is_a_miss_and_is_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::new(tmp.path().to_path_buf());
        fs::write(cache.path(), "not json").unwrap();
        let config = tmp.path().join("config");
        assert!(cache.load(&config, tmp.path()).is_none());
        let folder = tmp.path().to_str().unwrap().to_owned();
        cache.store(&config, &[folder], &tools(&["a"])).unwrap();
        assert!(
            cache
                .load(&config, &tmp.path().canonicalize().unwrap())
                .is_some()
        );
    }
}
