//! Where the IDE host of a workspace lives: a private directory of ours,
//! never the CLI's lockfile directory (the CLI reads every `*.lock` there
//! as an IDE and deletes what it cannot use), and in it, per host, a lock
//! file and the Unix socket its proxies attach to.
//!
//! A host is one per user, workspace (the canonical set of its folders)
//! and CLI configuration directory (where its `<port>.lock` goes). The
//! host holding an exclusive `flock` on `host-<v>-<hash>.lock` is the one
//! that serves; the operating system releases the lock however the host
//! ends, so there is never a stale host, only a stale socket file that the
//! next host replaces.

use std::fs::{DirBuilder, File, OpenOptions, TryLockError};
use std::hash::Hasher as _;
use std::io::{self, Write as _};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{
    DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _,
};
use std::path::{Path, PathBuf};

use tokio::net::UnixListener;

/// The version of the proxy–host link ([`link`](super::link)), part of the
/// files' names: proxies of another version find a host of their own.
pub const LINK_VERSION: u32 = 1;

/// The longest Unix socket path (`sun_path` holds 108 bytes on Linux,
/// 104 on macOS, with the terminating NUL).
const MAX_SOCKET_PATH: usize = 100;

/// The name of our directory under the runtime or cache directory.
const DIR_NAME: &str = "ide-mcp";

/// The private directory of this user's hosts: `$XDG_RUNTIME_DIR/ide-mcp`,
/// else `ide-mcp` under the user's cache directory (`$XDG_CACHE_HOME`,
/// `~/Library/Caches` on macOS, `~/.cache`), created with mode 0700.
///
/// Refused: a directory that is not ours, or a symbolic link. One that is
/// ours but open to others is closed (mode 0700).
pub fn private_dir() -> io::Result<PathBuf> {
    let dir = base_dir()
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "no XDG_RUNTIME_DIR, XDG_CACHE_HOME or HOME: nowhere to keep the IDE host's files",
            )
        })?
        .join(DIR_NAME);
    ensure_private(&dir)?;
    Ok(dir)
}

fn base_dir() -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
    };
    absolute("XDG_RUNTIME_DIR")
        .or_else(|| absolute("XDG_CACHE_HOME"))
        .or_else(|| {
            let home = absolute("HOME")?;
            Some(if cfg!(target_os = "macos") {
                home.join("Library/Caches")
            } else {
                home.join(".cache")
            })
        })
}

/// Creates `dir` (mode 0700) if needed and checks that it is a directory of
/// ours that no one else can enter.
pub(crate) fn ensure_private(dir: &Path) -> io::Result<()> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match DirBuilder::new().mode(0o700).create(dir) {
        Err(error) if error.kind() != io::ErrorKind::AlreadyExists => return Err(error),
        _ => {}
    }
    let meta = std::fs::symlink_metadata(dir)?;
    let refuse = |why: &str| {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{}: {why}; refusing to keep the IDE host's files there",
                dir.display()
            ),
        ))
    };
    if !meta.file_type().is_dir() {
        return refuse("not a directory");
    }
    if meta.uid() != rustix::process::getuid().as_raw() {
        return refuse("owned by another user");
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Which host serves a workspace: its folders, canonical, sorted and
/// without repeats, and the CLI configuration directory its lockfile goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostKey {
    folders: Vec<PathBuf>,
    config_dir: PathBuf,
}

impl HostKey {
    /// The key of `folders` (made canonical where they exist) for the CLI
    /// configuration directory `config_dir`.
    pub fn new(folders: &[PathBuf], config_dir: &Path) -> Self {
        let mut folders: Vec<PathBuf> = folders
            .iter()
            .map(|folder| folder.canonicalize().unwrap_or_else(|_| folder.clone()))
            .collect();
        folders.sort();
        folders.dedup();
        Self {
            folders,
            config_dir: config_dir.to_path_buf(),
        }
    }

    /// The canonical folders.
    pub fn folders(&self) -> &[PathBuf] {
        &self.folders
    }

    /// The CLI configuration directory.
    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }

    /// The stem of the host's file names: `host-<version>-<hash>`.
    pub fn stem(&self) -> String {
        let mut hasher = rustc_hash::FxHasher::default();
        for path in self.folders.iter().chain([&self.config_dir]) {
            hasher.write(path.as_os_str().as_bytes());
            hasher.write_u8(0);
        }
        format!("host-{LINK_VERSION}-{:016x}", hasher.finish())
    }
}

/// The two files of one host: the lock and the socket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    lock: PathBuf,
    socket: PathBuf,
}

impl Place {
    /// The files of `key`'s host in `dir` (a [private](private_dir)
    /// directory); when `dir` is too deep for a socket's path, in a private
    /// `ide-mcp-<uid>` directory of the temporary directory instead.
    pub fn new(dir: &Path, key: &HostKey) -> io::Result<Self> {
        let stem = key.stem();
        let mut dir = dir.to_path_buf();
        if dir.join(&stem).as_os_str().len() + ".sock".len() > MAX_SOCKET_PATH {
            let uid = rustix::process::getuid().as_raw();
            dir = std::env::temp_dir().join(format!("{DIR_NAME}-{uid}"));
            ensure_private(&dir)?;
        }
        Ok(Self {
            lock: dir.join(format!("{stem}.lock")),
            socket: dir.join(format!("{stem}.sock")),
        })
    }

    /// The socket proxies attach to.
    pub fn socket_path(&self) -> &Path {
        &self.socket
    }

    /// Takes the host's lock (and writes this process's pid in it, for
    /// people and tools looking for the host) and binds its socket, or
    /// `None` when another host holds the lock.
    pub fn try_hold(&self) -> io::Result<Option<Held>> {
        let Some(mut lock) = self.try_lock_file()? else {
            return Ok(None);
        };
        lock.set_len(0)?;
        writeln!(lock, "{}", std::process::id())?;
        // A socket file left by a host that was killed: the lock says no
        // one serves it.
        match std::fs::remove_file(&self.socket) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
            _ => {}
        }
        let listener = UnixListener::bind(&self.socket)?;
        Ok(Some(Held {
            _lock: lock,
            listener,
            place: self.clone(),
        }))
    }

    fn try_lock_file(&self) -> io::Result<Option<File>> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&self.lock)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Ok(None),
            Err(TryLockError::Error(error)) => return Err(error),
        }
        // The host before us may have removed the file between our open and
        // our lock: then this lock guards nothing (and the next try opens
        // the new file).
        let same = std::fs::metadata(&self.lock)
            .is_ok_and(|now| file.metadata().is_ok_and(|held| held.ino() == now.ino()));
        Ok(same.then_some(file))
    }
}

/// A host's lock and listening socket; dropping it removes both files and
/// then releases the lock.
#[derive(Debug)]
pub struct Held {
    _lock: File,
    listener: UnixListener,
    place: Place,
}

impl Held {
    /// The socket proxies attach to.
    pub fn listener(&self) -> &UnixListener {
        &self.listener
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // Still ours: the lock is released only after this. A host that
        // opened the lock file before it was removed finds, once it holds
        // the lock, that the path no longer names that file, and retries.
        let _ = std::fs::remove_file(&self.place.socket);
        let _ = std::fs::remove_file(&self.place.lock);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(folders: &[&str]) -> HostKey {
        let folders: Vec<PathBuf> = folders.iter().map(PathBuf::from).collect();
        HostKey::new(&folders, Path::new("/config"))
    }

    #[tokio::test]
    async fn one_host_holds_a_place_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::new(dir.path(), &key(&["/w"])).unwrap();
        let held = place.try_hold().unwrap().expect("the first host holds it");
        let pid = std::fs::read_to_string(dir.path().join(format!("{}.lock", key(&["/w"]).stem())));
        assert_eq!(pid.unwrap(), format!("{}\n", std::process::id()));
        assert!(
            place.try_hold().unwrap().is_none(),
            "a second host must not"
        );
        drop(held);
        let next = place.try_hold().unwrap().expect("free again");
        drop(next);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[tokio::test]
    async fn a_killed_host_s_socket_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let place = Place::new(dir.path(), &key(&["/w"])).unwrap();
        std::fs::write(place.socket_path(), b"").unwrap();
        let held = place.try_hold().unwrap().unwrap();
        assert!(std::os::unix::net::UnixStream::connect(place.socket_path()).is_ok());
        drop(held);
    }

    #[test]
    fn the_key_is_the_set_of_folders_and_the_config_dir() {
        assert_eq!(key(&["/b", "/a", "/b"]).stem(), key(&["/a", "/b"]).stem());
        assert_ne!(key(&["/a"]).stem(), key(&["/a", "/b"]).stem());
        // Not a concatenation: ["/a", "b"] is not ["/ab"].
        assert_ne!(key(&["/a", "/b"]).stem(), key(&["/a/b"]).stem());
        let other_config = HostKey::new(&[PathBuf::from("/a")], Path::new("/other"));
        assert_ne!(key(&["/a"]).stem(), other_config.stem());
        assert!(
            key(&["/a"])
                .stem()
                .starts_with(&format!("host-{LINK_VERSION}-"))
        );
    }

    #[test]
    fn folders_are_made_canonical() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        let dotted = real.join("x").join("..");
        std::fs::create_dir(real.join("x")).unwrap();
        assert_eq!(HostKey::new(&[dotted], Path::new("/c")).folders(), [real]);
    }

    #[test]
    fn a_deep_directory_falls_back_to_a_private_one_in_tmp() {
        let deep = PathBuf::from(format!("/{}", "d".repeat(120)));
        let place = Place::new(&deep, &key(&["/w"])).unwrap();
        let parent = place.socket_path().parent().unwrap();
        assert!(parent.starts_with(std::env::temp_dir()));
        let meta = std::fs::metadata(parent).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o700);
    }

    #[test]
    fn the_private_directory_is_closed_to_others() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("ide-mcp");
        std::fs::create_dir(&ours).unwrap();
        std::fs::set_permissions(&ours, std::fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private(&ours).unwrap();
        assert_eq!(std::fs::metadata(&ours).unwrap().mode() & 0o777, 0o700);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&ours, &link).unwrap();
        let error = ensure_private(&link).unwrap_err();
        assert!(error.to_string().contains("not a directory"), "{error}");
    }
}
