//! Driving `ide-mcp lsp-proxy` as an editor does: its stdin and stdout are
//! the editor's end of the LSP wire.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Running, bin};

/// How long any wait of the proxy tests may take.
pub(crate) const WAIT: Duration = Duration::from_secs(20);

/// One LSP message: `Content-Length` header and `value` as the body.
pub(crate) fn message(value: &Value) -> Vec<u8> {
    let body = value.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

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

/// A temporary directory with Claude Code's configuration directory and a
/// workspace.
pub(crate) struct Place {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) workspace: PathBuf,
}

impl Place {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        Self { dir, workspace }
    }

    pub(crate) fn config(&self) -> PathBuf {
        self.dir.path().join("config")
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
        std::fs::read_dir(self.config().join("ide")).map_or_else(
            |_| Vec::new(),
            |entries| {
                entries
                    .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            },
        )
    }

    /// `ide-mcp lsp-proxy [extra] -- server...` with this configuration.
    pub(crate) fn proxy(&self, extra: &[&str], server: &[&str]) -> Proxy {
        let mut command = Command::new(bin());
        command
            .arg("lsp-proxy")
            .args(extra)
            .arg("--")
            .args(server)
            .env("CLAUDE_CONFIG_DIR", self.config())
            .env("RUST_LOG", "debug")
            .current_dir(&self.workspace);
        Proxy::spawn(command)
    }

    /// The echo server (`ide-mcp lsp-echo`) with `args`.
    pub(crate) fn echo<'a>(args: &[&'a str]) -> Vec<&'a str> {
        let mut server = vec![bin(), "lsp-echo"];
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
