//! A real Kakoune (2022.10+) with kak-lsp, whose language servers run
//! through `ide-mcp lsp-proxy` as the README's `kak-lsp.toml` says: one
//! `kak -ui json` process, the editor with its JSON user interface instead
//! of a terminal (keys typed to its stdin; the menus and info boxes it
//! draws read from its stdout), asked for its state with `kak -p SESSION`
//! (each answer written to a file with `echo -to-file`).

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::lsp::Place;
use super::{ANSWER, Running, bin};

/// How long Kakoune may take to open its session.
const START: Duration = Duration::from_mins(1);

/// The README's heading of Kakoune's configuration.
const README_HEADING: &str = "**Kakoune** kak-lsp (`kak-lsp.toml`):";

/// The `kakrc`, as kak-lsp's README gives it (and ours refers to), with
/// `options` between its two lines (kak-lsp's own server starts at
/// `lsp-enable`, with the options set by then).
fn kakrc(options: &str) -> String {
    format!("eval %sh{{kak-lsp}}\n{options}lsp-enable\n")
}

/// The README's `kak-lsp.toml`, word for word: the first ```` ```toml ````
/// block after its Kakoune heading.
pub(crate) fn readme_kak_lsp_toml() -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    let (_, after) = readme
        .split_once(README_HEADING)
        .unwrap_or_else(|| panic!("README.md has no {README_HEADING:?}"));
    let (_, block) = after.split_once("```toml\n").expect("a toml block");
    let (toml, _) = block.split_once("```").expect("the block's end");
    toml.to_owned()
}

/// `text` as a Kakoune single-quoted string: `'` doubled, nothing expanded.
pub(crate) fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The words of an `echo -quoting kakoune` line: `'a' 'b''c'` is `a`, `b'c`.
fn unquote(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\n' => {}
            '\'' => {
                let mut word = String::new();
                loop {
                    match chars.next() {
                        Some('\'') if chars.peek() == Some(&'\'') => {
                            chars.next();
                            word.push('\'');
                        }
                        Some('\'') | None => break,
                        Some(other) => word.push(other),
                    }
                }
                words.push(word);
            }
            other => panic!("not kakoune quoting at {other:?}: {line:?}"),
        }
    }
    words
}

/// The parent of process `pid`.
fn parent(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // `pid (comm) state ppid …`; `comm` may hold spaces and parentheses.
    let after = stat.rsplit_once(')').unwrap().1;
    after.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// What Kakoune drew on its JSON user interface.
#[derive(Debug, Default)]
pub(crate) struct Ui {
    /// The items of the menu shown now, if one is.
    pub(crate) menu: Option<Vec<String>>,
    /// The info box shown now, if one is: its title and its lines.
    pub(crate) info: Option<(String, String)>,
    /// The mode line (the right of the status bar).
    pub(crate) mode_line: String,
}

/// The text of a JSON UI `Line` (an array of atoms).
fn line_text(line: &Value) -> String {
    line.as_array()
        .map(|atoms| {
            atoms
                .iter()
                .filter_map(|atom| atom["contents"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

impl Ui {
    /// Takes in one request of Kakoune's to its JSON UI.
    fn apply(&mut self, request: &Value) {
        let params = &request["params"];
        match request["method"].as_str() {
            Some("menu_show") => {
                let items = params[0]
                    .as_array()
                    .map(|items| items.iter().map(line_text).collect());
                self.menu = items;
            }
            Some("menu_hide") => self.menu = None,
            Some("info_show") => {
                let lines: Vec<String> = params[1]
                    .as_array()
                    .map(|lines| lines.iter().map(line_text).collect())
                    .unwrap_or_default();
                self.info = Some((line_text(&params[0]), lines.join("\n")));
            }
            Some("info_hide") => self.info = None,
            Some("draw_status") => self.mode_line = line_text(&params[1]),
            _ => {}
        }
    }
}

/// A running Kakoune, its one client named `main`.
pub(crate) struct Kakoune {
    pub(crate) running: Running,
    ui_input: Mutex<ChildStdin>,
    ui: Arc<Mutex<Ui>>,
    session: String,
    scratch: PathBuf,
    runtime: PathBuf,
    /// The proxies' (and their host's) `--log` file.
    pub(crate) log: PathBuf,
    queries: AtomicU32,
}

impl Kakoune {
    /// Starts Kakoune in `workspace` with `place`'s directories; `name`
    /// names its session and the directory of `place` that holds its
    /// `HOME`, its configuration (the kakrc and the README's
    /// `kak-lsp.toml`) and the `ide-mcp` it finds on its `PATH`: the built
    /// binary, whose hosts linger `linger` seconds, logging to one file.
    /// `options` are set in the kakrc before `lsp-enable`.
    pub(crate) fn start(
        place: &Place,
        workspace: &Path,
        name: &str,
        linger: u64,
        options: &str,
    ) -> Self {
        let scratch = place.dir.path().join(name);
        let config = scratch.join("config");
        for dir in ["kak", "kak-lsp"] {
            std::fs::create_dir_all(config.join(dir)).unwrap();
        }
        std::fs::write(config.join("kak/kakrc"), kakrc(options)).unwrap();
        std::fs::write(config.join("kak-lsp/kak-lsp.toml"), readme_kak_lsp_toml()).unwrap();
        let log = scratch.join("proxy.log");
        let wrappers = scratch.join("bin");
        std::fs::create_dir_all(&wrappers).unwrap();
        let wrapper = wrappers.join("ide-mcp");
        ide_mcp_test_support::write_script(
            &wrapper,
            &format!(
                "#!/bin/sh\nsubcommand=$1\nshift\nexec '{}' \"$subcommand\" --linger {linger} --log '{}' \"$@\"\n",
                bin(),
                log.display()
            ),
        );
        // Kakoune's session socket and kak-lsp's files go under it too.
        let runtime = place.runtime();
        std::fs::create_dir_all(&runtime).unwrap();
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        let path = std::env::join_paths(
            std::iter::once(wrappers)
                .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();

        let mut command = Command::new("kak");
        command
            .args(["-ui", "json", "-s", name, "-e", "rename-client main"])
            .env("HOME", &scratch)
            .env("XDG_CONFIG_HOME", &config)
            .env("PATH", path)
            .env_remove("KAKOUNE_CONFIG_DIR")
            .current_dir(workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        place.environment(&mut command);
        let mut running = Running::spawn(command);
        let ui_input = running.child.stdin.take().unwrap();
        let stdout = running.child.stdout.take().unwrap();
        let ui = Arc::new(Mutex::new(Ui::default()));
        let drawn = Arc::clone(&ui);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(request) = serde_json::from_str::<Value>(&line) {
                    drawn.lock().unwrap().apply(&request);
                }
            }
        });
        let kakoune = Self {
            running,
            ui_input: Mutex::new(ui_input),
            ui,
            session: name.to_owned(),
            scratch,
            runtime,
            log,
            queries: AtomicU32::new(0),
        };
        kakoune.request("resize", &json!([50, 160]));
        let socket = kakoune.runtime.join("kakoune").join(name);
        let start = Instant::now();
        while !socket.exists() {
            kakoune.running_or_panic();
            assert!(
                start.elapsed() < START,
                "no Kakoune session; stderr: {}",
                kakoune.running.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(kakoune.values("", "%val{client}"), ["main"]);
        kakoune
    }

    fn running_or_panic(&self) {
        // `Running::assert_running` needs `&mut`; the pid is enough here.
        assert!(
            !super::is_dead(self.running.child.id()),
            "Kakoune exited; stderr: {}",
            self.running.stderr()
        );
    }

    /// Writes one JSON-RPC request to Kakoune's JSON UI.
    fn request(&self, method: &str, params: &Value) {
        let mut line = json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string();
        line.push('\n');
        let mut input = self.ui_input.lock().unwrap();
        input.write_all(line.as_bytes()).unwrap();
        input.flush().unwrap();
    }

    /// Types `keys` (Kakoune's key names: `x`, `<ret>`, `<esc>`...).
    pub(crate) fn keys(&self, keys: &[&str]) {
        self.request("keys", &json!(keys));
    }

    /// Types `:` `command` `<ret>`, as a user runs a command.
    pub(crate) fn command_line(&self, command: &str) {
        let mut keys = vec![":".to_owned()];
        keys.extend(command.chars().map(|c| match c {
            ' ' => "<space>".to_owned(),
            '<' => "<lt>".to_owned(),
            '>' => "<gt>".to_owned(),
            '-' => "<minus>".to_owned(),
            c => c.to_string(),
        }));
        keys.push("<ret>".to_owned());
        self.request("keys", &json!(keys));
    }

    /// Picks item `index` of the menu shown, types `<ret>`, and waits
    /// for the menu to close.
    pub(crate) fn pick(&self, index: usize) {
        self.request("menu_select", &json!([index]));
        self.keys(&["<ret>"]);
        self.wait_ui(ANSWER, |ui| ui.menu.is_none().then_some(()));
    }

    /// A key the user presses that changes nothing (`<esc>` in normal
    /// mode): Kakoune runs its `NormalIdle` hooks once it has waited
    /// `idle_timeout` for another, as after any key; kak-lsp's send the
    /// buffer's changes and ask for the code actions at the selection
    /// (its modeline's light bulb).
    pub(crate) fn idle(&self) {
        self.keys(&["<esc>"]);
    }

    /// A key ([`idle`](Self::idle)), then waits until kak-lsp has sent the
    /// current buffer's text as it is now (its `lsp_timestamp`, set as it
    /// sends a `didChange`, is the buffer's `%val{timestamp}`): as a user
    /// who pauses before going to another buffer.
    pub(crate) fn idle_synced(&self) {
        self.synced(ANSWER);
    }

    /// [`idle_synced`](Self::idle_synced), waiting at most `limit` (the
    /// first buffer waits for kak-lsp's server to start). One key: Kakoune
    /// runs its idle hooks once no key came for `idle_timeout`.
    pub(crate) fn synced(&self, limit: Duration) {
        let start = Instant::now();
        self.idle();
        loop {
            let [sent, now] =
                <[String; 2]>::try_from(self.values("", "%opt{lsp_timestamp} %val{timestamp}"))
                    .unwrap();
            if sent == now {
                return;
            }
            assert!(
                start.elapsed() < limit,
                "kak-lsp never sent timestamp {now} (sent {sent}); *debug*: {}",
                self.debug_buffer()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What the user interface shows now.
    pub(crate) fn ui<T>(&self, read: impl FnOnce(&Ui) -> T) -> T {
        read(&self.ui.lock().unwrap())
    }

    /// Runs `commands` in the client's context, then returns the values
    /// of `expansions` there (`%val{bufname} %opt{filetype}`...), one
    /// string each.
    ///
    /// # Panics
    ///
    /// When a command fails (with Kakoune's error), or no answer comes
    /// within [`ANSWER`].
    pub(crate) fn values(&self, commands: &str, expansions: &str) -> Vec<String> {
        let n = self.queries.fetch_add(1, Ordering::Relaxed);
        let out = self.scratch.join(format!("answer-{n}"));
        let done = self.scratch.join(format!("answer-{n}.done"));
        let (out_q, done_q) = (quote(out.to_str().unwrap()), quote(done.to_str().unwrap()));
        let body = format!("{commands}\necho -to-file {out_q} -quoting kakoune -- ok {expansions}");
        let failed = format!("echo -to-file {out_q} -quoting kakoune -- error %val{{error}}");
        let inner = format!(
            "try {} catch {}\necho -to-file {done_q} done",
            quote(&body),
            quote(&failed)
        );
        let payload = format!("evaluate-commands -client main {}", quote(&inner));
        let mut command = Command::new("kak");
        command
            .arg("-p")
            .arg(&self.session)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .stdin(Stdio::piped());
        let mut sender = command.spawn().unwrap();
        sender
            .stdin
            .take()
            .unwrap()
            .write_all(payload.as_bytes())
            .unwrap();
        assert!(sender.wait().unwrap().success(), "kak -p {}", self.session);
        let start = Instant::now();
        while !done.exists() {
            self.running_or_panic();
            assert!(
                start.elapsed() < ANSWER,
                "Kakoune never answered {commands:?} {expansions:?}; stderr: {}",
                self.running.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let answer = std::fs::read_to_string(&out).unwrap();
        let _ = std::fs::remove_file(&out);
        let _ = std::fs::remove_file(&done);
        let mut words = unquote(&answer);
        match words.first().map(String::as_str) {
            Some("ok") => words.split_off(1),
            _ => panic!("Kakoune: {commands:?} failed: {words:?}"),
        }
    }

    /// Runs `commands` in the client's context.
    pub(crate) fn run(&self, commands: &str) {
        self.values(commands, "");
    }

    /// `:edit path`, then a key (as after typing the command).
    pub(crate) fn open(&self, path: &Path) {
        self.run(&format!("edit {}", quote(path.to_str().unwrap())));
        self.idle();
    }

    /// The text of the buffer of `path`.
    pub(crate) fn text(&self, path: &Path) -> String {
        let mut text = self.values(
            &format!(
                "evaluate-commands -buffer {} %{{ execute-keys '%'; set-register a %val{{selection}} }}",
                quote(path.to_str().unwrap())
            ),
            "%reg{a}",
        );
        text.remove(0)
    }

    /// Whether the buffer of `path` has unsaved changes.
    pub(crate) fn modified(&self, path: &Path) -> bool {
        let modified = self.values(
            &format!(
                "evaluate-commands -buffer {} %{{ set-register a %val{{modified}} }}",
                quote(path.to_str().unwrap())
            ),
            "%reg{a}",
        );
        modified == ["true"]
    }

    /// Shows the buffer of `path` and replaces its whole text with `text`
    /// (`%`, then `R` with `text` yanked), unsaved; then a key.
    pub(crate) fn set_text(&self, path: &Path, text: &str) {
        self.run(&format!(
            "buffer {}\nexecute-keys '%'\nset-register dquote {}\nexecute-keys R",
            quote(path.to_str().unwrap()),
            quote(text)
        ));
        self.idle_synced();
    }

    /// Shows the buffer of `path` and replaces line `line` (0-based) with
    /// `text` (`x` selects the line, `R` puts `text` and a newline),
    /// unsaved; then a key.
    pub(crate) fn replace_line(&self, path: &Path, line: u32, text: &str) {
        self.run(&format!(
            "buffer {}\nselect {}.1,{}.1\nexecute-keys x\nset-register dquote {}\nexecute-keys R",
            quote(path.to_str().unwrap()),
            line + 1,
            line + 1,
            quote(&format!("{text}\n"))
        ));
        self.idle_synced();
    }

    /// `:write` in the buffer of `path`.
    pub(crate) fn save(&self, path: &Path) {
        self.run(&format!("buffer {}\nwrite", quote(path.to_str().unwrap())));
        assert!(!self.modified(path));
    }

    /// Shows the buffer of `path` and selects `length` bytes from `line`,
    /// `column` (0-based); then a key, after which kak-lsp asks the server
    /// for the code actions there. Returns the selection's text.
    pub(crate) fn select(&self, path: &Path, line: u32, column: u32, length: u32) -> String {
        let mut text = self.values(
            &format!(
                "buffer {}\nselect {}.{},{}.{}",
                quote(path.to_str().unwrap()),
                line + 1,
                column + 1,
                line + 1,
                column + length
            ),
            "%val{selection}",
        );
        self.idle();
        text.remove(0)
    }

    /// Runs `command` (`lsp-code-actions`...) and waits for the menu it
    /// shows; returns its items.
    pub(crate) fn menu_of(&self, command: &str, limit: Duration) -> Vec<String> {
        self.ui(|ui| assert_eq!(ui.menu, None, "a menu is open already"));
        self.run(command);
        self.wait_ui(limit, |ui| ui.menu.clone())
    }

    /// Waits (at most `limit`) until `ready` gives a value of what the UI
    /// shows.
    pub(crate) fn wait_ui<T>(&self, limit: Duration, ready: impl Fn(&Ui) -> Option<T>) -> T {
        let start = Instant::now();
        loop {
            if let Some(found) = self.ui(&ready) {
                return found;
            }
            self.running_or_panic();
            assert!(
                start.elapsed() < limit,
                "Kakoune never shows it: {:?}; *debug*: {}; proxy log: {}",
                self.ui(|ui| format!("{ui:?}")),
                self.debug_buffer(),
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The `*debug*` buffer's text (kak-lsp logs there).
    pub(crate) fn debug_buffer(&self) -> String {
        self.text(Path::new("*debug*"))
    }

    /// The lines of the `*diagnostics*` buffer that `lsp-diagnostics`
    /// fills (`main.c:3:10: error: …`: what the user reads), once it
    /// holds a line matching `done`; then back to the buffer of `path`.
    pub(crate) fn diagnostics_list(
        &self,
        path: &Path,
        limit: Duration,
        done: impl Fn(&[String]) -> bool,
    ) -> Vec<String> {
        let start = Instant::now();
        let file = quote(path.to_str().unwrap());
        loop {
            // kak-lsp answers later, showing `*diagnostics*` made anew in
            // the client (`edit! -scratch`, then the text): once it shows,
            // the text is there.
            self.run(&format!(
                "try %{{ delete-buffer *diagnostics* }}\nbuffer {file}\nlsp-diagnostics"
            ));
            let shown = Instant::now();
            while self.values("", "%val{bufname}") != ["*diagnostics*"] {
                assert!(
                    shown.elapsed() < ANSWER,
                    "kak-lsp never showed *diagnostics*"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            let listed = self.values(
                "execute-keys '%'\nset-register a %val{selection}",
                "%reg{a}",
            );
            self.run(&format!("buffer {file}"));
            let lines: Vec<String> = listed[0].lines().map(str::to_owned).collect();
            if done(&lines) {
                return lines;
            }
            assert!(
                start.elapsed() < limit,
                "*diagnostics* never as expected: {lines:?}; proxy log: {}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The pids of the proxies kak-lsp runs (the processes whose command
    /// line is `ide-mcp lsp-proxy … --log <this Kakoune's log>`).
    pub(crate) fn proxies(&self) -> Vec<u32> {
        let log = self.log.to_str().unwrap();
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|entry| {
                let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
                let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
                let proxy = args.get(1) == Some(&b"lsp-proxy".as_slice())
                    && args.contains(&log.as_bytes())
                    && !super::is_dead(pid);
                proxy.then_some(pid)
            })
            .collect()
    }

    /// The kak-lsp processes of this Kakoune's (those with its
    /// `XDG_RUNTIME_DIR`), alive.
    fn kak_lsps(&self) -> Vec<u32> {
        let runtime = format!("XDG_RUNTIME_DIR={}", self.runtime.display());
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|entry| {
                let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
                let program = cmdline.split(|&b| b == 0).next()?;
                if !program.ends_with(b"kak-lsp") || super::is_dead(pid) {
                    return None;
                }
                let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
                environ
                    .split(|&b| b == 0)
                    .any(|var| var == runtime.as_bytes())
                    .then_some(pid)
            })
            .collect()
    }

    /// The process that runs the proxies: kak-lsp's server, which
    /// detaches from Kakoune (`kak-lsp --daemonize`).
    pub(crate) fn kak_lsp(&self) -> u32 {
        let proxies = self.proxies();
        let parents: Vec<u32> = proxies.iter().map(|&pid| parent(pid)).collect();
        assert!(
            !parents.is_empty() && parents.iter().all(|&p| p == parents[0]),
            "proxies {proxies:?}, their parents {parents:?}"
        );
        parents[0]
    }

    /// SIGKILL, and waits for the exit.
    pub(crate) fn kill(&mut self) {
        self.running.child.kill().unwrap();
        self.running.child.wait().unwrap();
    }

    /// Types `:command<ret>` (`kill`, `quit!`...) and waits (at most
    /// `limit`) for Kakoune to exit.
    pub(crate) fn quit_with(&mut self, command: &str, limit: Duration) {
        self.command_line(command);
        self.running.wait_timeout(limit);
    }
}

impl Drop for Kakoune {
    /// kak-lsp outlives a Kakoune that did not end by itself (a failed
    /// test's): ended, its servers' input ends, and their proxies end.
    fn drop(&mut self) {
        for pid in self.kak_lsps() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}
