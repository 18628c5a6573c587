//! The real `opencode` TUI (npm `opencode-ai`) as the tests run it: in a
//! home of the test's own, that of a [`Place::at_home`], whose
//! `~/.claude/ide` is where the editor's host writes its lockfile (the one
//! directory opencode reads); with the Messages API stand-in
//! (`common::model`) as its one provider; nothing else on the network.
//!
//! What 1.18.33 reaches for unless told not to, and what tells it (read in
//! its bundle; run so under `strace -f -e connect`, it connects to
//! 127.0.0.1 alone):
//! - the models.dev model list: `OPENCODE_DISABLE_MODELS_FETCH` (the
//!   provider and its model are declared in the configuration, on the
//!   bundled `@ai-sdk/anthropic`);
//! - its own update: `OPENCODE_DISABLE_AUTOUPDATE`, `"autoupdate": false`;
//! - sharing: `OPENCODE_DISABLE_SHARE`, `"share": "disabled"`;
//! - its default plugins: `OPENCODE_DISABLE_DEFAULT_PLUGINS`;
//! - language servers and formatters of its own (downloaded when missing):
//!   `"lsp": false`, `"formatter": false`, `OPENCODE_DISABLE_LSP_DOWNLOAD`;
//! - `npm install @opencode-ai/plugin` in its configuration directory at
//!   start-up (no switch): skipped when `node_modules/` is there and
//!   `package-lock.json` lists the package, as this module writes them.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::lsp::Place;
use super::model::ModelStandIn;
use super::tmux::Terminal;

/// Whether what a test of opencode with a Neovim IDE needs is installed
/// (see [`super::neovim::installed_with`]).
pub(crate) fn installed() -> bool {
    super::neovim::installed_with("opencode")
}

/// The provider the configuration declares: the stand-in.
const PROVIDER: &str = "stand-in";

/// A key; only the stand-in ever sees it.
const API_KEY: &str = "ide-mcp-stand-in-opencode-key";

/// The version whose dependency the configuration directory is said to
/// have (`@opencode-ai/plugin`, pinned to opencode's own).
const PLUGIN_VERSION: &str = "1.18.33";

/// `opencode` in a 160×50 terminal in the workspace of `place` (made
/// with [`Place::at_home`]), with the stand-in as its model and `mcp` as
/// its configuration's `mcp` (its MCP servers), `ide-mcp` on its `PATH`.
pub(crate) fn start(place: &Place, model: &ModelStandIn, mcp: &Value) -> Terminal {
    assert_eq!(
        place.config(),
        place.home().join(".claude"),
        "opencode reads lockfiles in ~/.claude/ide alone: use `Place::at_home`"
    );
    write_config(&place.home(), model, mcp);
    Terminal::start(
        &place.dir.path().join("tmux"),
        &place.workspace,
        (160, 50),
        &["opencode"],
        |command: &mut Command| {
            super::remove_env(command, |name| {
                ["OPENCODE", "CLAUDE", "ANTHROPIC", "XDG_", "ZED"]
                    .iter()
                    .any(|prefix| name.starts_with(prefix))
                    || name == "CI"
                    || name == "TERM_PROGRAM"
            });
            place.environment(command);
            command
                .env("HOME", place.home())
                .env("PATH", super::path_with_ide_mcp())
                .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
                .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                .env("OPENCODE_DISABLE_SHARE", "1")
                .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
                .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1");
        },
    )
}

/// `~/.config/opencode/opencode.json`, and what tells opencode that the
/// directory's dependencies are installed.
fn write_config(home: &Path, model: &ModelStandIn, mcp: &Value) {
    let dir = home.join(".config").join("opencode");
    std::fs::create_dir_all(dir.join("node_modules")).unwrap();
    let model_id = format!("{PROVIDER}/model");
    let config = json!({
        "autoupdate": false,
        "share": "disabled",
        "snapshot": false,
        "lsp": false,
        "formatter": false,
        "model": model_id,
        "small_model": model_id,
        "enabled_providers": [PROVIDER],
        "provider": {PROVIDER: {
            "npm": "@ai-sdk/anthropic",
            "name": "Stand-in",
            "options": {
                "baseURL": format!("http://127.0.0.1:{}/v1", model.port),
                "apiKey": API_KEY,
            },
            "models": {"model": {"name": "Stand-in model", "tool_call": true}},
        }},
        "mcp": mcp,
    });
    std::fs::write(dir.join("opencode.json"), config.to_string()).unwrap();
    let dependencies = json!({"@opencode-ai/plugin": PLUGIN_VERSION});
    std::fs::write(
        dir.join("package.json"),
        json!({"dependencies": dependencies}).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("package-lock.json"),
        json!({"packages": {"": {"dependencies": dependencies}}}).to_string(),
    )
    .unwrap();
}
