//! What the end-to-end tests share: a sandbox with a copy of the
//! diagnostics fixture, child processes killed on drop, lockfile and
//! process helpers.
#![allow(dead_code, reason = "each test binary uses a part of it")]

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub(crate) mod claude;
pub(crate) mod copilot;
pub(crate) mod emacs;
pub(crate) mod gemini;
pub(crate) mod ide;
pub(crate) mod kakoune;
pub(crate) mod lsp;
pub(crate) mod model;
pub(crate) mod neovim;
pub(crate) mod opencode;
pub(crate) mod replay;
pub(crate) mod stand_in;
pub(crate) mod stdio;
pub(crate) mod tmux;
pub(crate) mod ws;

/// The tools the headless host serves: the tools crate's list, less those
/// only an editor host serves (and the live LSP tools, without `--lsp`).
pub(crate) fn served_tools() -> Vec<&'static str> {
    served_tools_with(false)
}

/// The tools the headless host serves, `with_servers` its own language
/// servers (`--lsp`).
pub(crate) fn served_tools_with(with_servers: bool) -> Vec<&'static str> {
    ide_mcp_tools::TOOL_NAMES
        .iter()
        .copied()
        .filter(|tool| ide_mcp::run::headless_serves(tool, with_servers))
        .collect()
}

/// Checks what a headless host lists: no `openDiff` (it would block on a
/// person who is not there), but the tools the CLI calls on its own.
pub(crate) fn assert_headless_tools(names: &[&str]) {
    assert!(!names.contains(&"openDiff"), "{names:?}");
    for tool in ["close_tab", "closeAllDiffTabs", "getLatestSelection"] {
        assert!(names.contains(&tool), "{tool} is listed: {names:?}");
    }
    assert_eq!(names, served_tools());
}

/// Generous: the fixture's first check runs on a machine shared with builds.
pub(crate) const DEADLINE: Duration = Duration::from_mins(3);

/// How long one answer may take.
pub(crate) const ANSWER: Duration = Duration::from_mins(1);

pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ide-mcp")
}

/// A temporary directory holding `ws/` (a copy of the diagnostics fixture),
/// `config/` (Claude Code's) and `target/` (cargo's).
pub(crate) struct Sandbox {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) ws: PathBuf,
}

impl Sandbox {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap().join("ws");
        copy_dir(&fixture(), &ws);
        Self { dir, ws }
    }

    pub(crate) fn config(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    pub(crate) fn file(&self, relative: &str) -> String {
        self.ws.join(relative).to_str().unwrap().to_owned()
    }

    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(bin());
        command
            .args(args)
            .env("CLAUDE_CONFIG_DIR", self.config())
            .env("CARGO_TARGET_DIR", self.dir.path().join("target"))
            // Gemini's discovery files go under `$TMPDIR`: the sandbox's.
            .env("TMPDIR", self.tmp())
            // The Copilot CLI's lockfiles go under `$COPILOT_HOME/ide`.
            .env("COPILOT_HOME", self.dir.path().join("copilot"))
            .current_dir(&self.ws);
        command
    }

    /// The `$TMPDIR` of what the sandbox runs.
    pub(crate) fn tmp(&self) -> PathBuf {
        let tmp = self.dir.path().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        tmp
    }

    /// Gemini CLI's discovery directory under the sandbox's `$TMPDIR`.
    pub(crate) fn gemini_dir(&self) -> PathBuf {
        self.tmp().join("gemini").join("ide")
    }

    /// The Copilot CLI's lockfile directory under the sandbox's `$COPILOT_HOME`.
    pub(crate) fn copilot_dir(&self) -> PathBuf {
        self.dir.path().join("copilot").join("ide")
    }

    /// The Copilot lockfiles there.
    pub(crate) fn copilot_files(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.copilot_dir()) else {
            return Vec::new();
        };
        entries.map(|entry| entry.unwrap().path()).collect()
    }

    /// The Gemini discovery files there.
    pub(crate) fn gemini_files(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.gemini_dir()) else {
            return Vec::new();
        };
        entries.map(|entry| entry.unwrap().path()).collect()
    }

    /// `ide-mcp serve --workspace <the sandbox's>` with `args` after, started.
    pub(crate) fn serve(&self, args: &[&str]) -> Running {
        let mut all = vec!["serve", "--workspace", self.ws.to_str().unwrap()];
        all.extend_from_slice(args);
        Running::spawn(self.command(&all))
    }

    pub(crate) fn lockfiles(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.config().join("ide")) else {
            return Vec::new();
        };
        entries
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "lock"))
            .collect()
    }
}

/// The committed diagnostics fixture (`tests/fixtures/diag-crate`).
pub(crate) fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/diag-crate")
}

#[allow(unused_imports, reason = "each test binary uses a part of it")]
pub(crate) use ide_mcp_test_support::json::tool_names;

/// Copies a fixture, leaving out `target/` and `Cargo.lock`.
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == "Cargo.lock" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(name));
        } else {
            std::fs::copy(entry.path(), to.join(name)).unwrap();
        }
    }
}

/// A child process, killed on drop; its stderr collected for failure messages.
pub(crate) struct Running {
    pub(crate) child: Child,
    pub(crate) stderr: Arc<Mutex<String>>,
    /// The thread copying stderr; it ends at the pipe's EOF.
    reader: std::thread::JoinHandle<()>,
}

impl Running {
    pub(crate) fn spawn(mut command: Command) -> Self {
        let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = Arc::clone(&stderr);
        let reader = std::thread::spawn(move || {
            let mut buffer = [0; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buffer) {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        Self {
            child,
            stderr,
            reader,
        }
    }

    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends SIGTERM and waits for the exit, at most `limit`.
    pub(crate) fn terminate(&mut self, limit: Duration) -> ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        self.wait_timeout(limit)
    }

    pub(crate) fn wait_timeout(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // The last lines may still be in the pipe: wait for the
                // reader to reach EOF (bounded: a grandchild such as a
                // language server may hold the pipe open a little longer).
                let drained = Instant::now();
                while !self.reader.is_finished() && drained.elapsed() < Duration::from_secs(2) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                return status;
            }
            assert!(
                start.elapsed() < limit,
                "the process did not exit; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub(crate) fn assert_running(&mut self) {
        if let Some(status) = self.child.try_wait().unwrap() {
            panic!("ide-mcp exited ({status}); stderr:\n{}", self.stderr());
        }
    }

    /// Waits, at most `limit`, until the process (an editor, `what`) has
    /// made `socket`, asserting it is still running.
    pub(crate) fn wait_for_socket(&mut self, socket: &Path, limit: Duration, what: &str) {
        let start = Instant::now();
        while !socket.exists() {
            self.assert_running();
            assert!(
                start.elapsed() < limit,
                "no {what} socket; stderr: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for the server's lockfile and reads it.
pub(crate) fn wait_for_lockfile(sandbox: &Sandbox, server: &mut Running) -> (PathBuf, Value) {
    let path = wait_for_one("lockfile", server, || sandbox.lockfiles());
    let content = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    (path, content)
}

/// Waits (at most [`DEADLINE`], the server running) until `files` lists
/// one file (a discovery file, named `what` when there is none); that one.
pub(crate) fn wait_for_one(
    what: &str,
    server: &mut Running,
    files: impl Fn() -> Vec<PathBuf>,
) -> PathBuf {
    let start = Instant::now();
    loop {
        server.assert_running();
        if let [path] = &files()[..] {
            return path.clone();
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no {what}; stderr:\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub(crate) fn initialize_params() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {}, "elicitation": {}},
        "clientInfo": {"name": "claude-code", "version": "2.1.0"},
    })
}

pub(crate) fn diagnostics_of<'a>(reply: &'a Value, uri: &str) -> Option<&'a Vec<Value>> {
    reply
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["uri"] == uri)
        .map(|entry| entry["diagnostics"].as_array().unwrap())
}

/// Writes `text` to `path` as an editor saves, then waits until `host`
/// has logged that its file watcher saw the change (`files changed`,
/// at `ide_mcp::diagnostics::watch=debug`, logged as it tells the
/// diagnostics sources): a query sent after that finds the host knowing of
/// the change, however loaded the machine, where a pause would be a guess.
pub(crate) fn write_seen(host: &Running, path: &Path, text: &str) {
    let path_text = path.to_str().unwrap();
    let seen = || {
        host.stderr()
            .lines()
            .filter(|line| line.contains("files changed") && line.contains(path_text))
            .count()
    };
    let before = seen();
    std::fs::write(path, text).unwrap();
    let start = Instant::now();
    while seen() == before {
        assert!(
            start.elapsed() < DEADLINE,
            "the host did not see {path_text} change; stderr:\n{}",
            host.stderr()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The pids of `pid`'s children (any of its threads may have spawned them).
pub(crate) fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|child| child.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// The children of `pid` that run `ide-mcp` (an editor's proxies), leaving
/// out what else an editor starts for a moment (Emacs's `vc` runs `git`).
pub(crate) fn proxies(pid: u32) -> Vec<u32> {
    children(pid)
        .into_iter()
        .filter(|child| {
            std::fs::read_to_string(format!("/proc/{child}/comm"))
                .is_ok_and(|comm| comm.trim_end() == "ide-mcp")
        })
        .collect()
}

/// Whether `pid` is gone or a zombie waiting to be reaped.
pub(crate) fn is_dead(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// Whether `program` is installed; when it is not and the install script
/// said the registry was unreachable (`IDE_MCP_LSP_MISSING=1`, set by
/// `.ci/run`), the test is skipped with a message; otherwise it fails.
pub(crate) fn installed(program: &str) -> bool {
    present(program, ide_mcp_test_support::on_path(program))
}

/// `found`, after the rule of [`installed`] for a component that is not a
/// program (an Emacs package).
pub(crate) fn present(component: &str, found: bool) -> bool {
    if !found {
        assert!(
            std::env::var_os("IDE_MCP_LSP_MISSING").is_some(),
            "`{component}` is not installed: run `bash tests/lsp/install.sh`"
        );
        eprintln!("SKIPPED: `{component}` could not be installed from its package registry");
    }
    found
}

/// Removes from `command`'s environment every variable of the test's own
/// whose name is `unwanted` (an agent's account, its IDE, CI switches).
pub(crate) fn remove_env(command: &mut Command, unwanted: impl Fn(&str) -> bool) {
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if unwanted(&name) {
            command.env_remove(&*name);
        }
    }
}

/// `PATH` with the built `ide-mcp` first, as a user who installed it has
/// it (an agent's configuration names `ide-mcp` alone, as the README's).
pub(crate) fn path_with_ide_mcp() -> std::ffi::OsString {
    let dir = Path::new(bin()).parent().unwrap().to_owned();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&rest))).unwrap()
}

/// The port of an IDE lockfile: the CLI takes it from the file's name
/// (`<port>.lock`).
pub(crate) fn lockfile_port(path: &Path) -> u16 {
    path.file_stem()
        .and_then(|stem| stem.to_str())
        .and_then(|stem| stem.parse().ok())
        .unwrap_or_else(|| panic!("`{}` is not named `<port>.lock`", path.display()))
}
