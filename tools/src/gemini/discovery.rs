//! The discovery file through which `gemini` finds the IDE:
//! `$TMPDIR/gemini/ide/gemini-ide-server-<pid>-<port>.json` (`os.tmpdir()`
//! is `$TMPDIR`, else `/tmp`), `{port, workspacePath, authToken, ideInfo:
//! {name, displayName}}`.
//!
//! The CLI reads it once, at start-up, and checks only that the file is
//! its user's; keeping it private is ours: created exclusively with mode
//! 0600 (an old file of ours at the same name is removed first), its
//! directory created 0700 when missing. `ideInfo` with both fields is what
//! makes the CLI accept an IDE it does not know. Removed when the
//! [`DiscoveryFile`] is dropped; the file of a process killed before it
//! could remove it is removed by the next one (the CLI would otherwise
//! pick it for a workspace it matches and fail to connect): each carries
//! the runtime's mark (`ideMcp`, ignored by the CLI, which reads the file
//! with `JSON.parse`), and a file of ours whose process (the pid in its
//! name) is gone is removed before a new one is written.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use ide_mcp_runtime::lockfile;
use serde::Serialize;

use crate::agent_file::AgentFile;

/// The IDE as `/ide status` names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IdeInfo {
    /// An identifier, not one the CLI knows (`vscode` would make it expect
    /// VS Code): `ide-mcp`.
    pub name: String,
    /// What the CLI shows: `Neovim (ide-mcp)`.
    pub display_name: String,
}

/// What the discovery file says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoveryContent {
    /// The port of `http://127.0.0.1:<port>/mcp`.
    pub port: u16,
    /// The workspace folders, joined by `:` (the CLI splits them on
    /// `path.delimiter`).
    pub workspace_path: String,
    /// The bearer token.
    pub auth_token: String,
    /// The IDE's name.
    pub ide_info: IdeInfo,
}

/// `<tmp>/gemini/ide`, where `tmp` is `$TMPDIR` (else `/tmp`), as Node's
/// `os.tmpdir()` finds it.
pub fn default_dir() -> PathBuf {
    let tmp = std::env::var_os("TMPDIR")
        .filter(|t| !t.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    // Node strips one trailing separator.
    tmp.join("gemini").join("ide")
}

/// The file's name for the host `pid` serving `port`.
pub fn file_name(pid: u32, port: u16) -> String {
    format!("gemini-ide-server-{pid}-{port}.json")
}

/// The pid in a discovery file's name, `None` for another file.
fn pid_in(name: &str) -> Option<u32> {
    let (pid, port) = name
        .strip_prefix("gemini-ide-server-")?
        .strip_suffix(".json")?
        .split_once('-')?;
    port.parse::<u16>().ok()?;
    pid.parse().ok()
}

/// A written discovery file; dropping it removes the file.
#[derive(Debug)]
pub struct DiscoveryFile(AgentFile);

impl DiscoveryFile {
    /// Writes `content` for this process to `dir` (created 0700 if
    /// missing), exclusively and with mode 0600, with the runtime's mark;
    /// a file of the same name (ours, from a process that had this pid) and
    /// the files of ours whose process is gone are removed first.
    pub fn create(dir: &Path, content: &DiscoveryContent) -> io::Result<Self> {
        let stale = lockfile::remove_stale_files(dir, |name, _| pid_in(name));
        if stale > 0 {
            tracing::info!(stale, dir = %dir.display(), "removed stale Gemini discovery files");
        }
        let name = file_name(std::process::id(), content.port);
        match fs::remove_file(dir.join(&name)) {
            Ok(()) => tracing::info!(%name, "removed an old discovery file"),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
        AgentFile::create(dir, &name, &lockfile::marked(content)).map(Self)
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn the_file_is_private_exact_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("gemini").join("ide");
        let content = DiscoveryContent {
            port: 8123,
            workspace_path: "/ws/a:/ws/b".into(),
            auth_token: "t".into(),
            ide_info: IdeInfo {
                name: "ide-mcp".into(),
                display_name: "Neovim (ide-mcp)".into(),
            },
        };
        // An old file of ours at the same name goes first.
        fs::create_dir_all(&dir).unwrap();
        let name = file_name(std::process::id(), 8123);
        fs::write(dir.join(&name), "old").unwrap();
        let file = DiscoveryFile::create(&dir, &content).unwrap();
        assert_eq!(file.path(), dir.join(&name));
        let namespace = fs::read_link("/proc/self/ns/pid").unwrap();
        assert_eq!(
            fs::read_to_string(file.path()).unwrap(),
            format!(
                r#"{{"port":8123,"workspacePath":"/ws/a:/ws/b","authToken":"t","ideInfo":{{"name":"ide-mcp","displayName":"Neovim (ide-mcp)"}},"ideMcp":{{"pidNamespace":"{}"}}}}"#,
                namespace.display()
            )
        );
        let mode = fs::metadata(file.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let path = file.path().to_path_buf();
        drop(file);
        assert!(!path.exists());
    }

    #[test]
    fn names_match_what_the_cli_looks_for() {
        assert_eq!(file_name(42, 8123), "gemini-ide-server-42-8123.json");
        assert_eq!(pid_in("gemini-ide-server-42-8123.json"), Some(42));
        for other in [
            "gemini-ide-server-42.json",
            "gemini-ide-server-x-8123.json",
            "gemini-ide-server-42-8123.lock",
            "1234.lock",
        ] {
            assert_eq!(pid_in(other), None, "{other}");
        }
    }

    #[test]
    fn only_our_own_files_of_gone_processes_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let live = std::os::unix::process::parent_id();
        let here = fs::read_link("/proc/self/ns/pid").unwrap();
        let ours = format!(
            r#"{{"port":1,"workspacePath":"/ws","ideMcp":{{"pidNamespace":"{}"}}}}"#,
            here.display()
        );
        let elsewhere = r#"{"port":1,"workspacePath":"/ws","ideMcp":{"pidNamespace":"pid:[1]"}}"#;
        let theirs = r#"{"port":1,"workspacePath":"/ws"}"#;
        let files = [
            // Ours, its process gone: the only one removed.
            (file_name(dead, 1), ours.as_str(), false),
            (file_name(live, 2), ours.as_str(), true),
            // Another IDE's (no mark), and ours from another namespace.
            (file_name(dead, 3), theirs, true),
            (file_name(dead, 4), elsewhere, true),
            // Not a discovery file.
            (format!("{dead}.lock"), ours.as_str(), true),
        ];
        for (name, text, _) in &files {
            fs::write(dir.join(name), text).unwrap();
        }
        let content = DiscoveryContent {
            port: 8123,
            workspace_path: "/ws".into(),
            auth_token: "t".into(),
            ide_info: IdeInfo {
                name: "ide-mcp".into(),
                display_name: "Neovim (ide-mcp)".into(),
            },
        };
        let file = DiscoveryFile::create(dir, &content).unwrap();
        for (name, _, kept) in &files {
            assert_eq!(dir.join(name).exists(), *kept, "{name}");
        }
        drop(file);
    }
}
