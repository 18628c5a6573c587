//! A program run interactively in a terminal: a tmux server of its own
//! (`tmux -S <socket>`), one session of fixed size, read with
//! `capture-pane` and typed into with `send-keys`. Dropping it ends the
//! program and the server.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The server's configuration: no status line (the pane is the whole
/// window), and a pane that stays readable after its program exits.
const CONFIG: &str = "set -g status off\nset -g remain-on-exit on\n";

/// The session's name on the private server.
const SESSION: &str = "test";

/// A running program in its terminal.
pub(crate) struct Terminal {
    socket: PathBuf,
    config: PathBuf,
    /// The program's pid (the pane's process).
    pid: u32,
}

impl Terminal {
    /// Starts `program` in a `width`×`height` terminal in `cwd`, with the
    /// test's environment changed by `configure`; `dir` holds the server's
    /// socket and configuration.
    pub(crate) fn start(
        dir: &Path,
        cwd: &Path,
        (width, height): (u16, u16),
        program: &[&str],
        configure: impl FnOnce(&mut Command),
    ) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let config = dir.join("tmux.conf");
        std::fs::write(&config, CONFIG).unwrap();
        let mut terminal = Self {
            socket: dir.join("tmux.sock"),
            config,
            pid: 0,
        };
        // The server starts with this client's environment, and the
        // session's program inherits it.
        let mut command = terminal.tmux();
        command
            .args(["new-session", "-d", "-s", SESSION])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            .arg("-c")
            .arg(cwd)
            .arg("--")
            .args(program)
            .env_remove("TMUX");
        configure(&mut command);
        check(&command.output().unwrap(), "tmux new-session");
        let pid = terminal.run(&["display-message", "-p", "-t", SESSION, "#{pane_pid}"]);
        terminal.pid = pid.trim().parse().unwrap();
        terminal
    }

    fn tmux(&self) -> Command {
        let mut command = Command::new("tmux");
        command
            .arg("-S")
            .arg(&self.socket)
            .arg("-f")
            .arg(&self.config);
        command
    }

    fn run(&self, args: &[&str]) -> String {
        let output = self.tmux().args(args).output().unwrap();
        check(&output, &format!("tmux {}", args.join(" ")));
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The program's pid.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Types `text` literally.
    pub(crate) fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", SESSION, "-l", text]);
    }

    /// Presses one key, in tmux's names (`Enter`, `Escape`, `C-c`).
    pub(crate) fn press(&self, key: &str) {
        self.run(&["send-keys", "-t", SESSION, key]);
    }

    /// What the terminal shows now, blank lines left out.
    pub(crate) fn screen(&self) -> String {
        let shown = self.run(&["capture-pane", "-p", "-t", SESSION]);
        shown
            .lines()
            .filter(|line| !line.trim().is_empty())
            .fold(String::new(), |mut out, line| {
                out.push_str(line.trim_end());
                out.push('\n');
                out
            })
    }

    /// Waits until the screen shows `text`, at most `limit`; returns the
    /// screen. `explain` adds to the failure message.
    pub(crate) fn wait_for(
        &self,
        text: &str,
        limit: Duration,
        explain: impl Fn() -> String,
    ) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < limit,
                "the terminal never showed {text:?} in {limit:?}; it shows:\n{screen}\n{}",
                explain()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        // The program first, so it cannot outlive the server's hang-up.
        if self.pid != 0 {
            let _ = Command::new("kill")
                .args(["-TERM", &self.pid.to_string()])
                .status();
            let start = Instant::now();
            while !super::is_dead(self.pid) && start.elapsed() < Duration::from_secs(3) {
                std::thread::sleep(Duration::from_millis(20));
            }
            if !super::is_dead(self.pid) {
                let _ = Command::new("kill")
                    .args(["-KILL", &self.pid.to_string()])
                    .status();
            }
        }
        let _ = self.tmux().arg("kill-server").output();
    }
}

fn check(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
