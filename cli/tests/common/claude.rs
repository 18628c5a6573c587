//! The real `claude` CLI as the tests run it: in a home and configuration
//! directory of the test's own (nothing of the user's is read or touched),
//! past its first-run dialogs, with the Messages API stand-in as its API
//! and nothing else on the network.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use super::lsp::Place;
use super::model::ModelStandIn;
use super::tmux::Terminal;

/// Whether what a test of the CLI with a Neovim IDE needs is installed
/// (see [`super::neovim::installed_with`]).
pub(crate) fn installed() -> bool {
    super::neovim::installed_with("claude")
}

/// The end of a test's time; each wait gets what is left of it.
pub(crate) struct Deadline(pub(crate) Instant);

impl Deadline {
    /// What is left of the test's time.
    pub(crate) fn left(&self) -> Duration {
        self.0.saturating_duration_since(Instant::now())
    }

    /// Waits until `ready`; past the deadline, fails saying `what` did not
    /// happen, and `explain()`.
    pub(crate) fn wait(
        &self,
        what: &str,
        mut ready: impl FnMut() -> bool,
        explain: impl Fn() -> String,
    ) {
        while !ready() {
            assert!(!self.left().is_zero(), "never: {what}\n{}", explain());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the file at `path` holds `expected`; `explain()` adds
    /// to the failure message.
    pub(crate) fn wait_file(&self, path: &Path, expected: &str, explain: impl Fn() -> String) {
        loop {
            let now = std::fs::read_to_string(path).unwrap();
            if now == expected {
                return;
            }
            assert!(
                !self.left().is_zero(),
                "{} is\n{now}\nnot\n{expected}\n{}",
                path.display(),
                explain()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A key of the API's shape; only the stand-in ever sees it.
pub(crate) const API_KEY: &str = "sk-ant-api03-ide-mcp-stand-in-0000-0123456789abcdefghij";

/// The CLI's environment: `place`'s configuration directory (where the
/// hosts write their lockfiles) and runtime directory, a home of its own,
/// the stand-in as its API; nothing of a CLI or API account the test runs
/// under, no traffic other than the stand-in's.
pub(crate) fn isolate(command: &mut Command, place: &Place, model: &ModelStandIn) {
    super::remove_env(command, |name| {
        name.starts_with("CLAUDE") || name.starts_with("ANTHROPIC") || name == "CI"
    });
    let home = place.home();
    std::fs::create_dir_all(&home).unwrap();
    place.environment(command);
    command
        .env("HOME", &home)
        .env(
            "ANTHROPIC_BASE_URL",
            format!("http://127.0.0.1:{}", model.port),
        )
        .env("ANTHROPIC_API_KEY", API_KEY)
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
}

/// The CLI's global configuration (`$CLAUDE_CONFIG_DIR/.claude.json`) with
/// its first-run questions answered: onboarding done (no theme picker),
/// `ANTHROPIC_API_KEY` approved (the CLI records a key by its last 20
/// characters) and the workspace trusted.
pub(crate) fn write_config(config: &Path, workspace: &Path) {
    let approved = &API_KEY[API_KEY.len() - 20..];
    let settings = json!({
        "hasCompletedOnboarding": true,
        "customApiKeyResponses": {"approved": [approved], "rejected": []},
        "projects": {workspace.to_str().unwrap(): {"hasTrustDialogAccepted": true}},
    });
    std::fs::create_dir_all(config).unwrap();
    std::fs::write(config.join(".claude.json"), settings.to_string()).unwrap();
}

/// `claude <args>` in a 200×50 terminal in the workspace, isolated as
/// [`isolate`] says, with our host as its IDE (`CLAUDE_CODE_SSE_PORT`);
/// `configure` changes its environment further. [`write_config`] first.
pub(crate) fn start(
    place: &Place,
    model: &ModelStandIn,
    ide_port: u16,
    args: &[&str],
    configure: impl FnOnce(&mut Command),
) -> Terminal {
    let program = [&["claude"], args].concat();
    Terminal::start(
        &place.dir.path().join("tmux"),
        &place.workspace,
        (200, 50),
        &program,
        |command: &mut Command| {
            isolate(command, place, model);
            command.env("CLAUDE_CODE_SSE_PORT", ide_port.to_string());
            configure(command);
        },
    )
}
