//! Long sessions: the real `claude` CLI, in a terminal, makes ten edits in
//! a row to two files open in a real editor (Neovim; Emacs with
//! `global-auto-revert-mode`; Kakoune with kak-lsp and `autoreload` set to
//! `yes`), their clangd through `ide-mcp lsp-proxy`.
//! The edits mix the CLI's default auto mode (it writes at once, with no
//! `openDiff`: the editor shows the write and marks it, and the user keeps
//! or reverts it hunk by hunk) and its manual mode (the edit is reviewed in
//! the editor: accepted, partly accepted, rejected, reviewed while the user
//! types in the other file); one file is closed and opened again. After
//! each step the editor's buffers, the files on disk and the IDE's tools
//! agree exactly, no marker is left that should not be, and the host's
//! memory stays flat (RELIABILITY.md, "Long sessions").
//!
//! The model is the loopback stand-in of the Messages API
//! (`common::model`), one scripted turn per prompt; nothing leaves the
//! machine. Needs `claude`, `tmux`, `nvim`, `emacs` with eglot, `kak` and
//! `kak-lsp`, `clangd` and `pyright-langserver` (`tests/lsp/install.sh` installs them); without
//! them the test fails, unless the install script found a registry
//! unreachable (`IDE_MCP_LSP_MISSING=1`): then it says it skipped.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::claude::Deadline;
use common::emacs::Emacs;
use common::ide::{SERVER, client_of, until};
use common::kakoune::{Kakoune, quote};
use common::lsp::Place;
use common::model::{ModelStandIn, Script, ToolCall};
use common::neovim::Neovim;
use common::tmux::Terminal;
use common::ws::WsClient;
use serde_json::json;

/// The whole session, start to end, on a loaded machine.
const TOTAL: Duration = Duration::from_mins(12);

const MAIN_0: &str = "#include <stdio.h>\n\nint add(int a, int b) {\n  return a + b;\n}\n\nint main(void) {\n  int value = add(1, 2);\n  return value;\n}\n";
const UTIL_0: &str =
    "int twice(int x) {\n  return 2 * x;\n}\n\nint thrice(int x) {\n  return 3 * x;\n}\n";
/// What the user types in `util.c` while Claude's edit of `main.c` is
/// under review.
const TYPED: &str = "// the user's note\n";

/// The two files of the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum File {
    Main,
    Util,
}

/// The CLI's permission mode for a step, as its status line names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// The CLI's default: it writes at once.
    Auto,
    /// It asks first, in the terminal and in the IDE (`openDiff`).
    Manual,
}

impl Mode {
    fn status(self) -> &'static str {
        match self {
            Self::Auto => "auto mode on",
            Self::Manual => "manual mode on",
        }
    }
}

/// What the user does with the edit, in the editor.
#[derive(Clone, Copy, Debug)]
enum Decision {
    /// Auto mode: "Claude: keep all" once the write is marked.
    KeepAll,
    /// Auto mode: "Claude: keep this change" on the marker at this line.
    Keep(u32),
    /// Auto mode: "Claude: revert this change" on the marker at this line,
    /// then saves: the file is as before the write.
    RevertAndSave(u32),
    /// Manual mode: every hunk accepted.
    Accept,
    /// Manual mode: the hunk at the first line accepted, the one at the
    /// second rejected.
    Partly(u32, u32),
    /// Manual mode: every hunk rejected.
    Reject,
    /// Manual mode: accepted while the user has typed [`TYPED`] in the
    /// other file, unsaved; saved afterwards.
    AcceptWhileTyping,
}

/// One of Claude's edits: `old` replaced by `new` in `file` (the CLI's
/// `Edit` tool), in `mode`, decided as `decision` says.
struct Step {
    file: File,
    old: &'static str,
    new: &'static str,
    mode: Mode,
    decision: Decision,
    /// How many markers (auto) or hunks (manual) the editor shows of it.
    hunks: usize,
}

/// The session: ten edits, and `util.c` closed and opened again after the
/// sixth.
const STEPS: [Step; 10] = [
    Step {
        file: File::Main,
        old: "  return a + b;",
        new: "  return a + b; /* one */",
        mode: Mode::Auto,
        decision: Decision::KeepAll,
        hunks: 1,
    },
    Step {
        file: File::Main,
        old: "  int value = add(1, 2);",
        new: "  int value = add(2, 2);",
        mode: Mode::Auto,
        decision: Decision::Keep(7),
        hunks: 1,
    },
    Step {
        file: File::Util,
        old: "  return 2 * x;",
        new: "  return x + x;",
        mode: Mode::Manual,
        decision: Decision::Accept,
        hunks: 1,
    },
    Step {
        file: File::Main,
        old: "  return a + b; /* one */\n}\n\nint main(void) {\n  int value = add(2, 2);",
        new: "  return a + b; /* two */\n}\n\nint main(void) {\n  int value = add(3, 3);",
        mode: Mode::Manual,
        decision: Decision::Partly(3, 7),
        hunks: 2,
    },
    Step {
        file: File::Util,
        old: "  return 3 * x;",
        new: "  return x * 3;",
        mode: Mode::Manual,
        decision: Decision::Reject,
        hunks: 1,
    },
    Step {
        file: File::Main,
        old: "  return value;",
        new: "  return value + 0;",
        mode: Mode::Manual,
        decision: Decision::AcceptWhileTyping,
        hunks: 1,
    },
    Step {
        file: File::Util,
        old: "int thrice(int x) {\n  return 3 * x;",
        new: "int thrice(int x) {\n  return x + x + x;",
        mode: Mode::Auto,
        decision: Decision::RevertAndSave(5),
        hunks: 1,
    },
    Step {
        file: File::Main,
        old: "  return value + 0;\n}",
        new: "  return value + 0;\n}\n/* nine */",
        mode: Mode::Auto,
        decision: Decision::KeepAll,
        hunks: 1,
    },
    Step {
        file: File::Util,
        old: "  return x + x;",
        new: "  return x << 1;",
        mode: Mode::Manual,
        decision: Decision::Accept,
        hunks: 1,
    },
    Step {
        file: File::Main,
        old: "int add(int a, int b) {",
        new: "static int add(int a, int b) {",
        mode: Mode::Auto,
        decision: Decision::KeepAll,
        hunks: 1,
    },
];

/// After which step `util.c` is closed and opened again.
const REOPEN_AFTER: usize = 6;

/// What the session needs of an editor.
trait Desk {
    /// The name the CLI gives the IDE ("Opened changes in <name>").
    fn name(&self) -> &'static str;
    /// Opens `path` and waits until its language server has it.
    fn open(&self, path: &Path, limit: Duration);
    /// Closes the (saved) buffer of `path`.
    fn close(&self, path: &Path);
    /// The text of the buffer of `path`.
    fn text(&self, path: &Path) -> String;
    /// The first lines (0-based, sorted) of the agents' diagnostics of
    /// `path`: review hunks and after-the-fact markers.
    fn markers(&self, path: &Path) -> Vec<u32>;
    /// Picks the code action `title` at `line` of `path`, as the user does.
    fn act(&self, path: &Path, line: u32, title: &str);
    /// The user comes back to the editor after Claude wrote `path` (Neovim
    /// reloads a clean buffer as it gets the focus: `:checktime`; Emacs's
    /// auto-revert needs nothing).
    fn focus(&self, path: &Path);
    /// Sets the whole text of the buffer of `path`, unsaved.
    fn type_text(&self, path: &Path, text: &str);
    /// Saves the buffer of `path`.
    fn save(&self, path: &Path);
    /// The questions the editor asked so far (none in Neovim).
    fn questions(&self) -> Vec<String>;
    /// Whether the editor saves a clean buffer that a server's edit
    /// (`workspace/applyEdit`) changes, as kak-lsp does: a revert then
    /// reaches the disk at once.
    fn saves_server_edits(&self) -> bool {
        false
    }
    /// The editor's process.
    fn process(&self) -> &common::Running;
    /// The proxies' (and their host's) log.
    fn log(&self) -> &Path;
}

impl Desk for Neovim {
    fn name(&self) -> &'static str {
        "Neovim"
    }

    fn open(&self, path: &Path, limit: Duration) {
        self.command(&format!("edit {}", path.display()));
        self.wait_lua(
            &format!(
                "#vim.lsp.buf_get_clients(vim.fn.bufnr('{}')) == 1",
                path.display()
            ),
            limit,
        );
    }

    fn close(&self, path: &Path) {
        self.command(&format!("bwipeout {}", path.display()));
    }

    fn text(&self, path: &Path) -> String {
        let lines = self.lua(&format!(
            "vim.fn.json_encode(vim.api.nvim_buf_get_lines(vim.fn.bufnr('{}'), 0, -1, false))",
            path.display()
        ));
        let lines: Vec<String> = serde_json::from_str(lines.trim()).unwrap();
        lines
            .iter()
            .flat_map(|line| [line.as_str(), "\n"])
            .collect()
    }

    fn markers(&self, path: &Path) -> Vec<u32> {
        let lines = self.lua(&format!(
            "(function() local lines = {{}}; \
             for _, d in ipairs(vim.diagnostic.get(vim.fn.bufnr('{}'))) do \
             if d.source == 'Claude Code' then table.insert(lines, d.lnum) end end; \
             table.sort(lines); return vim.fn.json_encode(lines) end)()",
            path.display()
        ));
        // An empty Lua table encodes as `{}`.
        serde_json::from_str(lines.trim()).unwrap_or_default()
    }

    fn act(&self, path: &Path, line: u32, title: &str) {
        self.command(&format!("buffer {}", path.display()));
        self.run_action(line, title);
    }

    fn focus(&self, path: &Path) {
        self.command(&format!("checktime {}", path.display()));
    }

    fn type_text(&self, path: &Path, text: &str) {
        let lines: Vec<&str> = text.lines().collect();
        self.lua(&format!(
            "vim.api.nvim_buf_set_lines(vim.fn.bufnr('{}'), 0, -1, false, vim.fn.json_decode([==[{}]==]))",
            path.display(),
            serde_json::to_string(&lines).unwrap()
        ));
    }

    fn save(&self, path: &Path) {
        self.command(&format!("buffer {}", path.display()));
        self.command("write");
    }

    fn questions(&self) -> Vec<String> {
        Vec::new()
    }

    fn process(&self) -> &common::Running {
        &self.running
    }

    fn log(&self) -> &Path {
        &self.log
    }
}

impl Desk for Emacs {
    fn name(&self) -> &'static str {
        "Emacs"
    }

    fn open(&self, path: &Path, limit: Duration) {
        Emacs::open(self, path, limit);
    }

    fn close(&self, path: &Path) {
        self.eval(&format!(
            "(kill-buffer (get-file-buffer {}))",
            common::emacs::lisp_string(path.to_str().unwrap())
        ));
    }

    fn text(&self, path: &Path) -> String {
        Emacs::text(self, path)
    }

    fn markers(&self, path: &Path) -> Vec<u32> {
        let mut lines: Vec<u32> = self
            .flymake(path)
            .into_iter()
            .filter(|(_, _, lsp)| lsp["source"] == "Claude Code")
            .map(|(line, _, _)| line)
            .collect();
        lines.sort_unstable();
        lines
    }

    fn act(&self, path: &Path, line: u32, title: &str) {
        self.select(path, line, 0, 1);
        let (_, menu) = self.pick_code_action(path, title);
        assert!(menu.iter().any(|m| m == title), "{title} not in {menu:?}");
    }

    fn focus(&self, _path: &Path) {}

    fn type_text(&self, path: &Path, text: &str) {
        self.set_text(path, text);
    }

    fn save(&self, path: &Path) {
        Emacs::save(self, path);
    }

    fn questions(&self) -> Vec<String> {
        self.confirmations()
    }

    fn process(&self) -> &common::Running {
        &self.running
    }

    fn log(&self) -> &Path {
        &self.log
    }
}

/// Kakoune with `autoreload` set to `yes` (the README's advice: no
/// question), and what it asked as the user came back to a buffer.
struct KakouneDesk {
    kak: Kakoune,
    asked: Mutex<Vec<String>>,
}

impl KakouneDesk {
    /// Shows the buffer of `path` and waits (at most `limit`) until kak-lsp
    /// has sent its text as it is now.
    fn synced(&self, path: &Path, limit: Duration) {
        self.kak
            .run(&format!("buffer {}", quote(path.to_str().unwrap())));
        self.kak.synced(limit);
    }
}

impl Desk for KakouneDesk {
    fn name(&self) -> &'static str {
        "Kakoune"
    }

    fn open(&self, path: &Path, limit: Duration) {
        self.kak.open(path);
        self.synced(path, limit);
    }

    fn close(&self, path: &Path) {
        self.kak
            .run(&format!("delete-buffer {}", quote(path.to_str().unwrap())));
    }

    fn text(&self, path: &Path) -> String {
        self.kak.text(path)
    }

    /// From kak-lsp's `*diagnostics*` (`main.c:3:10: [Claude Code] …`).
    fn markers(&self, path: &Path) -> Vec<u32> {
        let file = path.file_name().unwrap().to_str().unwrap();
        let listed = self.kak.diagnostics_list(path, SERVER, |_| true);
        let mut lines: Vec<u32> = listed
            .iter()
            .filter(|line| line.contains("[Claude Code]"))
            .filter_map(|line| line.strip_prefix(&format!("{file}:")))
            .map(|rest| rest.split(':').next().unwrap().parse::<u32>().unwrap() - 1)
            .collect();
        lines.sort_unstable();
        lines
    }

    /// From `:lsp-code-actions`'s menu, one byte selected at the line's
    /// start.
    fn act(&self, path: &Path, line: u32, title: &str) {
        self.kak.select(path, line, 0, 1);
        let menu = self.kak.menu_of("lsp-code-actions", SERVER);
        let index = menu
            .iter()
            .position(|item| item == title)
            .unwrap_or_else(|| panic!("{title} not in {menu:?}"));
        self.kak.pick(index);
    }

    /// Shows the buffer and presses a key: Kakoune looks at the file as it
    /// handles a key of the client showing it, and reloads it (a question
    /// shown instead is kept, and answered yes); then until kak-lsp has
    /// sent the text.
    fn focus(&self, path: &Path) {
        let start = Instant::now();
        let disk = read(path);
        self.kak
            .run(&format!("buffer {}", quote(path.to_str().unwrap())));
        loop {
            self.kak.idle();
            if let Some((title, text)) = self.kak.ui(|ui| ui.info.clone()) {
                let info = format!("{title}: {text}");
                if info.contains("reload") {
                    self.asked.lock().unwrap().push(info);
                    self.kak.keys(&["y"]);
                }
            }
            if self.kak.text(path) == disk {
                break;
            }
            assert!(
                start.elapsed() < SERVER,
                "Kakoune never reloaded {}",
                path.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        self.synced(path, SERVER);
    }

    fn type_text(&self, path: &Path, text: &str) {
        self.kak.set_text(path, text);
    }

    fn save(&self, path: &Path) {
        self.kak.save(path);
    }

    fn questions(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }

    /// kak-lsp writes each clean buffer a server's edit changes (but the
    /// one the user asked from, which the server cannot name).
    fn saves_server_edits(&self) -> bool {
        true
    }

    fn process(&self) -> &common::Running {
        &self.kak.running
    }

    fn log(&self) -> &Path {
        &self.kak.log
    }
}

/// The session's state as the test expects it: each file's text on disk
/// and in its buffer.
struct Expected {
    disk: [String; 2],
    buffer: [String; 2],
}

impl Expected {
    fn index(file: File) -> usize {
        match file {
            File::Main => 0,
            File::Util => 1,
        }
    }

    fn disk(&self, file: File) -> &str {
        &self.disk[Self::index(file)]
    }

    fn set(&mut self, file: File, disk: &str, buffer: &str) {
        disk.clone_into(&mut self.disk[Self::index(file)]);
        buffer.clone_into(&mut self.buffer[Self::index(file)]);
    }
}

/// What a session needs besides the editor.
struct Session<'a, D: Desk> {
    desk: &'a D,
    place: &'a Place,
    files: [PathBuf; 2],
    claude: Terminal,
    model: ModelStandIn,
    client: WsClient,
    deadline: Deadline,
    expected: Expected,
    /// The host's resident memory after each step, in KiB.
    memory: Vec<u64>,
}

impl<D: Desk> Session<'_, D> {
    fn path(&self, file: File) -> &Path {
        &self.files[Expected::index(file)]
    }

    /// The terminal and the stand-in's requests, for failure messages.
    fn explain(&self) -> String {
        let log = std::fs::read_to_string(self.desk.log()).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        format!(
            "The terminal shows:\n{}\nThe stand-in's requests:\n{}\nThe log's end:\n{}",
            self.claude.screen(),
            self.model.summary(),
            lines[lines.len().saturating_sub(80)..].join("\n")
        )
    }

    /// Waits until `check` holds, at most what is left of the session.
    fn wait(&self, what: &str, check: impl Fn() -> bool) {
        eprintln!("claude_session: waiting until {what}");
        while !check() {
            assert!(
                !self.deadline.left().is_zero(),
                "never {what}\n{}",
                self.explain()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The CLI's line naming its permission mode (`⏵⏵ auto mode on
    /// (shift+tab to cycle)`), or none in a mode it does not name.
    fn mode_line(&self) -> Option<String> {
        let screen = self.claude.screen();
        let line = screen
            .lines()
            .rev()
            .find(|line| line.contains(" mode on") || line.contains("shift+tab"))?;
        Some(line.trim().to_owned())
    }

    /// Presses shift+tab until the CLI's status line names `mode`: one
    /// press at a time, each once the mode line shows the last (the rest of
    /// the screen changes too, with the selection and the turn's timer).
    fn set_mode(&self, mode: Mode) {
        for _ in 0..8 {
            if self
                .mode_line()
                .is_some_and(|line| line.contains(mode.status()))
            {
                return;
            }
            let before = self.mode_line();
            self.claude.press("BTab");
            self.wait("the mode changed", || self.mode_line() != before);
        }
        self.claude
            .wait_for(mode.status(), self.deadline.left(), || self.explain());
    }

    /// Step `n` (1-based): Claude's edit, the user's decision, and the
    /// check that everything agrees.
    async fn step(&mut self, n: usize, step: &Step) {
        let path = self.path(step.file).to_owned();
        let before = self.expected.disk(step.file).to_owned();
        assert_eq!(
            before.matches(step.old).count(),
            1,
            "step {n}: {}",
            step.old
        );
        let proposed = before.replacen(step.old, step.new, 1);
        self.set_mode(step.mode);
        if let Decision::AcceptWhileTyping = step.decision {
            let other = self.path(File::Util).to_owned();
            let typed = format!("{}{TYPED}", self.expected.disk(File::Util));
            self.desk.type_text(&other, &typed);
            let disk = self.expected.disk(File::Util).to_owned();
            self.expected.set(File::Util, &disk, &typed);
        }
        let asked = self.desk.questions().len();
        self.claude.type_text(&prompt(n));
        self.claude.press("Enter");
        let end = match step.mode {
            Mode::Auto => self.written(n, step, &path, &before, &proposed),
            Mode::Manual => self.reviewed(n, step, &path, &before, &proposed),
        };
        eprintln!("claude_session: step {n}: waiting for {end:?}");
        self.claude
            .wait_for(&end, self.deadline.left(), || self.explain());
        self.check(n).await;
        if n == REOPEN_AFTER {
            let util = self.path(File::Util).to_owned();
            self.desk.close(&util);
            self.desk.open(&util, self.deadline.left());
            self.check(n).await;
        }
        // Claude's writes and reviews ask nothing; a revert the user picks
        // may be asked once (eglot asks before it applies a server's edit).
        let questions = self.desk.questions();
        let allowed = usize::from(matches!(step.decision, Decision::RevertAndSave(_)));
        assert!(
            questions.len() - asked <= allowed,
            "step {n}: asked {:?}",
            &questions[asked..]
        );
        let memory = resident_kib(self.place);
        eprintln!("claude_session: step {n} done; the host's memory {memory} KiB");
        self.memory.push(memory);
    }

    /// An auto-mode write: shown in the buffer, marked, then decided.
    /// What the terminal says at the end of the turn.
    fn written(
        &mut self,
        n: usize,
        step: &Step,
        path: &Path,
        before: &str,
        proposed: &str,
    ) -> String {
        self.wait("the file written", || read(path) == proposed);
        self.desk.focus(path);
        self.wait("the write shown", || self.desk.text(path) == proposed);
        self.wait("the write marked", || {
            self.desk.markers(path).len() == step.hunks
        });
        let first = self.desk.markers(path)[0];
        match step.decision {
            Decision::KeepAll => {
                self.desk.act(path, first, "Claude: keep all");
                self.expected.set(step.file, proposed, proposed);
            }
            Decision::Keep(line) => {
                self.desk.act(path, line, "Claude: keep this change");
                self.expected.set(step.file, proposed, proposed);
            }
            Decision::RevertAndSave(line) => {
                self.desk.act(path, line, "Claude: revert this change");
                self.wait("the change reverted", || self.desk.text(path) == before);
                if self.desk.saves_server_edits() {
                    self.wait("the revert saved by the editor", || read(path) == before);
                } else {
                    assert_eq!(read(path), proposed, "a revert leaves the file alone");
                }
                self.desk.save(path);
                self.expected.set(step.file, before, before);
            }
            other => panic!("{other:?} is not an auto-mode decision"),
        }
        self.wait("the markers gone", || self.desk.markers(path).is_empty());
        last_words(n)
    }

    /// A reviewed edit: the hunks shown, decided one by one; the CLI
    /// writes the outcome (or nothing). What the terminal says at the end
    /// of the turn.
    fn reviewed(
        &mut self,
        n: usize,
        step: &Step,
        path: &Path,
        before: &str,
        proposed: &str,
    ) -> String {
        self.wait("the hunks shown", || {
            self.desk.markers(path).len() == step.hunks
        });
        self.claude.wait_for(
            &format!("Opened changes in {}", self.desk.name()),
            self.deadline.left(),
            || self.explain(),
        );
        let hunks = self.desk.markers(path);
        let (written, end) = match step.decision {
            Decision::Accept | Decision::AcceptWhileTyping => {
                for line in hunks.iter().rev() {
                    self.desk.act(path, *line, "Claude: accept this change");
                }
                (proposed.to_owned(), last_words(n))
            }
            Decision::Partly(accepted, rejected) => {
                assert_eq!(hunks, [accepted, rejected]);
                self.desk.act(path, accepted, "Claude: accept this change");
                self.wait("one hunk left", || self.desk.markers(path) == [rejected]);
                self.desk.act(path, rejected, "Claude: reject this change");
                let chosen = chosen(before, proposed, accepted);
                (chosen, last_words(n))
            }
            Decision::Reject => {
                for line in hunks.iter().rev() {
                    self.desk.act(path, *line, "Claude: reject this change");
                }
                // The CLI ends the turn: no answer of the model's.
                let name = path.file_name().unwrap().to_string_lossy();
                (before.to_owned(), format!("Rejected update to {name}"))
            }
            other => panic!("{other:?} is not a review's decision"),
        };
        self.wait("the hunks gone", || self.desk.markers(path).is_empty());
        self.wait("the outcome written", || read(path) == written);
        self.desk.focus(path);
        self.wait("the outcome shown", || self.desk.text(path) == written);
        self.expected.set(step.file, &written, &written);
        if let Decision::AcceptWhileTyping = step.decision {
            let util = self.path(File::Util).to_owned();
            let typed = self.expected.buffer[1].clone();
            assert_eq!(self.desk.text(&util), typed, "the typing kept");
            assert_eq!(read(&util), self.expected.disk(File::Util));
            self.desk.save(&util);
            self.expected.set(File::Util, &typed, &typed);
        }
        end
    }

    /// Everything agrees: each buffer and file as expected, no marker, the
    /// IDE's dirty flags, open editors and diagnostics as the editor's.
    async fn check(&mut self, n: usize) {
        for file in [File::Main, File::Util] {
            let path = self.path(file).to_owned();
            let i = Expected::index(file);
            let (disk, buffer) = (
                self.expected.disk[i].clone(),
                self.expected.buffer[i].clone(),
            );
            self.wait(&format!("step {n}: {} on disk", path.display()), || {
                read(&path) == disk
            });
            self.wait(
                &format!("step {n}: {} in the buffer", path.display()),
                || self.desk.text(&path) == buffer,
            );
            assert_eq!(self.desk.markers(&path), Vec::<u32>::new(), "step {n}");
            let dirty = disk != buffer;
            eprintln!(
                "claude_session: step {n}: asking the IDE of {}",
                path.display()
            );
            until(
                &mut self.client,
                "checkDocumentDirty",
                json!({"filePath": path}),
                |answer| answer["isDirty"] == dirty,
            )
            .await;
            let uri = format!("file://{}", path.display());
            let diagnostics = until(
                &mut self.client,
                "getDiagnostics",
                json!({"uri": uri}),
                |_| true,
            )
            .await;
            assert!(
                !diagnostics.to_string().contains("Claude Code"),
                "step {n}: {diagnostics}"
            );
        }
        let editors = until(&mut self.client, "getOpenEditors", json!({}), |editors| {
            editors["tabs"]
                .as_array()
                .is_some_and(|tabs| tabs.len() == 2)
        })
        .await;
        for tab in editors["tabs"].as_array().unwrap() {
            let label = tab["label"].as_str().unwrap();
            let file = if label == "main.c" {
                File::Main
            } else {
                File::Util
            };
            let i = Expected::index(file);
            assert_eq!(
                tab["isDirty"],
                self.expected.disk[i] != self.expected.buffer[i],
                "step {n}: {tab}"
            );
        }
    }
}

/// What the user types for step `n`; the stand-in knows its turn by it.
fn prompt(n: usize) -> String {
    format!("Session step {n:02}: make the edit")
}

/// What the model says once step `n`'s edit is done.
fn last_words(n: usize) -> String {
    format!("Step {n:02} is done.")
}

/// `proposed` with only its hunk at `line` (0-based) taken: `before`'s
/// lines but that one.
fn chosen(before: &str, proposed: &str, line: u32) -> String {
    let line = usize::try_from(line).unwrap();
    before
        .lines()
        .enumerate()
        .map(|(i, text)| {
            if i == line {
                proposed.lines().nth(i).unwrap()
            } else {
                text
            }
        })
        .flat_map(|text| [text, "\n"])
        .collect()
}

/// The scripted model: each step's turn reads its file, then edits it.
fn script(files: &[PathBuf; 2]) -> Vec<Script> {
    STEPS
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let n = i + 1;
            let path = &files[Expected::index(step.file)];
            // Each call's id once in the conversation.
            let id = |what: &str| -> &'static str {
                Box::leak(format!("toolu_session_{n:02}_{what}").into_boxed_str())
            };
            Script {
                prompt: prompt(n),
                calls: vec![
                    ToolCall {
                        id: id("read"),
                        name: "Read".to_owned(),
                        input: json!({"file_path": path}),
                    },
                    ToolCall {
                        id: id("edit"),
                        name: "Edit".to_owned(),
                        input: json!({"file_path": path, "old_string": step.old,
                            "new_string": step.new}),
                    },
                ],
                last_words: last_words(n),
            }
        })
        .collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// The resident memory of the workspace's host, in KiB.
fn resident_kib(place: &Place) -> u64 {
    let pids = place.host_pids();
    assert_eq!(pids.len(), 1, "one host: {pids:?}");
    let status = std::fs::read_to_string(format!("/proc/{}/status", pids[0])).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// The whole session in `desk`, whose host's lockfile is `lockfile`.
async fn run_session<D: Desk>(desk: &D, place: &Place, files: [PathBuf; 2], started: Instant) {
    let deadline = Deadline(started + TOTAL);
    let lockfile = place
        .wait_lockfiles_of(desk.process(), |found| found.len() == 1)
        .remove(0);
    let client = client_of(&lockfile).await;
    let model = ModelStandIn::start_session(script(&files));
    common::claude::write_config(&place.config(), &place.workspace);
    let claude = common::claude::start(
        place,
        &model,
        common::lockfile_port(&lockfile.0),
        &[],
        |_| {},
    );
    let mut session = Session {
        desk,
        place,
        files,
        claude,
        model,
        client,
        deadline,
        expected: Expected {
            disk: [MAIN_0.to_owned(), UTIL_0.to_owned()],
            buffer: [MAIN_0.to_owned(), UTIL_0.to_owned()],
        },
        memory: Vec::new(),
    };
    // Connected to our IDE: it names the active file.
    session
        .claude
        .wait_for("In ", session.deadline.left(), || session.explain());
    for (i, step) in STEPS.iter().enumerate() {
        session.step(i + 1, step).await;
    }
    let memory = &session.memory;
    eprintln!(
        "claude_session: {} done in {:?}; the host's memory after each step (KiB): {memory:?}",
        desk.name(),
        started.elapsed()
    );
    // Flat: after the first step (the servers' first answers, the
    // review's first use) the host grows by no more than a few pages a
    // step; a leak of the buffers' text (a few hundred bytes here, copied
    // at each of hundreds of messages) shows as more.
    let growth = memory.last().unwrap().saturating_sub(memory[0]);
    assert!(
        growth < 4 * 1024,
        "the host grew by {growth} KiB over the session: {memory:?}"
    );
}

/// The workspace with both files; `main.c` and `util.c`.
fn workspace() -> (Place, [PathBuf; 2]) {
    let place = Place::new();
    let files = [
        place.workspace.join("main.c"),
        place.workspace.join("util.c"),
    ];
    std::fs::write(&files[0], MAIN_0).unwrap();
    std::fs::write(&files[1], UTIL_0).unwrap();
    (place, files)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_edits_in_a_row_in_neovim() {
    if !common::claude::installed() {
        return;
    }
    let started = Instant::now();
    let (place, files) = workspace();
    let nvim = Neovim::start(&place, &place.workspace, "nvim", 0);
    nvim.open(&files[1], common::lsp::WAIT * 2);
    nvim.open(&files[0], common::lsp::WAIT * 2);
    run_session(&nvim, &place, files, started).await;
    nvim.quit(common::ide::SERVER);
    place.wait_all_gone(common::ide::SERVER);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_edits_in_a_row_in_emacs() {
    if !common::claude::installed() || !common::emacs::eglot_installed() {
        return;
    }
    let started = Instant::now();
    let (place, files) = workspace();
    let emacs = Emacs::start(&place, &place.workspace, "emacs", 0);
    emacs.eval("(global-auto-revert-mode 1)");
    Desk::open(&emacs, &files[1], common::lsp::WAIT * 2);
    Desk::open(&emacs, &files[0], common::lsp::WAIT * 2);
    run_session(&emacs, &place, files, started).await;
    emacs.kill_emacs(common::ide::SERVER);
    place.wait_all_gone(common::ide::SERVER);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_edits_in_a_row_in_kakoune() {
    if !common::claude::installed()
        || !["kak", "kak-lsp", "clangd"]
            .into_iter()
            .all(common::installed)
    {
        return;
    }
    let started = Instant::now();
    let (place, files) = workspace();
    let kak = Kakoune::start(
        &place,
        &place.workspace,
        "kak",
        0,
        "set-option global autoreload yes\n",
    );
    let desk = KakouneDesk {
        kak,
        asked: Mutex::default(),
    };
    Desk::open(&desk, &files[1], common::lsp::WAIT * 2);
    Desk::open(&desk, &files[0], common::lsp::WAIT * 2);
    run_session(&desk, &place, files, started).await;
    let KakouneDesk { mut kak, .. } = desk;
    kak.quit_with("kill!", SERVER);
    place.wait_all_gone(SERVER);
}
