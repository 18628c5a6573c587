//! The Claude Code IDE lockfile: `<config>/ide/<port>.lock`, through which the
//! `claude` CLI discovers a running IDE server and its auth token.
//!
//! `<config>` is `$CLAUDE_CONFIG_DIR`, else `~/.claude`. The directory is
//! created 0700 and the file 0600, written atomically (a 0600 temporary file
//! in the same directory, fsynced, then renamed), so no partial or
//! world-readable lockfile ever exists. It is removed when the [`Lockfile`]
//! is dropped.
//!
//! Every lockfile this program writes carries a mark (`"ideMcp"`, with the
//! PID namespace it was written in where the system has one). At start-up
//! only marked lockfiles of this PID namespace whose process is certainly
//! gone (`kill(pid, 0)` fails with `ESRCH`) are removed: the lockfiles of
//! other IDEs, and ours from another PID namespace (a container, Flatpak,
//! WSL, whose pids we cannot see), are left to the CLI, which skips dead
//! IDEs itself.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What a lockfile says, field for field as the CLI reads it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockfileContent {
    /// The serving process (the CLI deletes lockfiles whose pid is dead).
    pub pid: u32,
    /// The folders whose CLI sessions see this server.
    pub workspace_folders: Vec<String>,
    /// The IDE's name, shown by `/ide`.
    pub ide_name: String,
    /// Always `"ws"` (anything else makes the CLI try a legacy SSE transport).
    pub transport: String,
    /// Always `false` here.
    pub running_in_windows: bool,
    /// The token the upgrade request must carry.
    pub auth_token: String,
}

/// The configuration directory of Claude Code: `$CLAUDE_CONFIG_DIR` when set,
/// else `~/.claude`; `None` when neither can be found.
pub fn default_config_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    std::env::home_dir().map(|home| home.join(".claude"))
}

/// The mark this program adds to each lockfile it writes, beside the fields
/// of [`LockfileContent`] (the CLI ignores unknown fields).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Mark {
    /// The PID namespace the pid belongs to (`pid:[4026531836]` on Linux);
    /// absent where the system has none to tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pid_namespace: Option<String>,
}

impl Mark {
    fn here() -> Self {
        Self {
            pid_namespace: pid_namespace(),
        }
    }
}

/// A lockfile as written: the content the CLI reads, and our mark.
#[derive(Serialize, Deserialize)]
struct Marked<C> {
    #[serde(flatten)]
    content: C,
    #[serde(rename = "ideMcp")]
    mark: Option<Mark>,
}

/// `content` with this program's mark beside its fields, as
/// [`remove_stale`] knows it: for the lockfiles of other agents' protocols
/// in directories shared with other IDEs (the Copilot CLI's), whose
/// readers ignore fields they do not know.
pub fn marked<C: Serialize>(content: &C) -> impl Serialize + '_ {
    Marked {
        content,
        mark: Some(Mark::here()),
    }
}

#[cfg(target_os = "linux")]
fn pid_namespace() -> Option<String> {
    fs::read_link("/proc/self/ns/pid")
        .ok()
        .map(|link| link.to_string_lossy().into_owned())
}

#[cfg(not(target_os = "linux"))]
fn pid_namespace() -> Option<String> {
    None
}

/// A written lockfile; removed on drop.
#[derive(Debug)]
pub struct Lockfile {
    path: PathBuf,
}

impl Lockfile {
    /// Writes `<config_dir>/ide/<port>.lock` atomically with this program's
    /// mark, first removing the stale lockfiles this program wrote from that
    /// directory ([`remove_stale`]).
    pub fn create(config_dir: &Path, port: u16, content: &LockfileContent) -> io::Result<Self> {
        let dir = config_dir.join("ide");
        create_private_dir(&dir)?;
        let stale = remove_stale(&dir);
        if stale > 0 {
            tracing::info!(stale, dir = %dir.display(), "removed stale lockfiles");
        }
        let path = dir.join(format!("{port}.lock"));
        let tmp = dir.join(format!(".{port}.lock.{}.tmp", std::process::id()));
        let marked = Marked {
            content,
            mark: Some(Mark::here()),
        };
        let json = serde_json::to_vec(&marked).map_err(io::Error::other)?;
        let _ = fs::remove_file(&tmp);
        let written = write_private(&tmp, &json).and_then(|()| fs::rename(&tmp, &path));
        if let Err(err) = written {
            let _ = fs::remove_file(&tmp);
            return Err(err);
        }
        // Make the rename itself durable; failure here only weakens crash safety.
        if let Ok(d) = fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(Self { path })
    }

    /// Where the lockfile is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Lockfile {
    fn drop(&mut self) {
        match fs::remove_file(&self.path) {
            Ok(()) => tracing::debug!(path = %self.path.display(), "lockfile removed"),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => {
                tracing::warn!(path = %self.path.display(), %err, "could not remove the lockfile");
            }
        }
    }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    // An existing directory (made by another IDE plugin) is tightened too:
    // it holds auth tokens.
    let mode = fs::metadata(dir)?.permissions().mode();
    if mode & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Removes the lockfiles in `dir` that this program wrote, in this PID
/// namespace, whose process is gone; returns how many.
///
/// A lockfile without our mark (another IDE's), with another namespace's
/// mark, that cannot be read, or whose process is alive or cannot be
/// checked on this system, is left alone.
pub fn remove_stale(dir: &Path) -> usize {
    remove_stale_files(dir, |name, pid| {
        let lock = Path::new(name).extension().is_some_and(|e| e == "lock");
        lock.then_some(pid).flatten()
    })
}

/// Removes the files in `dir` that this program wrote ([`marked`]), in
/// this PID namespace, whose process is gone; returns how many. `owner`
/// names a file's process from its name and its `pid` field (when it has
/// one), or says `None` for a file that is not of the kind looked for.
/// Left alone as by [`remove_stale`].
pub fn remove_stale_files(dir: &Path, owner: impl Fn(&str, Option<u32>) -> Option<u32>) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let here = Mark::here();
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        let Some((pid, mark)) = read_marked(&path) else {
            continue;
        };
        let Some(pid) = owner(name, pid) else {
            continue;
        };
        if mark == here
            && pid != std::process::id()
            && process_is_gone(pid)
            && fs::remove_file(&path).is_ok()
        {
            tracing::debug!(path = %path.display(), pid, "removed a stale file of ours");
            removed += 1;
        }
    }
    removed
}

/// The largest lockfile read: a real one is a few hundred bytes.
pub(crate) const MAX_LOCKFILE_BYTES: u64 = 64 * 1024;

/// The pid (when the file has one) and mark of a file this program wrote.
fn read_marked(path: &Path) -> Option<(Option<u32>, Mark)> {
    #[derive(Deserialize)]
    struct Pid {
        #[serde(default)]
        pid: Option<u32>,
    }
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_LOCKFILE_BYTES {
        return None;
    }
    let marked: Marked<Pid> = serde_json::from_slice(&fs::read(path).ok()?).ok()?;
    Some((marked.content.pid, marked.mark?))
}

/// Whether no process `pid` exists: `kill(pid, 0)` fails with `ESRCH`. A
/// process of another user (`EPERM`) exists.
#[cfg(unix)]
pub(crate) fn process_is_gone(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH)
}

/// Where there is no `kill`, every process counts as alive (the CLI removes
/// the lockfiles of dead IDEs).
#[cfg(not(unix))]
pub(crate) fn process_is_gone(_pid: u32) -> bool {
    false
}
