//! How a host runs: its options.

use std::path::PathBuf;
use std::time::Duration;

use super::place::HostKey;

/// How long a host serves once its last editor has detached, by default.
pub const DEFAULT_LINGER: Duration = Duration::from_mins(10);

/// How a host runs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent switches, one per command-line flag"
)]
pub struct HostOptions {
    /// The workspace folders it serves.
    pub folders: Vec<PathBuf>,
    /// The IDE's name in the lockfile.
    pub ide_name: String,
    /// Claude Code's configuration directory, where the lockfile goes.
    pub config_dir: PathBuf,
    /// How long it serves after the last editor detached.
    pub linger: Duration,
    /// Where it writes its logs (none: nowhere).
    pub log: Option<PathBuf>,
    /// Whether clean buffers show what Claude writes to their files
    /// ([`reload`](super::reload)).
    pub reload: bool,
    /// Whether the changes of a write made without a review are marked in
    /// the buffer, to keep or to revert.
    pub after_review: bool,
    /// Whether it serves Gemini CLI's IDE companion too
    /// ([`gemini`](ide_mcp_tools::gemini); `--no-gemini` turns it off).
    pub gemini: bool,
    /// Whether it serves the Copilot CLI's IDE connection too
    /// ([`copilot`](ide_mcp_tools::copilot); `--no-copilot` turns it off).
    pub copilot: bool,
}

impl HostOptions {
    /// Which host these options name.
    pub fn key(&self) -> HostKey {
        HostKey::new(&self.folders, &self.config_dir)
    }
}
