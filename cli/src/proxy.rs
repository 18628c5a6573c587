//! `ide-mcp lsp-proxy` and `ide-mcp host`: their arguments (see
//! `ide_mcp_lsp::proxy` and `ide_mcp_lsp::host`). Neither may disturb the
//! editor: they log through [`logging`].

use std::ffi::OsString;
use std::io;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use clap::{Args, ValueEnum};
use ide_mcp_lsp::host::{DEFAULT_LINGER, HostOptions, Launcher};
use ide_mcp_lsp::proxy::{Observation, ProxyOptions};

use crate::logging::{self, LogFlush};

/// Where the proxy's observer runs (`--observe`, hidden).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ObserveArg {
    /// On the forwarding threads.
    Inline,
    /// On a thread of its own.
    HandOff,
    /// Nowhere: forward only.
    Off,
}

/// `ide-mcp lsp-proxy`.
#[derive(Debug, Args)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "command-line flags, each a switch of its own"
)]
pub struct LspProxyArgs {
    /// The IDE name in the lockfile, shown by the CLI's `/ide` (default: the
    /// editor's name from `initialize`).
    #[arg(long, value_name = "NAME")]
    pub ide_name: Option<String>,
    /// A workspace folder (repeatable; default: the editor's, from
    /// `initialize`).
    #[arg(long = "workspace", value_name = "DIR")]
    pub workspaces: Vec<PathBuf>,
    /// Write logs to this file instead of stderr (a host this proxy starts
    /// appends its logs there too).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// How long the workspace's IDE host, when this proxy starts it, keeps
    /// serving after its last editor has gone, in seconds: an editor
    /// restarted within it finds the same IDE, and Claude Code stays
    /// connected.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_LINGER.as_secs())]
    pub linger: u64,
    /// Leave open buffers alone when their files change on disk (by default
    /// a clean buffer is updated to show what Claude wrote, through
    /// `workspace/applyEdit`; a buffer with unsaved changes never is).
    #[arg(long)]
    pub no_reload: bool,
    /// Show the changes of a file Claude wrote without a review (auto
    /// mode) only as the reloaded buffer: by default each changed hunk is
    /// also marked (an informational diagnostic) with code actions to keep
    /// or revert it.
    #[arg(long)]
    pub no_after_review: bool,
    /// Do not serve Gemini CLI's IDE companion (by default the workspace's
    /// IDE host serves `gemini` too, through
    /// `$TMPDIR/gemini/ide/gemini-ide-server-<pid>-<port>.json`).
    #[arg(long)]
    pub no_gemini: bool,
    /// Do not serve the Copilot CLI's IDE connection (by default the
    /// workspace's IDE host serves `copilot` too, through
    /// `$COPILOT_HOME/ide/<unique>.lock`).
    #[arg(long)]
    pub no_copilot: bool,
    /// Where the observer runs: `hand-off` (a thread of its own, the
    /// default), `inline` (on the forwarding threads), or `off` (forward
    /// only, no IDE): for the benchmarks.
    #[arg(long, hide = true, value_enum, default_value_t = ObserveArg::HandOff)]
    pub observe: ObserveArg,
    /// The language server and its arguments, after `--`.
    #[arg(required = true, last = true, value_name = "SERVER [ARGS]...")]
    pub server: Vec<OsString>,
}

impl LspProxyArgs {
    /// The proxy's options.
    pub fn options(&self) -> ProxyOptions {
        let (server, args) = self
            .server
            .split_first()
            .map(|(server, args)| (server.clone(), args.to_vec()))
            .unwrap_or_default();
        ProxyOptions {
            server,
            args,
            ide_name: self.ide_name.clone(),
            workspaces: self
                .workspaces
                .iter()
                .map(|dir| std::path::absolute(dir).unwrap_or_else(|_| dir.clone()))
                .collect(),
            config_dir: None,
            observation: match self.observe {
                ObserveArg::Inline => Observation::Inline,
                ObserveArg::HandOff => Observation::HandOff,
                ObserveArg::Off => Observation::Off,
            },
            launcher: Some(Launcher::new(host_command)),
            linger: Duration::from_secs(self.linger),
            host_log: self
                .log
                .as_ref()
                .map(|log| std::path::absolute(log).unwrap_or_else(|_| log.clone())),
            reload: !self.no_reload,
            after_review: !self.no_after_review,
            gemini: !self.no_gemini,
            copilot: !self.no_copilot,
        }
    }

    /// Starts logging to `--log FILE` or stderr (see [`logging::init`]).
    pub fn init_logging(&self) -> io::Result<LogFlush> {
        logging::init(self.log.as_deref())
    }
}

/// `ide-mcp host`.
#[derive(Debug, Args, PartialEq, Eq)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "command-line flags, each a switch of its own"
)]
pub struct HostArgs {
    /// A workspace folder (repeatable, at least one).
    #[arg(long = "workspace", value_name = "DIR", required = true)]
    pub workspaces: Vec<PathBuf>,
    /// The IDE name in the lockfile, shown by the CLI's `/ide`.
    #[arg(long, default_value = "ide-mcp", value_name = "NAME")]
    pub ide_name: String,
    /// Claude Code's configuration directory, where the lockfile goes
    /// (default: `CLAUDE_CONFIG_DIR`, else `~/.claude`).
    #[arg(long, value_name = "DIR")]
    pub config_dir: Option<PathBuf>,
    /// How long to keep serving once the last editor has gone, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_LINGER.as_secs())]
    pub linger: u64,
    /// Write logs to this file (appended) instead of stderr.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Leave open buffers alone when their files change on disk.
    #[arg(long)]
    pub no_reload: bool,
    /// Do not mark the changes of writes made without a review.
    #[arg(long)]
    pub no_after_review: bool,
    /// Do not serve Gemini CLI's IDE companion.
    #[arg(long)]
    pub no_gemini: bool,
    /// Do not serve the Copilot CLI's IDE connection.
    #[arg(long)]
    pub no_copilot: bool,
}

impl HostArgs {
    /// The host's options; fails without a configuration directory.
    pub fn options(&self) -> io::Result<HostOptions> {
        let config_dir = self
            .config_dir
            .clone()
            .or_else(ide_mcp_runtime::lockfile::default_config_dir)
            .ok_or_else(|| io::Error::other("no home directory and no CLAUDE_CONFIG_DIR"))?;
        Ok(HostOptions {
            folders: self
                .workspaces
                .iter()
                .map(|dir| std::path::absolute(dir).unwrap_or_else(|_| dir.clone()))
                .collect(),
            ide_name: self.ide_name.clone(),
            config_dir,
            linger: Duration::from_secs(self.linger),
            log: self.log.clone(),
            reload: !self.no_reload,
            after_review: !self.no_after_review,
            gemini: !self.no_gemini,
            copilot: !self.no_copilot,
        })
    }

    /// Starts logging to `--log FILE` or stderr.
    pub fn init_logging(&self) -> io::Result<LogFlush> {
        logging::init(self.log.as_deref())
    }
}

/// The command that runs a host with `options`: this binary's `host`.
pub fn host_command(options: &HostOptions) -> Command {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("ide-mcp"));
    let mut command = Command::new(exe);
    command.arg("host");
    for folder in &options.folders {
        command.arg("--workspace").arg(folder);
    }
    command
        .arg("--ide-name")
        .arg(&options.ide_name)
        .arg("--config-dir")
        .arg(&options.config_dir)
        .arg("--linger")
        .arg(options.linger.as_secs().to_string());
    if let Some(log) = &options.log {
        command.arg("--log").arg(log);
    }
    if !options.reload {
        command.arg("--no-reload");
    }
    if !options.after_review {
        command.arg("--no-after-review");
    }
    if !options.gemini {
        command.arg("--no-gemini");
    }
    if !options.copilot {
        command.arg("--no-copilot");
    }
    command
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::args::{Cli, Command as Sub};

    #[test]
    fn a_started_host_gets_the_options_it_was_started_with() {
        let options = HostOptions {
            folders: vec![PathBuf::from("/w/a b"), PathBuf::from("/v")],
            ide_name: "Neovim".to_owned(),
            config_dir: PathBuf::from("/home/u/.claude"),
            linger: Duration::from_secs(7),
            log: Some(PathBuf::from("/var/log/l.log")),
            reload: false,
            after_review: false,
            gemini: false,
            copilot: false,
        };
        let command = host_command(&options);
        let args = std::iter::once(std::ffi::OsStr::new("ide-mcp")).chain(command.get_args());
        let Sub::Host(parsed) = Cli::try_parse_from(args).unwrap().command else {
            panic!("not the host command")
        };
        assert_eq!(parsed.options().unwrap(), options);
    }
}
