//! A real Neovim (0.7+), headless, whose language servers run through
//! `ide-mcp lsp-proxy`; driven over its `--listen` socket with
//! `nvim --server SOCKET --remote-expr` (no client library needed).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::lsp::Place;
use super::{Running, bin};

/// How long Neovim may take to open its socket.
const START: Duration = Duration::from_secs(20);

/// The configuration: one client per language, started at once through the
/// proxy, attached to each buffer of its file type, as a user without
/// nvim-lspconfig writes it (`vim.lsp.start_client` +
/// `vim.lsp.buf_attach_client`).
const INIT_LUA: &str = r#"
local bin = os.getenv("IDE_MCP_BIN")
local root = os.getenv("IDE_MCP_WS")
local linger = os.getenv("IDE_MCP_LINGER")
local function start(name, cmd)
  return vim.lsp.start_client({ name = name, cmd = cmd, root_dir = root })
end
_G.clients = {
  c = start("clangd", { bin, "lsp-proxy", "--linger", linger, "--", "clangd" }),
  python = start("pyright", { bin, "lsp-proxy", "--linger", linger, "--", "pyright-langserver", "--stdio" }),
}
-- The review's prompt, answered "Review" and recorded, as a user would
-- answer Neovim's default prompt.
_G.prompts = {}
vim.lsp.handlers["window/showMessageRequest"] = function(_, params)
  table.insert(_G.prompts, params.message)
  return { title = "Review" }
end
vim.api.nvim_create_autocmd("FileType", {
  pattern = { "c", "python" },
  callback = function(args)
    vim.lsp.buf_attach_client(args.buf, _G.clients[vim.bo[args.buf].filetype])
  end,
})
"#;

/// A running Neovim.
pub(crate) struct Neovim {
    pub(crate) running: Running,
    socket: PathBuf,
}

impl Neovim {
    /// Starts Neovim in `workspace` with `place`'s directories; the hosts
    /// its proxies start linger `linger` seconds; `name` names the
    /// directory of `place` that holds its init file and socket.
    pub(crate) fn start(place: &Place, workspace: &Path, name: &str, linger: u64) -> Self {
        let scratch = place.dir.path().join(name);
        std::fs::create_dir_all(&scratch).unwrap();
        let init = scratch.join("init.lua");
        std::fs::write(&init, INIT_LUA).unwrap();
        let socket = scratch.join("nvim.sock");
        let mut command = Command::new("nvim");
        command
            .args(["--headless", "-i", "NONE", "-n", "-u"])
            .arg(&init)
            .arg("--listen")
            .arg(&socket)
            .env("IDE_MCP_BIN", bin())
            .env("IDE_MCP_WS", workspace)
            .env("IDE_MCP_LINGER", linger.to_string())
            .current_dir(workspace)
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        place.environment(&mut command);
        let mut running = Running::spawn(command);
        let start = Instant::now();
        while !socket.exists() {
            running.assert_running();
            assert!(start.elapsed() < START, "no Neovim socket");
            std::thread::sleep(Duration::from_millis(20));
        }
        let nvim = Self { running, socket };
        // The socket opens before the init file has run.
        nvim.wait_lua("_G.clients ~= nil", START);
        nvim
    }

    /// The value of a Vimscript expression, as text.
    ///
    /// # Panics
    ///
    /// When `nvim --remote-expr` fails.
    pub(crate) fn expr(&self, expr: &str) -> String {
        let output = Command::new("nvim")
            .arg("--server")
            .arg(&self.socket)
            .arg("--remote-expr")
            .arg(expr)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{expr}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        // Neovim 0.7 prints the value on stderr, later versions on stdout.
        let mut value = output.stdout;
        value.extend_from_slice(&output.stderr);
        String::from_utf8(value).unwrap()
    }

    /// Runs an Ex command.
    pub(crate) fn command(&self, command: &str) -> String {
        self.expr(&format!("execute('{}')", command.replace('\'', "''")))
    }

    /// The value of a Lua expression, as text.
    pub(crate) fn lua(&self, lua: &str) -> String {
        self.expr(&format!("luaeval('{}')", lua.replace('\'', "''")))
    }

    /// Types `keys` (for `:qa`, after which no answer comes).
    pub(crate) fn send_keys(&self, keys: &str) {
        let status = Command::new("nvim")
            .arg("--server")
            .arg(&self.socket)
            .arg("--remote-send")
            .arg(keys)
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// `:qa!`, and waits (at most `limit`) for Neovim to exit: the remote
    /// end may close before it answers.
    pub(crate) fn quit(mut self, limit: Duration) {
        let _ = Command::new("nvim")
            .arg("--server")
            .arg(&self.socket)
            .arg("--remote-send")
            .arg("<Esc>:qa!<CR>")
            .status();
        self.running.wait_timeout(limit);
    }

    /// Waits until the Lua expression `ready` is `true`.
    pub(crate) fn wait_lua(&self, ready: &str, limit: Duration) {
        let start = Instant::now();
        while self.lua(&format!("({ready}) and 1 or 0")) != "1" {
            assert!(
                start.elapsed() < limit,
                "Neovim: never {ready}; messages: {}; stderr: {}",
                self.command("messages"),
                self.running.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
