//! The other side of discovery: which IDE a client in a directory uses, as
//! the `claude` CLI picks one (PROTOCOL.md, "The CLI's IDE directory is the
//! CLI's"). Only reads: the directory is the CLI's, and what is in it is
//! left as it is, dead IDEs' lockfiles included.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Deserialize;

use crate::lockfile::{MAX_LOCKFILE_BYTES, process_is_gone};

/// An IDE a lockfile announces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundIde {
    /// Its port on 127.0.0.1, from the file's name.
    pub port: u16,
    /// The token its upgrade request must carry.
    pub auth_token: String,
    /// Its name, as `/ide` shows it.
    pub ide_name: String,
    /// Its workspace folders, as written.
    pub workspace_folders: Vec<String>,
    /// The serving process.
    pub pid: u32,
    /// The lockfile.
    pub path: PathBuf,
    /// When the lockfile was last written.
    pub modified: SystemTime,
}

/// A lockfile as read here: lenient about what the CLI ignores, so that
/// another IDE's lockfile without, say, `runningInWindows` is still found.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Content {
    pid: Option<u32>,
    #[serde(default)]
    workspace_folders: Vec<String>,
    #[serde(default)]
    ide_name: String,
    transport: Option<String>,
    auth_token: Option<String>,
}

/// The IDEs a client whose working directory is `cwd` may use, best first,
/// from the lockfiles in `<config_dir>/ide/`:
///
/// - `sse_port` (`CLAUDE_CODE_SSE_PORT`) given: that port's lockfile alone,
///   whatever its folders;
/// - else those whose `workspaceFolders` hold `cwd` (one of them is `cwd`
///   or an ancestor of it; both compared canonical), most recently written
///   first.
///
/// Either way only lockfiles of the WebSocket transport (`"transport":
/// "ws"`) with an auth token, whose `pid` is alive, count. Nothing in the
/// directory is changed.
pub fn find_ides(config_dir: &Path, cwd: &Path, sse_port: Option<u16>) -> Vec<FoundIde> {
    let dir = config_dir.join("ide");
    if let Some(port) = sse_port {
        return read(&dir.join(format!("{port}.lock")))
            .into_iter()
            .collect();
    }
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let mut found: Vec<FoundIde> = entries
        .flatten()
        .filter_map(|entry| read(&entry.path()))
        .filter(|ide| holds(&ide.workspace_folders, &cwd))
        .collect();
    found.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.port.cmp(&b.port)));
    found
}

/// Whether one of `folders` is `cwd` (canonical) or an ancestor of it.
fn holds(folders: &[String], cwd: &Path) -> bool {
    folders.iter().any(|folder| {
        let folder = Path::new(folder);
        let folder = folder
            .canonicalize()
            .unwrap_or_else(|_| folder.to_path_buf());
        cwd.starts_with(folder)
    })
}

/// The IDE the lockfile at `path` announces, if it is one a client can use.
fn read(path: &Path) -> Option<FoundIde> {
    let port: u16 = path
        .file_name()?
        .to_str()?
        .strip_suffix(".lock")?
        .parse()
        .ok()?;
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_LOCKFILE_BYTES {
        return None;
    }
    let content: Content = serde_json::from_slice(&fs::read(path).ok()?).ok()?;
    let pid = content.pid?;
    if content.transport.as_deref() != Some("ws") || process_is_gone(pid) {
        return None;
    }
    Some(FoundIde {
        port,
        auth_token: content.auth_token?,
        ide_name: content.ide_name,
        workspace_folders: content.workspace_folders,
        pid,
        path: path.to_path_buf(),
        modified: meta.modified().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    struct Dir {
        _tmp: tempfile::TempDir,
        config: PathBuf,
        root: PathBuf,
    }

    fn dir() -> Dir {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let config = root.join("config");
        fs::create_dir_all(config.join("ide")).unwrap();
        Dir {
            _tmp: tmp,
            config,
            root,
        }
    }

    impl Dir {
        /// Writes `<port>.lock`, modified `age` seconds before a fixed time.
        fn lock(&self, port: u16, content: &serde_json::Value, age: u64) {
            let path = self.config.join(format!("ide/{port}.lock"));
            fs::write(&path, content.to_string()).unwrap();
            let when = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000 - age);
            fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }

        fn folder(&self, name: &str) -> String {
            let path = self.root.join(name);
            fs::create_dir_all(&path).unwrap();
            path.to_str().unwrap().to_owned()
        }

        fn ports(&self, cwd: &str, sse_port: Option<u16>) -> Vec<u16> {
            find_ides(&self.config, Path::new(cwd), sse_port)
                .iter()
                .map(|ide| ide.port)
                .collect()
        }

        fn listing(&self) -> Vec<(PathBuf, Vec<u8>)> {
            let mut files: Vec<_> = fs::read_dir(self.config.join("ide"))
                .unwrap()
                .map(|entry| {
                    let path = entry.unwrap().path();
                    let bytes = fs::read(&path).unwrap();
                    (path, bytes)
                })
                .collect();
            files.sort();
            files
        }
    }

    fn lockfile(folders: &[&str]) -> serde_json::Value {
        json!({"pid": std::process::id(), "workspaceFolders": folders, "ideName": "t",
               "transport": "ws", "runningInWindows": false, "authToken": "secret"})
    }

    #[test]
    fn the_folders_that_hold_the_directory_most_recent_first() {
        let d = dir();
        let (ws, other) = (d.folder("ws"), d.folder("other"));
        let sub = d.folder("ws/src/deep");
        d.lock(4001, &lockfile(&[&ws]), 30);
        d.lock(4002, &lockfile(&[&other, &ws]), 10);
        d.lock(4003, &lockfile(&[&other]), 0);
        d.lock(4004, &lockfile(&[&d.folder("ws/src/deep/er")]), 0);
        assert_eq!(d.ports(&ws, None), [4002, 4001]);
        assert_eq!(d.ports(&sub, None), [4002, 4001]);
        assert_eq!(d.ports(&other, None), [4003, 4002]);
        // A sibling whose name starts alike is not inside.
        assert_eq!(d.ports(&d.folder("wsx"), None), Vec::<u16>::new());
        let found = &find_ides(&d.config, Path::new(&ws), None)[0];
        assert_eq!(found.auth_token, "secret");
        assert_eq!(found.workspace_folders, [other, ws]);
        assert_eq!(found.pid, std::process::id());
    }

    #[test]
    #[cfg(unix)]
    fn paths_are_compared_canonical() {
        let d = dir();
        let ws = d.folder("ws");
        let link = d.root.join("link");
        std::os::unix::fs::symlink(&ws, &link).unwrap();
        let dotted = format!("{ws}/src/..");
        d.folder("ws/src");
        d.lock(4001, &lockfile(&[link.to_str().unwrap()]), 0);
        d.lock(4002, &lockfile(&[&dotted]), 1);
        assert_eq!(d.ports(&ws, None), [4001, 4002]);
        assert_eq!(
            d.ports(link.join("src").to_str().unwrap(), None),
            [4001, 4002]
        );
    }

    #[test]
    fn the_sse_port_picks_its_lockfile_whatever_its_folders() {
        let d = dir();
        let (ws, other) = (d.folder("ws"), d.folder("other"));
        d.lock(4001, &lockfile(&[&ws]), 0);
        d.lock(4002, &lockfile(&[&other]), 5);
        assert_eq!(d.ports(&ws, Some(4002)), [4002]);
        // No lockfile for that port: no IDE, not another one.
        assert_eq!(d.ports(&ws, Some(4009)), Vec::<u16>::new());
    }

    #[test]
    fn unusable_lockfiles_are_skipped_and_nothing_is_changed() {
        let d = dir();
        let ws = d.folder("ws");
        let mut sse = lockfile(&[&ws]);
        sse["transport"] = json!("sse");
        d.lock(4001, &sse, 0);
        let mut no_token = lockfile(&[&ws]);
        no_token.as_object_mut().unwrap().remove("authToken");
        d.lock(4002, &no_token, 0);
        let mut no_pid = lockfile(&[&ws]);
        no_pid.as_object_mut().unwrap().remove("pid");
        d.lock(4003, &no_pid, 0);
        #[cfg(unix)]
        {
            let mut child = std::process::Command::new("true").spawn().unwrap();
            let dead = child.id();
            child.wait().unwrap();
            let mut gone = lockfile(&[&ws]);
            gone["pid"] = json!(dead);
            d.lock(4004, &gone, 0);
        }
        fs::write(d.config.join("ide/4005.lock"), "/legacy/folder\n").unwrap();
        fs::write(
            d.config.join("ide/notaport.lock"),
            lockfile(&[&ws]).to_string(),
        )
        .unwrap();
        // Lenient where the CLI is: no `runningInWindows`, no `ideName`.
        let mut lean = lockfile(&[&ws]);
        lean.as_object_mut().unwrap().remove("runningInWindows");
        lean.as_object_mut().unwrap().remove("ideName");
        d.lock(4006, &lean, 0);
        let before = d.listing();
        assert_eq!(d.ports(&ws, None), [4006]);
        for port in 4001..=4005 {
            assert_eq!(d.ports(&ws, Some(port)), Vec::<u16>::new(), "{port}");
        }
        assert_eq!(d.listing(), before);
    }

    #[test]
    fn no_directory_no_ide() {
        let d = dir();
        fs::remove_dir(d.config.join("ide")).unwrap();
        assert_eq!(d.ports(&d.folder("ws"), None), Vec::<u16>::new());
        assert_eq!(d.ports(&d.folder("ws"), Some(1)), Vec::<u16>::new());
    }
}
