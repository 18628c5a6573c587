//! A Kakoune user whose kak-lsp runs clangd and pyright through
//! `ide-mcp lsp-proxy`, configured with the README's `kak-lsp.toml` word
//! for word: what an MCP client reads over the IDE WebSocket as they open,
//! edit, save, select and leave, with the real editor and real servers.
//!
//! Needs `kak` (2022.10+), `kak-lsp`, `clangd` and `pyright-langserver` on
//! the `PATH` (`tests/lsp/install.sh` installs them). Without them the
//! test fails, unless the install script found a registry unreachable
//! (`IDE_MCP_LSP_MISSING=1`, set by `.ci/run`): then it says it skipped.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::ide::{
    APP_PY, BROKEN_PY, EditTexts, Editor, REVIEWED_C, Review, SEND, SERVER, assert_lockfile_alone,
    assert_lockfile_names, claude_writes, client_of, close_no_diff_tabs, labels,
    open_reaches_claude, processes, review_hunk_by_hunk, two_files, until, wait_closed, wait_dirty,
    wait_gone, wait_mention, wait_selection, withdraw_review,
};
use common::kakoune::Kakoune;
use common::lsp::Place;
use common::ws::WsClient;
use serde_json::{Value, json};

/// Its last line counts columns differently in bytes (kak-lsp and clangd
/// 14 agree on them) and in UTF-16 (Claude's).
const MAIN_C: &str = "int main(void) {\n  int value = 1;\n  return value;\n}\n/* é */ int other;\n";
const BROKEN_C: &str =
    "int main(void) {\n  int value = 1;\n  return missing_name;\n}\n/* é */ int other;\n";

const EDIT_TEXTS: EditTexts = EditTexts {
    main_c: MAIN_C,
    broken_c: BROKEN_C,
    broken_py: BROKEN_PY,
};

fn installed() -> bool {
    ["kak", "kak-lsp", "clangd", "pyright-langserver"]
        .into_iter()
        .all(common::installed)
}

/// A workspace with `main.c` and `app.py`, and a Kakoune (its proxies'
/// hosts lingering for no time) that shows `main.c`, its server attached
/// through a proxy; the one lockfile.
struct Session {
    place: Place,
    kak: Kakoune,
    main_c: PathBuf,
    app_py: PathBuf,
    lockfile: (PathBuf, Value),
}

impl Session {
    /// With `main_c_text` the text of `main.c`, and `kakrc` added to the
    /// kakrc.
    fn start(main_c_text: &str, kakrc: &str) -> Self {
        let (place, main_c, app_py) = two_files(main_c_text, APP_PY);
        let ws = place.workspace.clone();
        let kak = Kakoune::start(&place, &ws, "kak", 0, kakrc);
        kak.open(&main_c);
        let start = Instant::now();
        let lockfile = loop {
            if let [one] = &place.lockfiles()[..] {
                break one.clone();
            }
            assert!(
                start.elapsed() < SERVER,
                "no lockfile; *debug*: {}; proxy log: {}",
                kak.debug_buffer(),
                std::fs::read_to_string(&kak.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        Self {
            place,
            kak,
            main_c,
            app_py,
            lockfile,
        }
    }

    async fn client(&self) -> WsClient {
        client_of(&self.lockfile).await
    }

    /// kak-lsp (detached from Kakoune), the proxies it runs (`proxies`
    /// of them), their servers and the host (a child of the proxy that
    /// started it).
    fn processes(&self, proxies: usize) -> Vec<u32> {
        processes(
            &self.lockfile,
            &[self.kak.kak_lsp()],
            &self.kak.proxies(),
            proxies,
        )
    }
}

impl Editor for Kakoune {
    fn set_text(&self, path: &Path, text: &str) {
        Kakoune::set_text(self, path, text);
    }

    /// `:write`.
    fn save(&self, path: &Path) {
        Kakoune::save(self, path);
    }

    /// kak-lsp's `*diagnostics*`.
    fn shows_errors(&self, main_c: &Path, _app_py: &Path) {
        let listed = self.diagnostics_list(main_c, SERVER, |lines| {
            lines.iter().any(|l| l.contains("missing_name"))
        });
        eprintln!("Kakoune's *diagnostics*: {listed:?}");
        assert!(
            listed.iter().any(|l| l.starts_with("main.c:3:10: [error]")),
            "{listed:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kakoune_user_s_files_edits_diagnostics_and_selection_reach_claude() {
    if !installed() {
        return;
    }
    let session = Session::start(MAIN_C, "");
    let Session {
        place,
        kak,
        main_c,
        app_py,
        lockfile: (lockfile, content),
    } = &session;

    // kak-lsp's `clientInfo` names the IDE.
    assert_lockfile_names(content, "Kakoune", &place.workspace);
    let mut client = session.client().await;
    open_reaches_claude(&mut client, app_py, |path| kak.open(path)).await;

    // Two servers, one IDE: only its `<port>.lock`, which the CLI's
    // clean-up keeps.
    assert_eq!(kak.proxies().len(), 2);
    assert_lockfile_alone(place, lockfile);

    // kak-lsp sends `didChange` from the `NormalIdle` hook, after a key;
    // `:write` saves.
    common::ide::edit_save_and_fix(kak, &mut client, (main_c, app_py), &EDIT_TEXTS).await;
    select_and_send(kak, &mut client, main_c).await;

    // `:write-all` and `:kill`: kak-lsp sends each server `shutdown` and
    // `exit`; kak-lsp, proxies, servers and host gone, nothing left.
    let pids = session.processes(2);
    let Session { place, mut kak, .. } = session;
    let log = kak.log.clone();
    kak.run("write-all");
    let asked = Instant::now();
    kak.quit_with("kill", SERVER);
    wait_gone(&place, &pids, &log);
    eprintln!(":kill: all gone after {:?}", asked.elapsed());
    // Claude's connection ended with the host.
    wait_closed(&mut client).await;
}

/// A selection (kak-lsp asks for its code actions, for the modeline's
/// light bulb) → the selection, pushed; our code action, picked from
/// `:lsp-code-actions`'s menu → `at_mentioned`. kak-lsp sends a
/// selection's range up to its last character, not past it (Kakoune's
/// inclusive end as LSP's exclusive one): `int` selected is `in`.
async fn select_and_send(kak: &Kakoune, client: &mut WsClient, main_c: &Path) {
    assert_eq!(kak.select(main_c, 1, 2, 3), "int");
    wait_selection(client, main_c, "in", (1, 2, 4)).await;
    // After a two-byte character: kak-lsp and clangd 14 count bytes, the
    // IDE UTF-16 code units.
    assert_eq!(kak.select(main_c, 4, 13, 5), "other");
    let selection = until(client, "getCurrentSelection", json!({}), |s| {
        s["text"] == "othe"
    })
    .await;
    assert_eq!(
        selection["selection"],
        json!({"start": {"line": 4, "character": 12}, "end": {"line": 4, "character": 16}, "isEmpty": false})
    );
    assert_eq!(kak.select(main_c, 1, 2, 3), "int");

    let menu = kak.menu_of("lsp-code-actions", SERVER);
    eprintln!("kak-lsp's menu: {menu:?}");
    let index = menu
        .iter()
        .position(|item| item == SEND)
        .unwrap_or_else(|| panic!("{menu:?}"));
    kak.pick(index);
    wait_mention(client, main_c).await;
}

/// How long kak-lsp waits for a message (from the editor or a server)
/// before it exits, in the test of a SIGKILL of Kakoune: with a
/// `kak-lsp.toml`, its `[server] timeout` (none by default), or
/// `kak-lsp --timeout`.
const KAK_LSP_TIMEOUT: Duration = Duration::from_secs(20);

/// SIGKILL of Kakoune: kak-lsp, a process of its own, is not told (no
/// `KakEnd` hook runs) and keeps its servers, so the IDE stays; once its
/// timeout has passed with no message it exits, and its servers' input
/// ends: kak-lsp, proxies, servers and host gone, nothing left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_of_kakoune_leaves_nothing_behind_once_kak_lsp_times_out() {
    if !installed() {
        return;
    }
    let session = Session::start(
        MAIN_C,
        &format!(
            "set-option global lsp_cmd 'kak-lsp --timeout {}'\n",
            KAK_LSP_TIMEOUT.as_secs()
        ),
    );
    let mut client = session.client().await;
    session.kak.open(&session.app_py);
    until(&mut client, "getOpenEditors", json!({}), |e| {
        labels(e).len() == 2
    })
    .await;
    let pids = session.processes(2);
    let Session { place, mut kak, .. } = session;
    let log = kak.log.clone();
    let killed = Instant::now();
    kak.kill();
    wait_gone(&place, &pids, &log);
    eprintln!("SIGKILL: all gone after {:?}", killed.elapsed());
}

/// What kak-lsp's `*diagnostics*` lists of `file` (its name) under
/// review: the lines (0-based) of Claude's hunks (their source is
/// `Claude Code`), and whether clangd's own `missing_name` error is there
/// too.
fn shown(listed: &[String], file: &str) -> (Vec<u32>, bool) {
    let mut hunks = Vec::new();
    let mut own = false;
    for line in listed {
        let Some(rest) = line.strip_prefix(&format!("{file}:")) else {
            continue;
        };
        let number: u32 = rest.split(':').next().unwrap().parse().unwrap();
        if line.contains("[Claude Code]") {
            hunks.push(number - 1);
        } else {
            own |= line.contains("missing_name");
        }
    }
    hunks.sort_unstable();
    (hunks, own)
}

/// Waits until `*diagnostics*` lists `expected` ([`shown`]) of `path`.
fn wait_review(kak: &Kakoune, path: &Path, expected: (&[u32], bool)) -> Vec<String> {
    let file = path.file_name().unwrap().to_str().unwrap();
    kak.diagnostics_list(path, SERVER, |listed| {
        let (hunks, own) = shown(listed, file);
        hunks == expected.0 && own == expected.1
    })
}

/// Selects `word` at `line`, `column` of `path` and picks `title` from
/// `:lsp-code-actions`'s menu; returns the menu.
fn pick(
    kak: &Kakoune,
    path: &Path,
    (line, column, word): (u32, u32, &str),
    title: &str,
) -> Vec<String> {
    let length = u32::try_from(word.len()).unwrap();
    assert_eq!(kak.select(path, line, column, length), word);
    let menu = kak.menu_of("lsp-code-actions", SERVER);
    let index = menu
        .iter()
        .position(|item| item == title)
        .unwrap_or_else(|| panic!("{title} not in {menu:?}"));
    kak.pick(index);
    menu
}

/// Claude proposes an edit (`openDiff`, as the CLI calls it): kak-lsp
/// lists three hunks beside clangd's own error, and queues the prompt
/// (kak-lsp takes `window/showMessageRequest`), which the user answers
/// "Review" from `:lsp-show-message-request-next`; from
/// `:lsp-code-actions` they accept the first hunk, edit elsewhere (the
/// hunks are computed again), reject the second and accept the third; the
/// call answers `FILE_SAVED` with exactly that text, the file untouched.
/// A second review, withdrawn with `close_tab`, is answered and its hunk
/// goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_s_edit_is_reviewed_hunk_by_hunk_in_kakoune() {
    if !installed() {
        return;
    }
    let session = Session::start(REVIEWED_C, "");
    session.kak.open(&session.app_py);
    let mut client = session.client().await;
    until(&mut client, "getOpenEditors", json!({}), |e| {
        labels(e).len() == 2
    })
    .await;
    let (kak, main_c) = (&session.kak, &session.main_c);
    kak.open(main_c);
    wait_review(kak, main_c, (&[], true));

    review_hunk_by_hunk(kak, &mut client, &session.lockfile, main_c).await;

    withdraw_app_py(&session, &mut client).await;
    close_no_diff_tabs(&mut client).await;

    let pids = session.processes(2);
    let Session { place, mut kak, .. } = session;
    let log = kak.log.clone();
    kak.quit_with("kill!", SERVER);
    wait_gone(&place, &pids, &log);
}

impl Review for Kakoune {
    fn wait_hunks(&self, path: &Path, lines: &[u32]) -> Option<u64> {
        let listed = wait_review(self, path, (lines, true));
        eprintln!("*diagnostics* under review: {listed:?}");
        None
    }

    /// From `:lsp-code-actions`'s menu.
    fn decide(&self, path: &Path, at: (u32, u32, &str), title: &str) -> Option<Vec<String>> {
        Some(pick(self, path, at, title))
    }

    fn replace_line(&self, path: &Path, line: u32, text: &str) {
        Kakoune::replace_line(self, path, line, text);
    }

    fn prompted(&self) {
        answer_the_prompt(self);
    }
}

/// The review's prompt, queued by kak-lsp (`lsp_modeline_message_requests`
/// says so): `:lsp-show-message-request-next` shows it in an info box with
/// its answers in a menu; the user picks "Review".
fn answer_the_prompt(kak: &Kakoune) {
    let start = Instant::now();
    loop {
        let [pending] =
            <[String; 1]>::try_from(kak.values("", "%opt{lsp_modeline_message_requests}")).unwrap();
        if !pending.trim().is_empty() {
            eprintln!("kak-lsp's modeline part for the prompt: {pending:?}");
            break;
        }
        assert!(start.elapsed() < SERVER, "no message request queued");
        std::thread::sleep(Duration::from_millis(50));
    }
    let menu = kak.menu_of("lsp-show-message-request-next", SERVER);
    let info = kak.ui(|ui| ui.info.clone());
    eprintln!("the prompt: {info:?} {menu:?}");
    assert_eq!(
        info.map(|(_, text)| text),
        Some("Claude Code proposes 3 changes to main.c".to_owned())
    );
    assert_eq!(menu, ["Accept all", "Reject all", "Review"]);
    kak.pick(2);
}

/// A review of `app.py` withdrawn by `close_tab`: answered rejected, its
/// hunk gone.
async fn withdraw_app_py(session: &Session, client: &mut WsClient) {
    let (kak, app_py) = (&session.kak, &session.app_py);
    withdraw_review(client, &session.lockfile, app_py, |one| {
        let hunks: &[u32] = if one { &[0] } else { &[] };
        wait_review(kak, app_py, (hunks, false));
    })
    .await;
}

/// A file Claude writes shows in its clean buffer once Kakoune reloads it
/// by itself (`autoreload` is `ask` by default: Kakoune's one question, and
/// no edit of ours, so the buffer is not left modified), and its change is
/// then marked beside clangd's error; a buffer with unsaved changes is
/// left alone (Kakoune asks too: `n` keeps the user's work).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_s_writes_reach_clean_buffers_and_never_dirty_ones_in_kakoune() {
    if !installed() {
        return;
    }
    let session = Session::start(MAIN_C, "");
    let Session {
        kak,
        main_c,
        app_py,
        ..
    } = &session;
    kak.open(app_py);
    let mut client = session.client().await;
    until(&mut client, "getOpenEditors", json!({}), |e| {
        labels(e).len() == 2
    })
    .await;
    kak.set_text(app_py, BROKEN_PY);
    wait_dirty(&mut client, app_py, true).await;
    // Neither file shown while Claude writes: Kakoune asks of each when it
    // is shown next (asked of a buffer on show, the question is not asked
    // again for that write once the buffer is shown anew).
    kak.run("buffer *debug*");
    // Claude writes both files, as the CLI does (a new file renamed over).
    claude_writes(&[(main_c, BROKEN_C), (app_py, "count: int = 3\n")]);
    // No edit of ours, after several looks at the disk: Kakoune's to do.
    std::thread::sleep(ide_mcp_lsp::host::reload::POLL * 8);
    assert_eq!(kak.text(main_c), MAIN_C);
    assert!(!kak.modified(main_c));
    assert_eq!(kak.text(app_py), BROKEN_PY);
    // Kakoune itself asks of the buffer shown, at the next key, whether to
    // reload it when its file changed: no for app.py (shown; the user's
    // work kept), yes for main.c (the new text, unmodified).
    for (path, answer) in [(app_py, "n"), (main_c, "y")] {
        kak.run(&format!(
            "buffer {}",
            common::kakoune::quote(path.to_str().unwrap())
        ));
        kak.idle();
        let asked = kak.wait_ui(SERVER, |ui| ui.info.clone());
        eprintln!("Kakoune asks: {asked:?}");
        assert!(
            asked
                .0
                .contains(path.file_name().unwrap().to_str().unwrap()),
            "{asked:?}"
        );
        kak.keys(&[answer]);
        kak.wait_ui(SERVER, |ui| ui.info.is_none().then_some(()));
    }
    assert_eq!(kak.text(main_c), BROKEN_C);
    assert!(!kak.modified(main_c));
    assert_eq!(kak.text(app_py), BROKEN_PY);
    assert!(kak.modified(app_py));
    // The write's change (line 3) is marked beside clangd's own error.
    wait_review(kak, main_c, (&[2], true));
    wait_dirty(&mut client, main_c, false).await;
    let pids = session.processes(2);
    let Session { place, mut kak, .. } = session;
    let log = kak.log.clone();
    kak.quit_with("kill!", SERVER);
    wait_gone(&place, &pids, &log);
}
