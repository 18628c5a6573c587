//! A file of ours in an agent's directory (Gemini CLI's discovery file,
//! Copilot CLI's lockfile): created exclusively with mode 0600, its
//! directory 0700 when we create it, and removed when dropped.

use std::fs;
use std::io::{self, Write as _};
#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use serde::Serialize;

/// A written file; dropping it removes the file.
#[derive(Debug)]
pub(crate) struct AgentFile {
    path: PathBuf,
}

impl AgentFile {
    /// Writes `content` as JSON to `dir/name` (`dir` created 0700 if
    /// missing), exclusively, in place, with mode 0600; nothing is left
    /// when writing fails.
    pub(crate) fn create(dir: &Path, name: &str, content: &impl Serialize) -> io::Result<Self> {
        let mut dirs = fs::DirBuilder::new();
        dirs.recursive(true);
        #[cfg(unix)]
        dirs.mode(0o700);
        dirs.create(dir)?;
        let path = dir.join(name);
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        options.mode(0o600);
        let mut file = options.open(&path)?;
        let written = serde_json::to_vec(content)
            .map_err(io::Error::other)
            .and_then(|bytes| file.write_all(&bytes))
            .and_then(|()| file.sync_all());
        if let Err(err) = written {
            let _ = fs::remove_file(&path);
            return Err(err);
        }
        Ok(Self { path })
    }

    /// Where the file is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for AgentFile {
    fn drop(&mut self) {
        if let Err(err) = fs::remove_file(&self.path)
            && err.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!(path = %self.path.display(), %err, "cannot remove our file in an agent's directory");
        }
    }
}
