//! Driving `ide-mcp lsp-proxy` as an editor does: its stdin and stdout are
//! the editor's end of the LSP wire.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Running, bin};

/// How long any wait of the proxy tests may take: the bound of a hang, not
/// of a slow answer on a loaded machine.
pub(crate) const WAIT: Duration = Duration::from_mins(1);

pub(crate) use ide_mcp_test_support::lsp::message;

/// The `initialize` request of an editor with process id `pid` and the
/// workspace `root`.
pub(crate) fn initialize(pid: u32, root: &Path, name: &str) -> Vec<u8> {
    message(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": pid,
            "rootUri": format!("file://{}", root.display()),
            "workspaceFolders": [{"uri": format!("file://{}", root.display()), "name": "w"}],
            "clientInfo": {"name": name, "version": "1"},
            "capabilities": {},
        }}),
    )
}

/// The `exit` notification.
pub(crate) fn exit() -> Vec<u8> {
    message(&json!({"jsonrpc": "2.0", "method": "exit"}))
}

/// A temporary directory with Claude Code's configuration directory, a
/// workspace, the runtime directory (`XDG_RUNTIME_DIR`) where the proxies'
/// hosts keep their private files, the `$TMPDIR` where they write Gemini
/// CLI's discovery files and the `$COPILOT_HOME` where they write the
/// Copilot CLI's lockfiles. Dropping it ends every host still running
/// there.
pub(crate) struct Place {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) workspace: PathBuf,
    /// Whether what runs here finds Claude's directory in its home
    /// (`~/.claude`, no `CLAUDE_CONFIG_DIR`); see [`Place::at_home`].
    at_home: bool,
}

impl Drop for Place {
    fn drop(&mut self) {
        for pid in self.host_pids() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

impl Place {
    pub(crate) fn new() -> Self {
        Self::with_home(false)
    }

    /// A place whose processes run with [`home`](Self::home) as `$HOME`
    /// and no `CLAUDE_CONFIG_DIR`: the hosts write their lockfiles in
    /// `~/.claude/ide`, the one directory opencode reads.
    pub(crate) fn at_home() -> Self {
        Self::with_home(true)
    }

    fn with_home(at_home: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        Self {
            dir,
            workspace,
            at_home,
        }
    }

    /// The home directory of the agents the tests run (and of every
    /// process of a place [`at_home`](Self::at_home)).
    pub(crate) fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// The `$TMPDIR` of every process the test starts.
    pub(crate) fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    /// Gemini CLI's discovery files (in `$TMPDIR/gemini/ide`).
    pub(crate) fn gemini_files(&self) -> Vec<String> {
        list(&self.tmp().join("gemini").join("ide"))
    }

    /// The `$COPILOT_HOME` of every process the test starts: the Copilot
    /// CLI's configuration, and the hosts' lockfiles for it (in `ide/`).
    pub(crate) fn copilot_home(&self) -> PathBuf {
        self.dir.path().join("copilot")
    }

    /// The Copilot CLI's lockfiles.
    pub(crate) fn copilot_files(&self) -> Vec<String> {
        list(&self.copilot_home().join("ide"))
    }

    /// Claude Code's configuration directory, where the hosts write their
    /// lockfiles (in `ide/`).
    pub(crate) fn config(&self) -> PathBuf {
        if self.at_home {
            self.home().join(".claude")
        } else {
            self.dir.path().join("config")
        }
    }

    /// The `XDG_RUNTIME_DIR` of every process the test starts.
    pub(crate) fn runtime(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    /// The hosts' private directory.
    pub(crate) fn private_dir(&self) -> PathBuf {
        self.runtime().join("ide-mcp")
    }

    /// The files in the hosts' private directory.
    pub(crate) fn private_entries(&self) -> Vec<String> {
        list(&self.private_dir())
    }

    /// The pids of the running hosts, from their lock files (each holds its
    /// host's pid while the host lives).
    pub(crate) fn host_pids(&self) -> Vec<u32> {
        let Ok(entries) = std::fs::read_dir(self.private_dir()) else {
            return Vec::new();
        };
        entries
            .filter_map(|entry| {
                let path = entry.ok()?.path();
                if path.extension()? != "lock" {
                    return None;
                }
                let pid: u32 = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
                (!super::is_dead(pid)).then_some(pid)
            })
            .collect()
    }

    /// Waits until no host runs, no lockfile is left in the CLIs'
    /// directories (Claude Code's, the Copilot CLI's) and no file in the
    /// private one.
    pub(crate) fn wait_all_gone(&self, limit: Duration) {
        self.wait_all_gone_but(&[], limit);
    }

    /// [`wait_all_gone`](Self::wait_all_gone), but for the private
    /// directory's files `kept` (the tools `ide-mcp bridge` remembers for
    /// its next start: `["bridge-tools.json"]`).
    pub(crate) fn wait_all_gone_but(&self, kept: &[&str], limit: Duration) {
        let start = Instant::now();
        loop {
            let (hosts, ide, private, copilot) = (
                self.host_pids(),
                self.ide_dir_entries(),
                self.private_entries(),
                self.copilot_files(),
            );
            if hosts.is_empty() && ide.is_empty() && private == kept && copilot.is_empty() {
                return;
            }
            assert!(
                start.elapsed() < limit,
                "left behind: hosts {hosts:?}, IDE directory {ide:?}, private directory {private:?}, \
                 Copilot lockfiles {copilot:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Does to the IDE directory what the `claude` CLI does at start-up
    /// and on every `/ide` search: deletes each `*.lock` it cannot use:
    /// not JSON (a legacy lockfile whose port, `parseInt` of the name, is
    /// NaN when the name is not a number), with a dead `pid`, or without a
    /// `pid` and a port that does not answer. Returns what it deleted.
    pub(crate) fn cli_cleanup(&self) -> Vec<String> {
        let mut deleted = Vec::new();
        for name in self.ide_dir_entries() {
            let Some(stem) = name.strip_suffix(".lock") else {
                continue;
            };
            let path = self.config().join("ide").join(&name);
            let content: Option<Value> = std::fs::read_to_string(&path)
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok());
            let pid = content
                .as_ref()
                .and_then(|c| c["pid"].as_u64())
                .and_then(|pid| u32::try_from(pid).ok());
            let port_answers = stem
                .parse::<u16>()
                .is_ok_and(|port| std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
            let usable = match (content.is_some(), pid) {
                (true, Some(pid)) => !super::is_dead(pid),
                (_, None) => port_answers,
                (false, Some(_)) => false,
            };
            if !usable {
                std::fs::remove_file(&path).unwrap();
                deleted.push(name);
            }
        }
        deleted
    }

    /// The IDE lockfiles (`<port>.lock`), with their content.
    pub(crate) fn lockfiles(&self) -> Vec<(PathBuf, Value)> {
        let Ok(entries) = std::fs::read_dir(self.config().join("ide")) else {
            return Vec::new();
        };
        entries
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                path.extension().is_some_and(|e| e == "lock")
                    && path
                        .file_stem()
                        .is_some_and(|stem| stem.to_str().unwrap().parse::<u16>().is_ok())
            })
            .filter_map(|path| {
                let text = std::fs::read_to_string(&path).ok()?;
                Some((path, serde_json::from_str(&text).ok()?))
            })
            .collect()
    }

    /// Every file in the lockfile directory.
    pub(crate) fn ide_dir_entries(&self) -> Vec<String> {
        list(&self.config().join("ide"))
    }

    /// `ide-mcp lsp-proxy [extra] -- server...` with this configuration; a
    /// host it starts lingers for no time unless `extra` says `--linger`.
    pub(crate) fn proxy(&self, extra: &[&str], server: &[&str]) -> Proxy {
        let mut command = Command::new(bin());
        command.arg("lsp-proxy").args(extra);
        if !extra.contains(&"--linger") {
            command.args(["--linger", "0"]);
        }
        command.arg("--").args(server);
        self.environment(&mut command);
        command
            .env("RUST_LOG", "debug")
            .current_dir(&self.workspace);
        Proxy::spawn(command)
    }

    /// Sets `command`'s environment to this place's directories.
    pub(crate) fn environment(&self, command: &mut Command) {
        if self.at_home {
            command
                .env("HOME", self.home())
                .env_remove("CLAUDE_CONFIG_DIR");
        } else {
            command.env("CLAUDE_CONFIG_DIR", self.config());
        }
        command
            .env("XDG_RUNTIME_DIR", self.runtime())
            .env("TMPDIR", self.tmp())
            .env("COPILOT_HOME", self.copilot_home());
    }

    /// The environment of an agent's CLI a test runs: none of the
    /// variables of its account or settings (names beginning with one of
    /// `own`), of a CI or of another IDE's terminal; this place's
    /// directories; `home` as its home.
    pub(crate) fn agent_environment(&self, command: &mut Command, own: &[&str], home: &Path) {
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if own.iter().any(|prefix| name.starts_with(prefix))
                || name == "CI"
                || name.starts_with("VSCODE")
                || name == "TERM_PROGRAM"
            {
                command.env_remove(&*name);
            }
        }
        // After the removals: the place's own variables (`COPILOT_HOME`).
        self.environment(command);
        command.env("HOME", home);
    }

    /// The echo server (`lsp-echo`, of test-support) with `args`.
    pub(crate) fn echo<'a>(args: &[&'a str]) -> Vec<&'a str> {
        let mut server = vec![ide_mcp_test_support::lsp_echo()];
        server.extend_from_slice(args);
        server
    }

    /// Waits until `ready` holds of the lockfiles, and returns them.
    pub(crate) fn wait_lockfiles(
        &self,
        proxy: &Proxy,
        ready: impl FnMut(&[(PathBuf, Value)]) -> bool,
    ) -> Vec<(PathBuf, Value)> {
        self.wait_lockfiles_of(&proxy.running, ready)
    }

    /// [`wait_lockfiles`](Self::wait_lockfiles), for any process whose
    /// stderr explains a failure.
    pub(crate) fn wait_lockfiles_of(
        &self,
        owner: &Running,
        mut ready: impl FnMut(&[(PathBuf, Value)]) -> bool,
    ) -> Vec<(PathBuf, Value)> {
        let start = Instant::now();
        loop {
            let lockfiles = self.lockfiles();
            if ready(&lockfiles) {
                return lockfiles;
            }
            assert!(
                start.elapsed() < WAIT,
                "lockfiles: {lockfiles:?}; stderr:\n{}",
                owner.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The names of the files in `dir` (none when it does not exist).
fn list(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir).map_or_else(
        |_| Vec::new(),
        |entries| {
            entries
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        },
    )
}

/// A running proxy: what is written to its stdin reaches the server, what
/// it writes to stdout is collected.
pub(crate) struct Proxy {
    pub(crate) running: Running,
    stdin: Option<ChildStdin>,
    out: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Proxy {
    fn spawn(mut command: Command) -> Self {
        command.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut running = Running::spawn(command);
        let stdin = running.child.stdin.take();
        let mut stdout = running.child.stdout.take().unwrap();
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&out);
        let reader = std::thread::spawn(move || {
            let mut buffer = [0; 16384];
            while let Ok(n @ 1..) = stdout.read(&mut buffer) {
                sink.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
        });
        Self {
            running,
            stdin,
            out,
            reader: Some(reader),
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.running.child.id()
    }

    pub(crate) fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin closed");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// What the proxy wrote to its stdout so far.
    pub(crate) fn output(&self) -> Vec<u8> {
        self.out.lock().unwrap().clone()
    }

    /// Waits until the output holds `expected` bytes.
    pub(crate) fn wait_output_len(&self, expected: usize) -> Vec<u8> {
        let start = Instant::now();
        loop {
            let output = self.output();
            if output.len() >= expected {
                return output;
            }
            assert!(
                start.elapsed() < WAIT,
                "{} of {expected} bytes; stderr:\n{}",
                output.len(),
                self.running.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits for the exit, at most [`WAIT`], and for the end of its output;
    /// returns the exit code.
    pub(crate) fn wait_exit(&mut self) -> Option<i32> {
        let code = self.running.wait_timeout(WAIT).code();
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        code
    }
}
