//! The Claude Code IDE lockfile: `<config>/ide/<port>.lock`, through which the
//! `claude` CLI discovers a running IDE server and its auth token.
//!
//! `<config>` is `$CLAUDE_CONFIG_DIR`, else `~/.claude`. The directory is
//! created 0700 and the file 0600, written atomically (a 0600 temporary file
//! in the same directory, fsynced, then renamed), so no partial or
//! world-readable lockfile ever exists. It is removed when the [`Lockfile`]
//! is dropped.

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

/// A written lockfile; removed on drop.
#[derive(Debug)]
pub struct Lockfile {
    path: PathBuf,
}

impl Lockfile {
    /// Writes `<config_dir>/ide/<port>.lock` atomically, first removing stale
    /// lockfiles (whose process is dead) from that directory.
    pub fn create(config_dir: &Path, port: u16, content: &LockfileContent) -> io::Result<Self> {
        let dir = config_dir.join("ide");
        create_private_dir(&dir)?;
        let stale = remove_stale(&dir);
        if stale > 0 {
            tracing::info!(stale, dir = %dir.display(), "removed stale lockfiles");
        }
        let path = dir.join(format!("{port}.lock"));
        let tmp = dir.join(format!(".{port}.lock.{}.tmp", std::process::id()));
        let json = serde_json::to_vec(content).map_err(io::Error::other)?;
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

    /// Removes the lockfile now (also done on drop).
    pub fn remove(self) {}
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

/// Removes the lockfiles in `dir` whose pid is dead; returns how many.
///
/// A lockfile that cannot be read or names a live process (or whose
/// liveness cannot be told on this system) is left alone.
pub fn remove_stale(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "lock") {
            continue;
        }
        let Some(pid) = lockfile_pid(&path) else {
            continue;
        };
        if pid != std::process::id() && pid_is_dead(pid) && fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

fn lockfile_pid(path: &Path) -> Option<u32> {
    #[derive(Deserialize)]
    struct Pid {
        pid: u32,
    }
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 64 * 1024 {
        return None;
    }
    serde_json::from_slice::<Pid>(&fs::read(path).ok()?)
        .ok()
        .map(|p| p.pid)
}

/// Whether `pid` is certainly dead: told by `/proc` where there is one. Where
/// there is none, every process counts as alive (the CLI cleans those files).
fn pid_is_dead(pid: u32) -> bool {
    let proc = Path::new("/proc");
    proc.join("self").exists() && !proc.join(pid.to_string()).exists()
}
