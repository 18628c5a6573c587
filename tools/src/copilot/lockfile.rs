//! The lockfile through which `copilot` finds the IDE:
//! `$COPILOT_HOME/ide/<unique>.lock` (default `~/.copilot/ide`),
//! `{socketPath, scheme: "unix", headers, pid, timestamp, ideName,
//! workspaceFolders}`.
//!
//! The CLI watches the file: it is written once, in place (a rename would
//! disconnect it), created exclusively with mode 0600 in a directory
//! created 0700 when missing. No `isTrusted`: it would make the CLI trust
//! the folder without asking the user. Removed when the [`LockFile`] is
//! dropped.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

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
    /// missing), exclusively, in place, with mode 0600.
    pub fn create(dir: &Path, unique: &str, content: &LockContent) -> io::Result<Self> {
        AgentFile::create(dir, &format!("{unique}.lock"), content).map(|file| Self { file })
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

    #[test]
    fn the_file_is_private_exact_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ide");
        let content = LockContent {
            socket_path: "/run/s.sock".into(),
            scheme: "unix",
            headers: BTreeMap::from([("Authorization", "Nonce n".to_owned())]),
            pid: 42,
            timestamp: 7,
            ide_name: "Neovim".into(),
            workspace_folders: vec!["/ws".into()],
        };
        let file = LockFile::create(&dir, "u", &content).unwrap();
        assert_eq!(file.path(), dir.join("u.lock"));
        assert_eq!(
            fs::read_to_string(file.path()).unwrap(),
            r#"{"socketPath":"/run/s.sock","scheme":"unix","headers":{"Authorization":"Nonce n"},"pid":42,"timestamp":7,"ideName":"Neovim","workspaceFolders":["/ws"]}"#
        );
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(file.path()), 0o600);
        assert_eq!(mode(&dir), 0o700);
        // Never overwritten.
        assert!(LockFile::create(&dir, "u", &content).is_err());
        let path = file.path().to_path_buf();
        drop(file);
        assert!(!path.exists());
    }
}
