//! An Emacs user whose eglot runs clangd and pyright through
//! `ide-mcp lsp-proxy`: what an MCP client reads over the IDE WebSocket as
//! they open, edit, save, select and leave, with the real editor and real
//! servers.
//!
//! Needs `emacs` (28+) with eglot (1.9+), `clangd` and `pyright-langserver`
//! on the `PATH` (`tests/lsp/install.sh` installs them). Without them the
//! test fails, unless the install script found a registry unreachable
//! (`IDE_MCP_LSP_MISSING=1`, set by `.ci/run`): then it says it skipped.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::emacs::Emacs;
use common::ide::{
    APP_PY, BROKEN_C, BROKEN_PY, EDIT_TEXTS, Editor, MAIN_C, REVIEWED_C, Review, SEND, SERVER,
    assert_lockfile_alone, assert_lockfile_names, claude_writes, client_of, close_no_diff_tabs,
    open_reaches_claude, processes, review_hunk_by_hunk, two_files, wait_closed, wait_dirty,
    wait_gone, wait_mention, wait_selection, withdraw_review,
};
use common::lsp::Place;
use common::ws::WsClient;
use serde_json::Value;

fn installed() -> bool {
    ["emacs", "emacsclient", "clangd", "pyright-langserver"]
        .into_iter()
        .all(common::installed)
        && common::emacs::eglot_installed()
}

/// A workspace with `main.c` and `app.py`, and an Emacs (its proxies'
/// hosts lingering for no time) that visits both, each managed by its
/// server through a proxy; the one lockfile of the two.
struct Session {
    place: Place,
    emacs: Emacs,
    main_c: PathBuf,
    app_py: PathBuf,
    lockfile: (PathBuf, Value),
}

impl Session {
    /// With `main_c_text` the text of `main.c`.
    fn start(main_c_text: &str) -> Self {
        let (place, main_c, app_py) = two_files(main_c_text, APP_PY);
        let ws = place.workspace.clone();
        let emacs = Emacs::start(&place, &ws, "emacs", 0);
        emacs.open(&main_c, SERVER);
        let lockfile = place
            .wait_lockfiles_of(&emacs.running, |found| found.len() == 1)
            .remove(0);
        Self {
            place,
            emacs,
            main_c,
            app_py,
            lockfile,
        }
    }

    async fn client(&self) -> WsClient {
        client_of(&self.lockfile).await
    }

    /// Emacs's proxies (two: clangd's and pyright's), their servers and
    /// the host (a child of the proxy that started it, in a process group
    /// of its own).
    fn processes(&self) -> Vec<u32> {
        let proxies = common::proxies(self.emacs.running.child.id());
        processes(&self.lockfile, &[], &proxies, 2)
    }
}

impl Editor for Emacs {
    fn set_text(&self, path: &Path, text: &str) {
        Emacs::set_text(self, path, text);
    }

    /// `C-x C-s`.
    fn save(&self, path: &Path) {
        Emacs::save(self, path);
    }

    /// flymake's diagnostics.
    fn shows_errors(&self, main_c: &Path, app_py: &Path) {
        wait_shown(self, main_c, "missing_name");
        wait_shown(self, app_py, "\"int\"");
    }
}

/// Waits until Emacs shows (flymake) a diagnostic of `path` containing
/// `text`.
fn wait_shown(emacs: &Emacs, path: &Path, text: &str) {
    let start = Instant::now();
    while !emacs.diagnostics(path).iter().any(|d| d.contains(text)) {
        assert!(
            start.elapsed() < SERVER,
            "Emacs never shows {text}: {:?}",
            emacs.diagnostics(path)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emacs_user_s_files_edits_diagnostics_and_selection_reach_claude() {
    if !installed() {
        return;
    }
    let session = Session::start(MAIN_C);
    let Session {
        place,
        emacs,
        main_c,
        app_py,
        lockfile: (lockfile, content),
    } = &session;

    // eglot sends no `clientInfo`: the IDE is named after Emacs's process.
    assert_lockfile_names(content, "Emacs", &place.workspace);
    let mut client = session.client().await;
    open_reaches_claude(&mut client, app_py, |path| emacs.open(path, SERVER)).await;

    // Two servers, one IDE: only its `<port>.lock`, which the CLI's
    // clean-up keeps.
    assert_eq!(common::proxies(emacs.running.child.id()).len(), 2);
    assert_lockfile_alone(place, lockfile);

    // eglot sends `didChange` after `eglot-send-changes-idle-time`;
    // `C-x C-s` saves.
    common::ide::edit_save_and_fix(emacs, &mut client, (main_c, app_py), &EDIT_TEXTS).await;
    select_and_send(emacs, &mut client, main_c).await;

    // `M-x eglot-shutdown-all`: proxies, servers and host gone, nothing
    // left; Emacs goes on.
    let pids = session.processes();
    let asked = Instant::now();
    emacs.shutdown_all();
    wait_gone(place, &pids, &emacs.log);
    eprintln!("eglot-shutdown-all: all gone after {:?}", asked.elapsed());
    assert!(!emacs.managed(main_c) && !emacs.managed(app_py));
    assert_eq!(
        emacs.eval("(emacs-pid)"),
        emacs.running.child.id().to_string()
    );
    // Claude's connection ended with the host (after notifications still
    // unread).
    wait_closed(&mut client).await;
}

/// A region and eglot's code actions for it → the selection, pushed; our
/// code action, picked from `M-x eglot-code-actions` → `at_mentioned`.
async fn select_and_send(emacs: &Emacs, client: &mut WsClient, main_c: &Path) {
    assert_eq!(emacs.select(main_c, 1, 2, 3), "int");
    let actions = emacs.code_actions(main_c);
    assert!(actions.iter().any(|a| a == SEND), "{actions:?}");
    wait_selection(client, main_c, "int", (1, 2, 5)).await;

    let (prompt, menu) = emacs.pick_code_action(main_c, SEND);
    eprintln!("eglot's menu: {prompt:?} {menu:?}");
    assert_eq!(menu, actions);
    wait_mention(client, main_c).await;
}

/// Both files visited, then `end` (`what`): proxies, servers and host
/// gone, nothing left.
fn ending_leaves_nothing_behind(what: &str, end: impl FnOnce(Emacs)) {
    let session = Session::start(MAIN_C);
    session.emacs.open(&session.app_py, SERVER);
    let pids = session.processes();
    let log = session.emacs.log.clone();
    let asked = Instant::now();
    end(session.emacs);
    wait_gone(&session.place, &pids, &log);
    eprintln!("{what}: all gone after {:?}", asked.elapsed());
}

/// `(kill-emacs)`, which sends each server's process group SIGHUP:
/// proxies, servers and host gone, nothing left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_emacs_leaves_nothing_behind() {
    if !installed() {
        return;
    }
    ending_leaves_nothing_behind("kill-emacs", |emacs| emacs.kill_emacs(SERVER));
}

/// SIGKILL of Emacs: the proxies see their input end; proxies, servers and
/// host gone, nothing left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_of_emacs_leaves_nothing_behind() {
    if !installed() {
        return;
    }
    ending_leaves_nothing_behind("SIGKILL", Emacs::kill);
}

/// What Emacs shows (flymake) of a file under review.
#[derive(Debug)]
struct Shown {
    /// The first line (0-based) of each of Claude's hunks.
    hunks: Vec<u32>,
    /// The hunks' revision: the IDE computes them again as the user edits.
    rev: Option<u64>,
    /// Whether clangd's own `missing_name` error is there too.
    own: bool,
}

/// What flymake shows of `path`. A hunk is a diagnostic eglot made of an
/// LSP diagnostic whose `source` is Claude Code; eglot 1.9 shows its text
/// as `Claude Code [claude-edit]: <the change>`.
fn shown(emacs: &Emacs, path: &Path) -> Shown {
    let mut shown = Shown {
        hunks: Vec::new(),
        rev: None,
        own: false,
    };
    for (line, text, lsp) in emacs.flymake(path) {
        if lsp["source"] == "Claude Code" {
            assert!(text.contains("Claude Code"), "{text}");
            shown.hunks.push(line);
            shown.rev = lsp["data"]["ideMcpReview"][1].as_u64();
        } else {
            shown.own |= text.contains("missing_name");
        }
    }
    shown.hunks.sort_unstable();
    shown
}

/// Waits until what flymake shows of `path` is as `done` says (`what`
/// names it in the failure); returns it.
fn wait_review(emacs: &Emacs, path: &Path, what: &str, done: impl Fn(&Shown) -> bool) -> Shown {
    let start = Instant::now();
    loop {
        let now = shown(emacs, path);
        if done(&now) {
            return now;
        }
        assert!(
            start.elapsed() < SERVER,
            "{}: never {what}: {now:?}; flymake: {:?}; proxy log:\n{}",
            path.display(),
            emacs.flymake(path),
            std::fs::read_to_string(&emacs.log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Selects `word` at `line`, `column` of `path` and picks `title` from
/// `M-x eglot-code-actions`; returns the menu.
fn pick(
    emacs: &Emacs,
    path: &Path,
    (line, column, word): (u32, u32, &str),
    title: &str,
) -> Vec<String> {
    let length = u32::try_from(word.len()).unwrap();
    assert_eq!(emacs.select(path, line, column, length), word);
    let (_, menu) = emacs.pick_code_action(path, title);
    assert!(menu.iter().any(|m| m == title), "{title} not in {menu:?}");
    menu
}

/// Claude proposes an edit (`openDiff`, as the CLI calls it): flymake
/// shows three hunks beside clangd's own error; from
/// `M-x eglot-code-actions` the user accepts the first, edits elsewhere
/// (the hunks are computed again; the edit is not offered back as one),
/// rejects the second and accepts the third
/// ([`common::ide::review_hunk_by_hunk`]). A second review, withdrawn with
/// `close_tab`, is answered and its hunk goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_s_edit_is_reviewed_hunk_by_hunk_in_emacs() {
    if !installed() {
        return;
    }
    let started = Instant::now();
    let session = Session::start(REVIEWED_C);
    session.emacs.open(&session.app_py, SERVER);
    wait_review(&session.emacs, &session.main_c, "clangd's error", |s| {
        s.hunks.is_empty() && s.own
    });
    let mut client = session.client().await;
    review_main_c(&session, &mut client).await;
    withdraw_app_py(&session, &mut client).await;
    close_no_diff_tabs(&mut client).await;

    let pids = session.processes();
    let Session { place, emacs, .. } = session;
    let log = emacs.log.clone();
    emacs.kill_emacs(SERVER);
    wait_gone(&place, &pids, &log);
    eprintln!("the test took {:?}", started.elapsed());
}

impl Review for Emacs {
    fn wait_hunks(&self, path: &Path, lines: &[u32]) -> Option<u64> {
        let what = format!("hunks at {lines:?}");
        wait_review(self, path, &what, |s| s.hunks == lines && s.own).rev
    }

    /// The revision kept, so the menu's actions stay valid.
    fn wait_same_hunks(&self, path: &Path, lines: &[u32], first: Option<u64>) {
        let what = format!("the same hunks at {lines:?}");
        wait_review(self, path, &what, |s| {
            s.hunks == lines && s.own && s.rev == first
        });
    }

    /// From `M-x eglot-code-actions`.
    fn decide(&self, path: &Path, at: (u32, u32, &str), title: &str) -> Option<Vec<String>> {
        Some(pick(self, path, at, title))
    }

    fn replace_line(&self, path: &Path, line: u32, text: &str) {
        Emacs::replace_line(self, path, line, text);
    }
}

/// The review of `main.c`, hunk by hunk, with an edit of the user's.
async fn review_main_c(session: &Session, client: &mut WsClient) {
    let (emacs, main_c) = (&session.emacs, &session.main_c);
    review_hunk_by_hunk(emacs, client, &session.lockfile, main_c).await;
    // eglot 1.9 does not advertise `window.showMessage`: never asked. An
    // eglot that does is asked once (the init file answers "Review").
    let prompts = emacs.prompts();
    if emacs.advertises(main_c, &[":window", ":showMessage"]) {
        assert_eq!(prompts, ["Claude Code proposes 3 changes to main.c"]);
    } else {
        assert_eq!(prompts, Vec::<String>::new());
    }
}

/// A review of `app.py` withdrawn by `close_tab`: answered rejected, its
/// hunk gone.
async fn withdraw_app_py(session: &Session, client: &mut WsClient) {
    let (emacs, app_py) = (&session.emacs, &session.app_py);
    withdraw_review(client, &session.lockfile, app_py, |one| {
        if one {
            wait_review(emacs, app_py, "one hunk", |s| s.hunks == [0]);
        } else {
            wait_review(emacs, app_py, "no hunk", |s| s.hunks.is_empty());
        }
    })
    .await;
}

/// Waits until `check` holds of Emacs, at most [`SERVER`].
fn wait_until(what: &str, check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < SERVER, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// How many of flymake's diagnostics of `path` are Claude's markers.
fn markers(emacs: &Emacs, path: &Path) -> usize {
    emacs
        .flymake(path)
        .iter()
        .filter(|(_, _, lsp)| lsp["source"] == "Claude Code")
        .count()
}

/// With `global-auto-revert-mode` (the README's setup), a file Claude
/// writes shows in its clean buffer with no question and no edit of ours,
/// every time; each write's changes are marked in flymake, with the code
/// actions to keep or revert them. A buffer with unsaved changes is left
/// alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_s_writes_reach_clean_buffers_and_never_dirty_ones_in_emacs() {
    if !installed() {
        return;
    }
    let session = Session::start(MAIN_C);
    let Session {
        emacs,
        main_c,
        app_py,
        ..
    } = &session;
    emacs.eval("(global-auto-revert-mode 1)");
    emacs.open(app_py, SERVER);
    let mut client = session.client().await;
    emacs.set_text(app_py, BROKEN_PY);
    wait_dirty(&mut client, app_py, true).await;
    claude_writes(&[(main_c, BROKEN_C), (app_py, "count: int = 3\n")]);
    wait_until("main.c reverted", || emacs.text(main_c) == BROKEN_C);
    let changes = ide_mcp_tools::review::hunks(MAIN_C, BROKEN_C).len();
    wait_until("the first write marked", || {
        markers(emacs, main_c) == changes
    });
    assert_eq!(emacs.confirmations(), Vec::<String>::new(), "no question");
    wait_dirty(&mut client, main_c, false).await;

    // The second write, as the first.
    let second = format!("{BROKEN_C}// second\n");
    claude_writes(&[(main_c, &second)]);
    wait_until("main.c reverted again", || emacs.text(main_c) == second);
    wait_until("the second write marked", || markers(emacs, main_c) == 1);
    assert_eq!(emacs.confirmations(), Vec::<String>::new(), "no question");

    // The actions on the change: keep or revert it (the revert itself is
    // driven in Neovim and in lsp/tests/after_write.rs).
    let line = u32::try_from(BROKEN_C.lines().count()).unwrap();
    emacs.select(main_c, line, 0, 1);
    let titles = emacs.code_actions(main_c);
    for title in [
        "Claude: keep this change",
        "Claude: revert this change",
        "Claude: keep all",
    ] {
        assert!(titles.iter().any(|t| t == title), "{title}: {titles:?}");
    }
    assert_eq!(std::fs::read_to_string(main_c).unwrap(), second);

    std::thread::sleep(ide_mcp_lsp::host::reload::POLL * 8);
    assert_eq!(emacs.text(app_py), BROKEN_PY);
    assert!(
        !emacs.confirmations().iter().any(|q| q.contains("app.py")),
        "{:?}",
        emacs.confirmations()
    );
    let processes = session.processes();
    let log = emacs.log.clone();
    let Session { place, emacs, .. } = session;
    emacs.kill_emacs(SERVER);
    wait_gone(&place, &processes, &log);
}
