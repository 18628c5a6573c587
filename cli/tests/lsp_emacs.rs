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
    CHOSEN_C, PROPOSED_C, REVIEWED_C, SERVER, client_of, has_error, labels, notification,
    open_diff, texts, until,
};
use common::lsp::Place;
use common::ws::WsClient;
use serde_json::{Value, json};

const MAIN_C: &str = "int main(void) {\n  int value = 1;\n  return value;\n}\n";
const BROKEN_C: &str = "int main(void) {\n  int value = 1;\n  return missing_name;\n}\n";
const APP_PY: &str = "count: int = 1\n";
const BROKEN_PY: &str = "count: int = \"one\"\n";

/// Our code action's title.
const SEND: &str = "Send selection to Claude Code";

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
        let place = Place::new();
        let ws = place.workspace.clone();
        let (main_c, app_py) = (ws.join("main.c"), ws.join("app.py"));
        std::fs::write(&main_c, main_c_text).unwrap();
        std::fs::write(&app_py, APP_PY).unwrap();
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
        let host = u32::try_from(self.lockfile.1["pid"].as_u64().unwrap()).unwrap();
        let proxies = common::children(self.emacs.running.child.id());
        assert_eq!(proxies.len(), 2, "{proxies:?}");
        let mut all = vec![host];
        for &proxy in &proxies {
            let servers: Vec<u32> = common::children(proxy)
                .into_iter()
                .filter(|&pid| pid != host)
                .collect();
            assert_eq!(servers.len(), 1, "proxy {proxy}: {servers:?}");
            all.push(proxy);
            all.extend(servers);
        }
        all
    }
}

/// Waits until each of `pids` (proxies, servers, the host) has ended and
/// nothing is left in the IDE directory nor in the private one.
fn wait_gone(place: &Place, pids: &[u32], log: &Path) {
    let start = Instant::now();
    while !pids.iter().all(|&pid| common::is_dead(pid)) {
        assert!(
            start.elapsed() < SERVER,
            "left behind: {:?}; log:\n{}",
            pids.iter()
                .filter(|&&pid| !common::is_dead(pid))
                .collect::<Vec<_>>(),
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    place.wait_all_gone(SERVER);
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
    assert_eq!(content["ideName"], "emacs", "{content}");
    assert_eq!(
        content["workspaceFolders"],
        json!([place.workspace.to_str().unwrap()])
    );
    let mut client = session.client().await;
    until(&mut client, "getOpenEditors", json!({}), |e| {
        labels(e) == [("main.c".to_owned(), true)]
    })
    .await;
    emacs.open(app_py, SERVER);
    until(&mut client, "getOpenEditors", json!({}), |e| {
        labels(e) == [("main.c".to_owned(), false), ("app.py".to_owned(), true)]
    })
    .await;

    // Two servers, one IDE: only its `<port>.lock`, which the CLI's
    // clean-up keeps.
    let name = lockfile.file_name().unwrap().to_str().unwrap().to_owned();
    assert_eq!(common::children(emacs.running.child.id()).len(), 2);
    assert_eq!(place.lockfiles().len(), 1);
    assert_eq!(place.ide_dir_entries(), std::slice::from_ref(&name));
    assert_eq!(place.cli_cleanup(), Vec::<String>::new());
    assert_eq!(place.ide_dir_entries(), [name]);

    edit_save_and_fix(emacs, &mut client, main_c, app_py).await;
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
    let closing = Instant::now();
    while client.next_message(SERVER).await.is_some() {
        assert!(
            closing.elapsed() < SERVER,
            "the host's connection stays open"
        );
    }
}

/// An unsaved type error in each file → dirty, each server's diagnostic;
/// `C-x C-s` → clean; the fix → the diagnostic goes.
async fn edit_save_and_fix(emacs: &Emacs, client: &mut WsClient, main_c: &Path, app_py: &Path) {
    emacs.set_text(main_c, BROKEN_C);
    emacs.set_text(app_py, BROKEN_PY);
    // eglot sends `didChange` after `eglot-send-changes-idle-time`.
    until(
        client,
        "checkDocumentDirty",
        json!({"filePath": main_c}),
        |d| d["isDirty"] == true,
    )
    .await;
    until(client, "getDiagnostics", json!({}), |all| {
        has_error(all, main_c, "missing_name") && has_error(all, app_py, "\"int\"")
    })
    .await;
    wait_shown(emacs, main_c, "missing_name");
    wait_shown(emacs, app_py, "\"int\"");

    emacs.save(main_c);
    until(
        client,
        "checkDocumentDirty",
        json!({"filePath": main_c}),
        |d| d["isDirty"] == false,
    )
    .await;
    emacs.set_text(main_c, MAIN_C);
    let uri = format!("file://{}", main_c.display());
    until(client, "getDiagnostics", json!({"uri": uri}), |one| {
        *one == json!([{"uri": uri, "diagnostics": []}])
    })
    .await;
}

/// A region and eglot's code actions for it → the selection, pushed; our
/// code action, picked from `M-x eglot-code-actions` → `at_mentioned`.
async fn select_and_send(emacs: &Emacs, client: &mut WsClient, main_c: &Path) {
    assert_eq!(emacs.select(main_c, 1, 2, 3), "int");
    let actions = emacs.code_actions(main_c);
    assert!(actions.iter().any(|a| a == SEND), "{actions:?}");
    let selection = until(client, "getCurrentSelection", json!({}), |s| {
        s["text"] == "int"
    })
    .await;
    assert_eq!(
        selection,
        json!({
            "success": true,
            "text": "int",
            "filePath": main_c,
            "fileUrl": format!("file://{}", main_c.display()),
            "selection": {
                "start": {"line": 1, "character": 2},
                "end": {"line": 1, "character": 5},
                "isEmpty": false,
            },
        })
    );
    notification(client, "selection_changed", |params| {
        params["text"] == "int"
    })
    .await;

    let (prompt, menu) = emacs.pick_code_action(main_c, SEND);
    eprintln!("eglot's menu: {prompt:?} {menu:?}");
    assert_eq!(menu, actions);
    let mention = notification(client, "at_mentioned", |_| true).await;
    assert_eq!(
        mention["params"],
        json!({"filePath": main_c, "lineStart": 1, "lineEnd": 1}),
        "{mention}"
    );
}

/// `(kill-emacs)`, which sends each server's process group SIGHUP:
/// proxies, servers and host gone, nothing left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_emacs_leaves_nothing_behind() {
    if !installed() {
        return;
    }
    let session = Session::start(MAIN_C);
    session.emacs.open(&session.app_py, SERVER);
    let pids = session.processes();
    let log = session.emacs.log.clone();
    let asked = Instant::now();
    session.emacs.kill_emacs(SERVER);
    wait_gone(&session.place, &pids, &log);
    eprintln!("kill-emacs: all gone after {:?}", asked.elapsed());
}

/// SIGKILL of Emacs: the proxies see their input end; proxies, servers and
/// host gone, nothing left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_of_emacs_leaves_nothing_behind() {
    if !installed() {
        return;
    }
    let session = Session::start(MAIN_C);
    session.emacs.open(&session.app_py, SERVER);
    let pids = session.processes();
    let log = session.emacs.log.clone();
    let killed = Instant::now();
    session.emacs.kill();
    wait_gone(&session.place, &pids, &log);
    eprintln!("SIGKILL: all gone after {:?}", killed.elapsed());
}

/// The review's code actions on a hunk, as the menu lists them.
const ACCEPT: &str = "Claude: accept this change";
const REJECT: &str = "Claude: reject this change";

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
/// rejects the second and accepts the third; the call answers
/// `FILE_SAVED` with exactly that text, the file untouched. A second
/// review, withdrawn with `close_tab`, is answered and its hunk goes.
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
    let none = client
        .request(
            "tools/call",
            json!({"name": "closeAllDiffTabs", "arguments": {}}),
        )
        .await;
    assert_eq!(texts(&none), ["CLOSED_0_DIFF_TABS"]);

    let pids = session.processes();
    let Session { place, emacs, .. } = session;
    let log = emacs.log.clone();
    emacs.kill_emacs(SERVER);
    wait_gone(&place, &pids, &log);
    eprintln!("the test took {:?}", started.elapsed());
}

/// The review of `main.c`, hunk by hunk, with an edit of the user's.
async fn review_main_c(session: &Session, client: &mut WsClient) {
    let (emacs, main_c) = (&session.emacs, &session.main_c);
    let mut reviewer = session.client().await;
    reviewer.answer_within = SERVER * 3;
    let asked = Instant::now();
    let review = open_diff(
        reviewer,
        main_c,
        PROPOSED_C,
        "✻ [Claude Code] main.c (5f680c) ⧉",
    );
    let first = wait_review(emacs, main_c, "three hunks", |s| {
        s.hunks == [3, 6, 7] && s.own
    });
    eprintln!("three hunks shown after {:?}", asked.elapsed());
    // Claude never sees its own hunks as diagnostics.
    let all = client.call("getDiagnostics", json!({})).await;
    assert!(!all.to_string().contains("Claude Code"), "{all}");

    let menu = pick(emacs, main_c, (3, 2, "return"), ACCEPT);
    eprintln!("eglot's menu on a hunk: {menu:?}");
    for title in [
        ACCEPT,
        REJECT,
        "Claude: accept all 3 changes",
        "Claude: reject all",
    ] {
        assert!(menu.iter().any(|m| m == title), "{title} not in {menu:?}");
    }
    wait_review(emacs, main_c, "two hunks", |s| s.hunks == [6, 7] && s.own);
    // An edit outside the hunks, unsaved: computed again, the same hunks at
    // the same lines (the revision kept, so the menu's actions stay valid),
    // and the edit is not offered back as one.
    emacs.replace_line(main_c, 1, "// edited");
    until(
        client,
        "checkDocumentDirty",
        json!({"filePath": main_c}),
        |d| d["isDirty"] == true,
    )
    .await;
    wait_review(emacs, main_c, "the same two hunks", |s| {
        s.hunks == [6, 7] && s.own && s.rev == first.rev
    });
    pick(emacs, main_c, (6, 0, "int"), REJECT);
    wait_review(emacs, main_c, "one hunk", |s| s.hunks == [7] && s.own);
    pick(emacs, main_c, (7, 2, "int"), ACCEPT);
    let result = review.await.unwrap();
    assert_eq!(texts(&result), ["FILE_SAVED", CHOSEN_C], "{result}");
    eprintln!("reviewed in {:?}", asked.elapsed());
    // Decided: clangd's own diagnostics alone.
    wait_review(emacs, main_c, "clangd's error alone", |s| {
        s.hunks.is_empty() && s.own
    });
    assert_eq!(
        std::fs::read_to_string(main_c).unwrap(),
        REVIEWED_C,
        "the IDE never writes the file"
    );
    // eglot 1.9 does not advertise `window.showMessage`: never asked. An
    // eglot that does is asked once (the init file answers "Review").
    let prompts = emacs.prompts();
    if emacs.advertises(main_c, &[":window", ":showMessage"]) {
        assert_eq!(prompts, ["Claude Code proposes 3 changes to main.c"]);
    } else {
        assert_eq!(prompts, Vec::<String>::new());
    }
}

/// A review of `app.py` withdrawn by `close_tab` (the user answered in the
/// terminal): answered rejected, its hunk gone.
async fn withdraw_app_py(session: &Session, client: &mut WsClient) {
    let (emacs, app_py) = (&session.emacs, &session.app_py);
    let mut second = session.client().await;
    second.answer_within = SERVER;
    let withdrawn = open_diff(
        second,
        app_py,
        "count: int = 2\ntotal: int = 3\n",
        "app tab",
    );
    wait_review(emacs, app_py, "one hunk", |s| s.hunks == [0]);
    let closed = client
        .request(
            "tools/call",
            json!({"name": "close_tab", "arguments": {"tab_name": "app tab"}}),
        )
        .await;
    assert_eq!(texts(&closed), ["TAB_CLOSED"]);
    let result = withdrawn.await.unwrap();
    assert_eq!(texts(&result), ["DIFF_REJECTED", "app tab"], "{result}");
    wait_review(emacs, app_py, "no hunk", |s| s.hunks.is_empty());
}

/// A file Claude writes shows in its clean buffer (Emacs without
/// `auto-revert-mode` keeps the old text), once eglot has asked the user;
/// a buffer with unsaved changes is left alone.
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
    emacs.open(app_py, SERVER);
    let mut client = session.client().await;
    emacs.set_text(app_py, BROKEN_PY);
    until(
        &mut client,
        "checkDocumentDirty",
        json!({"filePath": app_py}),
        |d| d["isDirty"] == true,
    )
    .await;
    for (path, text) in [(main_c, BROKEN_C), (app_py, "count: int = 3\n")] {
        let new = path.with_extension("new");
        std::fs::write(&new, text).unwrap();
        std::fs::rename(&new, path).unwrap();
    }
    let start = Instant::now();
    while emacs.text(main_c) != BROKEN_C {
        assert!(start.elapsed() < SERVER, "{:?}", emacs.text(main_c));
        std::thread::sleep(Duration::from_millis(50));
    }
    let asked = emacs.confirmations();
    eprintln!("eglot asked: {asked:?} ({:?})", start.elapsed());
    assert!(
        asked[0].contains("Server wants to edit") && asked[0].contains("main.c"),
        "{asked:?}"
    );
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
