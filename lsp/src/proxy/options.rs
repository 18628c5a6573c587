//! How `ide-mcp lsp-proxy` runs.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::host::{DEFAULT_LINGER, Launcher};

/// How `ide-mcp lsp-proxy` runs.
#[derive(Clone, Debug)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent switches, one per command-line flag"
)]
pub struct ProxyOptions {
    /// The language server's program.
    pub server: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The IDE's name in the lockfile (default: the editor's `clientInfo.name`,
    /// else the name of the editor's process).
    pub ide_name: Option<String>,
    /// The workspace folders (default: the editor's, from `initialize`).
    pub workspaces: Vec<PathBuf>,
    /// Claude Code's configuration directory, where the lockfile goes
    /// (default: `CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub config_dir: Option<PathBuf>,
    /// Where the observer runs (or not at all).
    pub observation: Observation,
    /// How a host is started when none serves the workspace; `None`: the
    /// proxy only forwards, and serves no IDE.
    pub launcher: Option<Launcher>,
    /// How long a host this proxy starts serves after its last editor
    /// detached.
    pub linger: Duration,
    /// Where a host this proxy starts writes its logs.
    pub host_log: Option<PathBuf>,
    /// Whether a host this proxy starts shows Claude's writes in clean
    /// buffers (`--no-reload` turns it off).
    pub reload: bool,
    /// Whether a host this proxy starts marks the changes of writes made
    /// without a review (`--no-after-review` turns it off).
    pub after_review: bool,
    /// Whether the host it starts serves Gemini CLI's IDE companion
    /// (`--no-gemini` turns it off).
    pub gemini: bool,
    /// Whether the host it starts serves the Copilot CLI's IDE connection
    /// (`--no-copilot` turns it off).
    pub copilot: bool,
}

impl Default for ProxyOptions {
    fn default() -> Self {
        Self {
            server: OsString::new(),
            args: Vec::new(),
            ide_name: None,
            workspaces: Vec::new(),
            config_dir: None,
            observation: Observation::default(),
            launcher: None,
            linger: DEFAULT_LINGER,
            host_log: None,
            reload: true,
            after_review: true,
            gemini: true,
            copilot: true,
        }
    }
}

/// Where the observer runs; BENCHMARKS.md ("LSP proxy") compares them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Observation {
    /// On the forwarding threads, before each message is forwarded.
    Inline,
    /// On a thread of its own, through a bounded queue that keeps both
    /// directions in order ([`HandOff`](super::handoff::HandOff)); the few
    /// messages whose verdict matters are observed inline once the queue
    /// has drained. The default: observation is then off the path of every
    /// message, a keystroke's or the one behind a large `didOpen`.
    #[default]
    HandOff,
    /// Nowhere: forward only, serve no IDE (the benchmarks' baseline).
    Off,
}
