//! Which proxy of an editor serves the IDE: an election by file lock, and
//! the Unix socket through which the others reach it.
//!
//! For one editor process and one workspace there are two files in the
//! lockfile directory, named by the editor's pid and a hash of the
//! workspace folders: `lsp-<pid>-<hash>.lock` and `lsp-<pid>-<hash>.sock`.
//! The proxy holding an exclusive lock on the first is the *leader*: it
//! binds the second and serves the IDE. The others are *followers*: they
//! connect to it. The operating system releases the lock when the leader's
//! process ends, however it ends, so there is never a stale leader; a
//! follower whose connection closes runs the election again.

use std::fs::{File, OpenOptions, TryLockError};
use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::io;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::net::{UnixListener, UnixStream};

/// The longest Unix socket path (`sun_path` holds 108 bytes on Linux,
/// 104 on macOS, with the terminating NUL).
const MAX_SOCKET_PATH: usize = 100;

/// How long a follower waits before running the election again when the
/// leader holds the lock but is not listening yet.
const RETRY: Duration = Duration::from_millis(20);

/// The two files where the proxies of one editor and workspace meet.
#[derive(Clone, Debug)]
pub struct Rendezvous {
    lock: PathBuf,
    socket: PathBuf,
}

/// This proxy's part, decided by [`Rendezvous::elect`].
#[derive(Debug)]
pub enum Role {
    /// It serves the IDE: keep the lock and accept followers.
    Leader(Leadership),
    /// Another proxy serves it: this is the connection to it.
    Follower(UnixStream),
}

/// The lock and the listening socket of a leader; dropping it removes both
/// files and releases the lock.
#[derive(Debug)]
pub struct Leadership {
    _lock: File,
    listener: UnixListener,
    socket: PathBuf,
    lock_path: PathBuf,
}

impl Leadership {
    /// The socket followers connect to.
    pub fn listener(&self) -> &UnixListener {
        &self.listener
    }
}

impl Drop for Leadership {
    fn drop(&mut self) {
        // Still ours: the lock is released only after this. A proxy that
        // opened the lock file before it was removed finds, once it holds
        // the lock, that the path no longer names that file, and retries.
        let _ = std::fs::remove_file(&self.socket);
        let _ = std::fs::remove_file(&self.lock_path);
    }
}

impl Rendezvous {
    /// The rendezvous of the proxies of editor `pid` for `folders`, in `dir`
    /// (the lockfile directory), or in the temporary directory when `dir` is
    /// too deep for a socket path.
    pub fn new(dir: &Path, pid: u32, folders: &[PathBuf]) -> Self {
        let mut hasher = DefaultHasher::new();
        folders.hash(&mut hasher);
        let stem = format!("lsp-{pid}-{:016x}", hasher.finish());
        let dir = if dir.join(&stem).as_os_str().len() + 5 > MAX_SOCKET_PATH {
            std::env::temp_dir()
        } else {
            dir.to_path_buf()
        };
        Self {
            lock: dir.join(format!("{stem}.lock")),
            socket: dir.join(format!("{stem}.sock")),
        }
    }

    /// The socket's path.
    pub fn socket_path(&self) -> &Path {
        &self.socket
    }

    /// Runs the election until this proxy is the leader or connected to one.
    pub async fn elect(&self) -> io::Result<Role> {
        if let Some(dir) = self.lock.parent() {
            std::fs::create_dir_all(dir)?;
        }
        loop {
            if let Some(leadership) = self.try_lead()? {
                return Ok(Role::Leader(leadership));
            }
            if let Ok(stream) = UnixStream::connect(&self.socket).await {
                return Ok(Role::Follower(stream));
            }
            // The leader has the lock but is not listening yet (or has just
            // ended): try again.
            tokio::time::sleep(RETRY).await;
        }
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
        // The leader before us may have removed the file between our open
        // and our lock: then this lock guards nothing.
        let same = std::fs::metadata(&self.lock)
            .is_ok_and(|now| file.metadata().is_ok_and(|held| held.ino() == now.ino()));
        Ok(same.then_some(file))
    }

    fn try_lead(&self) -> io::Result<Option<Leadership>> {
        let Some(lock) = self.try_lock_file()? else {
            return Ok(None);
        };
        // A socket file left by a leader that was killed: the lock says no
        // one serves it.
        match std::fs::remove_file(&self.socket) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
            _ => {}
        }
        let listener = UnixListener::bind(&self.socket)?;
        Ok(Some(Leadership {
            _lock: lock,
            listener,
            socket: self.socket.clone(),
            lock_path: self.lock.clone(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meet(dir: &Path, pid: u32, folder: &str) -> Rendezvous {
        Rendezvous::new(dir, pid, &[PathBuf::from(folder)])
    }

    #[tokio::test]
    async fn the_first_leads_the_next_follow_and_one_takes_over() {
        let dir = tempfile::tempdir().unwrap();
        let meet = meet(dir.path(), 7, "/w");
        let Role::Leader(leader) = meet.elect().await.unwrap() else {
            panic!("the first proxy must lead")
        };
        let Role::Follower(_a) = meet.elect().await.unwrap() else {
            panic!("the second proxy must follow")
        };
        drop(leader);
        let Role::Leader(next) = meet.elect().await.unwrap() else {
            panic!("with the leader gone, the next proxy must lead")
        };
        drop(next);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "files left behind"
        );
    }

    #[tokio::test]
    async fn other_editors_and_workspaces_meet_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let a = meet(dir.path(), 7, "/w");
        let b = meet(dir.path(), 8, "/w");
        let c = meet(dir.path(), 7, "/v");
        assert_ne!(a.socket_path(), b.socket_path());
        assert_ne!(a.socket_path(), c.socket_path());
        let roles = (
            a.elect().await.unwrap(),
            b.elect().await.unwrap(),
            c.elect().await.unwrap(),
        );
        assert!(matches!(
            roles,
            (Role::Leader(_), Role::Leader(_), Role::Leader(_))
        ));
    }

    #[test]
    fn a_deep_directory_falls_back_to_the_temporary_one() {
        let deep = PathBuf::from(format!("/{}", "d".repeat(120)));
        let meet = meet(&deep, 7, "/w");
        assert!(meet.socket_path().starts_with(std::env::temp_dir()));
    }
}
