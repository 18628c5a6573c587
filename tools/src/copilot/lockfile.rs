//! The lockfile through which `copilot` finds the IDE:
//! `$COPILOT_HOME/ide/<unique>.lock` (default `~/.copilot/ide`),
//! `{socketPath, scheme: "unix", headers, pid, timestamp, ideName,
//! workspaceFolders}`.
//!
//! The CLI watches the file: it is written once, in place (a rename would
//! disconnect it), created exclusively with mode 0600 in a directory
//! created 0700 when missing. No `isTrusted`: it would make the CLI trust
//! the folder without asking the user. Removed when the [`LockFile`] is
//! dropped; the file of a process killed before it could remove it is
//! removed by the next one, as Claude's lockfiles are: each carries the
//! runtime's mark (`ideMcp`, ignored by the CLI), and a lockfile of ours
//! whose process is gone is removed before a new one is written.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use ide_mcp_runtime::lockfile;
use serde::Serialize;

use crate::agent_file::AgentFile;

/// What the lockfile says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LockContent {
    /// The Unix socket the CLI connects to.
    pub socket_path: String,
    /// Always `unix`.
    pub scheme: &'static str,
    /// What the CLI copies into every request: `Authorization: Nonce <secret>`.
    pub headers: BTreeMap<&'static str, String>,
    /// The serving process (the CLI checks it is alive).
    pub pid: u32,
    /// When the file was written, in milliseconds since the epoch.
    pub timestamp: u64,
    /// What the CLI calls the IDE (`Connected to <ideName>`).
    pub ide_name: String,
    /// The workspace folders (the CLI auto-connects when its working
    /// directory is one of them exactly).
    pub workspace_folders: Vec<String>,
}

/// `$COPILOT_HOME/ide`, else `~/.copilot/ide`; `None` without a home.
pub fn default_dir() -> Option<PathBuf> {
    let home = std::env::var_os("COPILOT_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|home| Path::new(&home).join(".copilot"))
        })?;
    Some(home.join("ide"))
}

/// A written lockfile; dropping it removes the file.
#[derive(Debug)]
pub struct LockFile {
    file: AgentFile,
}

impl LockFile {
    /// Writes `content` to `dir/<unique>.lock` (`dir` created 0700 if
    /// missing), exclusively, in place, with mode 0600, after removing the
    /// lockfiles of ours there whose process is gone.
    pub fn create(dir: &Path, unique: &str, content: &LockContent) -> io::Result<Self> {
        let stale = lockfile::remove_stale(dir);
        if stale > 0 {
            tracing::info!(stale, dir = %dir.display(), "removed stale Copilot lockfiles");
        }
        AgentFile::create(dir, &format!("{unique}.lock"), &lockfile::marked(content))
            .map(|file| Self { file })
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn content(pid: u32) -> LockContent {
        LockContent {
            socket_path: "/run/s.sock".into(),
            scheme: "unix",
            headers: BTreeMap::from([("Authorization", "Nonce n".to_owned())]),
            pid,
            timestamp: 7,
            ide_name: "Neovim".into(),
            workspace_folders: vec!["/ws".into()],
        }
    }

    #[test]
    fn the_file_is_private_exact_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ide");
        let pid = std::process::id();
        let file = LockFile::create(&dir, "u", &content(pid)).unwrap();
        assert_eq!(file.path(), dir.join("u.lock"));
        let mut written: serde_json::Value =
            serde_json::from_slice(&fs::read(file.path()).unwrap()).unwrap();
        // The runtime's mark, beside what the CLI reads.
        let mark = written.as_object_mut().unwrap().remove("ideMcp").unwrap();
        assert!(mark.is_object(), "{mark}");
        assert_eq!(
            written,
            serde_json::json!({"socketPath": "/run/s.sock", "scheme": "unix",
                "headers": {"Authorization": "Nonce n"}, "pid": pid, "timestamp": 7,
                "ideName": "Neovim", "workspaceFolders": ["/ws"]})
        );
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(file.path()), 0o600);
        assert_eq!(mode(&dir), 0o700);
        // Never overwritten.
        assert!(LockFile::create(&dir, "u", &content(pid)).is_err());
        let path = file.path().to_path_buf();
        drop(file);
        assert!(!path.exists());
    }

    #[test]
    fn the_file_of_a_killed_process_goes_when_the_next_one_comes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ide");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let killed = LockFile::create(&dir, "killed", &content(dead)).unwrap();
        // Killed: nothing removed its file.
        std::mem::forget(killed);
        // Another IDE's lockfile, unmarked, whatever its pid.
        fs::write(dir.join("vscode.lock"), format!(r#"{{"pid":{dead}}}"#)).unwrap();
        let next = LockFile::create(&dir, "next", &content(std::process::id())).unwrap();
        let mut left: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["next.lock", "vscode.lock"]);
        drop(next);
    }
}
