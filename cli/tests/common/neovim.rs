//! A real Neovim (0.7+), headless, whose language servers run through
//! `ide-mcp lsp-proxy`; driven over its `--listen` socket with
//! `nvim --server SOCKET --remote-expr` (no client library needed).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::lsp::Place;
use super::{Running, bin};

/// How long Neovim may take to open its socket.
const START: Duration = Duration::from_mins(1);

/// The configuration: one client per language, started at once through the
/// proxy, attached to each buffer of its file type, as a user without
/// nvim-lspconfig writes it (`vim.lsp.start_client` +
/// `vim.lsp.buf_attach_client`).
const INIT_LUA: &str = r#"
local bin = os.getenv("IDE_MCP_BIN")
local root = os.getenv("IDE_MCP_WS")
local linger = os.getenv("IDE_MCP_LINGER")
local log = os.getenv("IDE_MCP_LOG")
local function start(name, cmd)
  return vim.lsp.start_client({ name = name, cmd = cmd, root_dir = root })
end
_G.clients = {
  c = start("clangd", { bin, "lsp-proxy", "--linger", linger, "--log", log, "--", "clangd" }),
  python = start("pyright", { bin, "lsp-proxy", "--linger", linger, "--log", log, "--", "pyright-langserver", "--stdio" }),
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

/// Whether what a test of `agent` (a CLI run in a terminal) with a Neovim
/// IDE needs is installed: `agent`, `tmux`, `nvim`, `clangd` and
/// `pyright-langserver` (each as [`super::installed`] says).
pub(crate) fn installed_with(agent: &str) -> bool {
    [agent, "tmux", "nvim", "clangd", "pyright-langserver"]
        .into_iter()
        .all(super::installed)
}

/// A running Neovim.
pub(crate) struct Neovim {
    pub(crate) running: Running,
    socket: PathBuf,
    /// The proxies' (and their host's) `--log` file.
    pub(crate) log: PathBuf,
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
        let log = scratch.join("proxy.log");
        let mut command = Command::new("nvim");
        command
            .args(["--headless", "-i", "NONE", "-n", "-u"])
            .arg(&init)
            .arg("--listen")
            .arg(&socket)
            .env("IDE_MCP_BIN", bin())
            .env("IDE_MCP_WS", workspace)
            .env("IDE_MCP_LINGER", linger.to_string())
            .env("IDE_MCP_LOG", &log)
            .current_dir(workspace)
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        place.environment(&mut command);
        let mut running = Running::spawn(command);
        running.wait_for_socket(&socket, START, "Neovim");
        let nvim = Self {
            running,
            socket,
            log,
        };
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

    /// How many of Neovim's diagnostics of `path` are an agent's hunks
    /// (source `Claude Code`, `Gemini CLI` or `GitHub Copilot CLI`), and whether one of the others (the
    /// language server's own) has a message containing `own`.
    pub(crate) fn hunks(&self, path: &Path, own: &str) -> (usize, bool) {
        let answer = self.lua(&format!(
            "(function() local n, own = 0, false; \
             for _, d in ipairs(vim.diagnostic.get(vim.fn.bufnr('{}'))) do \
             if d.source == 'Claude Code' or d.source == 'Gemini CLI' \
             or d.source == 'GitHub Copilot CLI' then n = n + 1 \
             elseif d.message:find('{own}', 1, true) then own = true end end; \
             return n .. ' ' .. tostring(own) end)()",
            path.display()
        ));
        let (n, own) = answer.trim().split_once(' ').unwrap();
        (n.parse().unwrap(), own == "true")
    }

    /// Waits until [`hunks`](Self::hunks) is `expected`, at most `limit`.
    pub(crate) fn wait_hunks(
        &self,
        path: &Path,
        own: &str,
        expected: (usize, bool),
        limit: Duration,
    ) {
        let start = Instant::now();
        loop {
            let now = self.hunks(path, own);
            if now == expected {
                return;
            }
            assert!(
                start.elapsed() < limit,
                "{}: {now:?}, expected {expected:?}",
                path.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs the code action titled `title` on line `line` (zero-based) of
    /// the current buffer, as the user picks it from the menu (the
    /// diagnostics under the cursor in the request's context, as Neovim
    /// sends them).
    pub(crate) fn run_action(&self, line: u32, title: &str) {
        let ran = self.lua(&format!(
            "(function() local b = vim.api.nvim_get_current_buf(); \
             local p = {{ textDocument = {{ uri = vim.uri_from_bufnr(b) }}, \
             range = {{ start = {{ line = {line}, character = 0 }}, ['end'] = {{ line = {line}, character = 0 }} }}, \
             context = {{ diagnostics = vim.lsp.diagnostic.get_line_diagnostics(b, {line}) }} }}; \
             local r = vim.lsp.buf_request_sync(b, 'textDocument/codeAction', p, 20000); \
             for _, v in pairs(r or {{}}) do for _, a in ipairs(v.result or {{}}) do \
             if a.title == '{title}' then vim.lsp.buf.execute_command(a.command); return 'ran' end end end; \
             return 'none' end)()"
        ));
        assert_eq!(ran.trim(), "ran", "{title} on line {line}");
    }

    /// Selects with the normal-mode `keys` (`3G0wviw`: the second word of
    /// line 3), and asks for the range's code actions, as Neovim does
    /// when the user opens the menu on a selection: the host learns the
    /// selection from the request's range. The actions are kept for
    /// [`run_listed`](Self::run_listed).
    pub(crate) fn select(&self, keys: &str, limit: Duration) {
        self.command(&format!("normal! {keys}\u{1b}"));
        self.lua(
            "(function() local p = vim.lsp.util.make_given_range_params(); \
             p.context = { diagnostics = {} }; _G.actions = nil; \
             vim.lsp.buf_request(0, 'textDocument/codeAction', p, \
             function(_, result) _G.actions = result or {} end) end)()",
        );
        self.wait_lua("_G.actions ~= nil", limit);
    }

    /// Selects the word at `motion` (normal-mode keys) in `file`'s buffer,
    /// as [`select`](Self::select) does.
    pub(crate) fn select_word(&self, file: &str, motion: &str, limit: Duration) {
        self.command(&format!("buffer {file}"));
        self.select(&format!("{motion}viw"), limit);
    }

    /// Runs the code action titled `title` of those the last
    /// [`select`](Self::select) listed, as the user picks it from the menu.
    pub(crate) fn run_listed(&self, title: &str) {
        let ran = self.lua(&format!(
            "(function() for _, a in ipairs(_G.actions) do \
             if a.title == '{title}' then \
             vim.lsp.buf.execute_command(a.command or a); return a.title end end; \
             return 'none' end)()",
        ));
        assert_eq!(ran, title, "no action `{title}` on the selection");
    }

    /// The text of `path`'s buffer, and whether it is modified (unsaved).
    pub(crate) fn buffer(&self, path: &Path) -> (String, bool) {
        // As JSON: what `--remote-expr` prints turns line breaks into others.
        let answer = self.lua(&format!(
            "(function() local b = vim.fn.bufnr('{}'); \
             return vim.fn.json_encode({{ vim.bo[b].modified, \
             vim.api.nvim_buf_get_lines(b, 0, -1, false) }}) end)()",
            path.display()
        ));
        let (modified, lines): (bool, Vec<String>) =
            serde_json::from_str(answer.trim()).unwrap_or_else(|e| panic!("{e}: {answer}"));
        let text = lines.iter().fold(String::new(), |mut text, line| {
            text.push_str(line);
            text.push('\n');
            text
        });
        (text, modified)
    }

    /// The `code` of each of Neovim's diagnostics of `path` that an agent's
    /// review shows: `claude-edit` for a hunk under review,
    /// `claude-written` for a change marked after the fact.
    pub(crate) fn review_codes(&self, path: &Path) -> Vec<String> {
        let answer = self.lua(&format!(
            "(function() local codes = {{}}; \
             for _, d in ipairs(vim.diagnostic.get(vim.fn.bufnr('{}'))) do \
             local c = tostring(d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or ''); \
             if c:find('^claude%-') then table.insert(codes, c) end end; \
             return table.concat(codes, ' ') end)()",
            path.display()
        ));
        answer.split_whitespace().map(str::to_owned).collect()
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
