//! A Neovim user whose clangd and pyright run through `ide-mcp lsp-proxy`:
//! what an MCP client reads over the IDE WebSocket as they open, edit, save,
//! select and quit, with the real editor and real servers.
//!
//! Needs `nvim` (0.7+), `clangd` and `pyright-langserver` on the `PATH`
//! (`tests/lsp/install.sh` installs them). Without them the test fails,
//! unless the install script found a registry unreachable
//! (`IDE_MCP_LSP_MISSING=1`, set by `.ci/run`): then it says it skipped.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::ide::{
    APP_PY, BROKEN_C, BROKEN_PY, EDIT_TEXTS, Editor, MAIN_C, REVIEWED_C, Review, SEND, SERVER,
    assert_lockfile_alone, assert_lockfile_names, claude_writes, client_of, close_no_diff_tabs,
    labels, notification, open_reaches_claude, review_hunk_by_hunk, two_files, until, wait_closed,
    wait_dirty, wait_errors, withdraw_review,
};
use common::lsp::Place;
use common::neovim::Neovim;
use common::ws::WsClient;
use serde_json::{Value, json};

/// Sets the whole text of the buffer of `path` without saving.
fn set_text(nvim: &Neovim, path: &Path, text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    nvim.lua(&format!(
        "vim.api.nvim_buf_set_lines(vim.fn.bufnr('{}'), 0, -1, false, vim.fn.json_decode([==[{}]==]))",
        path.display(),
        serde_json::to_string(&lines).unwrap()
    ));
}

fn installed() -> bool {
    ["nvim", "clangd", "pyright-langserver"]
        .into_iter()
        .all(common::installed)
}

impl Editor for Neovim {
    fn set_text(&self, path: &Path, text: &str) {
        set_text(self, path, text);
    }

    /// `:w`, of the current buffer (`path`'s).
    fn save(&self, _path: &Path) {
        self.command("write");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_neovim_user_s_files_edits_diagnostics_and_selection_reach_claude() {
    if !installed() {
        return;
    }
    let (place, main_c, app_py) = two_files(MAIN_C, APP_PY);
    let ws = place.workspace.clone();
    let nvim = Neovim::start(&place, &ws, "nvim", 0);

    // Open → listed, active; one IDE for the editor's two proxies.
    nvim.command(&format!("edit {}", main_c.display()));
    nvim.wait_lua("#vim.lsp.buf_get_clients(0) == 1", SERVER);
    let lockfiles = place.wait_lockfiles_of(&nvim.running, |found| found.len() == 1);
    let (lockfile, content) = &lockfiles[0];
    assert_lockfile_names(content, "Neovim", &ws);
    let port = common::lockfile_port(lockfile);
    let mut client = common::ws::connect(port, content["authToken"].as_str().unwrap()).await;
    open_reaches_claude(&mut client, &app_py, |path| {
        nvim.command(&format!("edit {}", path.display()));
    })
    .await;
    // Neovim sends `didChange` after a debounce; `:w` saves main.c, the
    // current buffer.
    nvim.command("buffer main.c");
    common::ide::edit_save_and_fix(&nvim, &mut client, (&main_c, &app_py), &EDIT_TEXTS).await;
    select_and_send(&nvim, &mut client, &main_c).await;
    quit(nvim, &place).await;
}

/// A visual selection and a range code action → the selection, pushed; our
/// code action, executed → `at_mentioned`.
async fn select_and_send(nvim: &Neovim, client: &mut WsClient, main_c: &Path) {
    nvim.select("2G0wviw", SERVER);
    let selection = until(client, "getCurrentSelection", json!({}), |s| {
        s["text"] == "int"
    })
    .await;
    assert_eq!(
        selection["filePath"],
        main_c.to_str().unwrap(),
        "{selection}"
    );
    notification(client, "selection_changed", |params| {
        params["text"] == "int"
    })
    .await;

    nvim.run_listed(SEND);
    let mention = notification(client, "at_mentioned", |_| true).await;
    assert_eq!(
        mention["params"]["filePath"],
        main_c.to_str().unwrap(),
        "{mention}"
    );
    assert_eq!(mention["params"]["lineStart"], 1, "{mention}");
}

/// `:qa!` → proxies and servers gone, lockfile removed.
async fn quit(mut nvim: Neovim, place: &Place) {
    let proxies = common::proxies(nvim.running.child.id());
    assert_eq!(proxies.len(), 2, "{proxies:?}");
    let servers: Vec<u32> = proxies.iter().flat_map(|&p| common::children(p)).collect();
    assert!(servers.len() >= 2, "{servers:?}");
    nvim.send_keys("<Esc>:qa!<CR>");
    nvim.running.wait_timeout(SERVER);
    let start = Instant::now();
    while !(proxies
        .iter()
        .chain(&servers)
        .all(|&pid| common::is_dead(pid))
        && place.ide_dir_entries().is_empty())
    {
        assert!(
            start.elapsed() < SERVER,
            "left behind: {:?}",
            (
                place.ide_dir_entries(),
                proxies
                    .iter()
                    .chain(&servers)
                    .filter(|&&p| !common::is_dead(p))
                    .collect::<Vec<_>>()
            )
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    place.wait_all_gone(SERVER);
}

/// Whether Neovim's own diagnostics of `path` (what the user sees) hold a
/// message containing `text`.
fn editor_shows(path: &Path, text: &str) -> String {
    format!(
        "(function() for _, d in ipairs(vim.diagnostic.get(vim.fn.bufnr('{}'))) do \
         if d.message:find('{text}', 1, true) then return true end end return false end)()",
        path.display()
    )
}

/// The hover of the word under the cursor, as Neovim's client gets it.
fn hover_answers(nvim: &Neovim) -> bool {
    nvim.lua(
        "(function() local r = vim.lsp.buf_request_sync(0, 'textDocument/hover', \
         vim.lsp.util.make_position_params(), 20000); \
         for _, v in pairs(r or {}) do if v.result then return 'ok' end end; return 'none' end)()",
    ) == "ok"
}

/// The one lockfile whose host is not `old`, after the CLI's clean-up.
fn new_lockfile(place: &Place, nvim: &Neovim, old: Option<&Value>) -> (std::path::PathBuf, Value) {
    let lockfiles = place.wait_lockfiles_of(&nvim.running, |found| {
        found
            .iter()
            .any(|(_, c)| old.is_none_or(|old| c["pid"] != old["pid"]))
    });
    place.cli_cleanup();
    let mut fresh: Vec<_> = lockfiles
        .into_iter()
        .filter(|(_, c)| old.is_none_or(|old| c["pid"] != old["pid"]))
        .collect();
    assert_eq!(fresh.len(), 1, "{fresh:?}");
    fresh.remove(0)
}

async fn wait_labels(client: &mut WsClient, mut expected: Vec<&str>) {
    expected.sort_unstable();
    until(client, "getOpenEditors", json!({}), |e| {
        let mut found: Vec<String> = labels(e).into_iter().map(|(l, _)| l).collect();
        found.sort();
        found == expected
    })
    .await;
}

/// The hosts' linger in the test of their life: long enough for Neovim to
/// start again, short enough to wait for.
const LINGER: u64 = 4;

/// The IDE of a workspace is a host of its own: the CLI's clean-up leaves
/// it alone, killing it costs Neovim nothing and a new one takes over,
/// two Neovims share it, a restarted Neovim finds it again with a client
/// still connected, and it ends after its linger.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ide_host_outlives_neovim_and_survives_being_killed() {
    if !installed() {
        return;
    }
    let place = Place::new();
    let ws = place.workspace.clone();
    let (main_c, app_py, other_c) = (ws.join("main.c"), ws.join("app.py"), ws.join("other.c"));
    std::fs::write(&main_c, MAIN_C).unwrap();
    std::fs::write(&app_py, APP_PY).unwrap();
    std::fs::write(&other_c, MAIN_C).unwrap();
    let nvim = Neovim::start(&place, &ws, "first", LINGER);
    nvim.command(&format!("edit {}", main_c.display()));
    nvim.command(&format!("edit {}", app_py.display()));
    nvim.command("buffer main.c");
    nvim.wait_lua("#vim.lsp.buf_get_clients(0) == 1", SERVER);
    let first = new_lockfile(&place, &nvim, None);
    // Only the one `<port>.lock`, before and after the CLI's clean-up.
    assert_lockfile_alone(&place, &first.0);
    let mut client = client_of(&first).await;
    wait_labels(&mut client, vec!["main.c", "app.py"]).await;

    // SIGKILL of the host while the user edits: Neovim's hover and
    // diagnostics keep working; a new host serves the same files.
    let host = first.1["pid"].as_u64().unwrap().to_string();
    let killed = Instant::now();
    std::process::Command::new("kill")
        .args(["-KILL", &host])
        .status()
        .unwrap();
    set_text(&nvim, &main_c, BROKEN_C);
    nvim.command("normal! 2G0ww");
    assert!(hover_answers(&nvim), "no hover without a host");
    nvim.wait_lua(&editor_shows(&main_c, "missing_name"), SERVER);
    let second = new_lockfile(&place, &nvim, Some(&first.1));
    eprintln!("a new host served {:?} after the kill", killed.elapsed());
    let mut client = client_of(&second).await;
    wait_labels(&mut client, vec!["main.c", "app.py"]).await;
    wait_dirty(&mut client, &main_c, true).await;
    wait_errors(&mut client, &[(&main_c, "missing_name")]).await;

    // A second Neovim on the workspace: the same IDE, both editors' files.
    let other = Neovim::start(&place, &ws, "second", LINGER);
    other.command(&format!("edit {}", other_c.display()));
    wait_labels(&mut client, vec!["main.c", "app.py", "other.c"]).await;
    assert_eq!(place.lockfiles().len(), 1);
    another_workspace_has_an_ide_of_its_own(&place);

    // Both Neovims quit, one starts again within the linger: the same
    // lockfile, and the client connected before sees the new session.
    other.quit(SERVER);
    nvim.quit(SERVER);
    wait_labels(&mut client, vec![]).await;
    assert_eq!(place.lockfiles(), std::slice::from_ref(&second));
    let again = Neovim::start(&place, &ws, "again", LINGER);
    again.command(&format!("edit {}", other_c.display()));
    wait_labels(&mut client, vec!["other.c"]).await;
    assert_eq!(place.lockfiles(), std::slice::from_ref(&second));

    // Past the linger: nothing left.
    let quit_at = Instant::now();
    again.quit(SERVER);
    place.wait_all_gone(SERVER);
    assert!(quit_at.elapsed() >= Duration::from_secs(LINGER - 1));
    // Notifications sent before (the selection) may still be unread; then
    // the connection ends.
    wait_closed(&mut client).await;
}

/// A Neovim on another workspace: an IDE of its own, which SIGTERM ends at
/// once although it would linger for ten minutes.
fn another_workspace_has_an_ide_of_its_own(place: &Place) {
    let elsewhere = place.dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("e.c"), MAIN_C).unwrap();
    let third = Neovim::start(place, &elsewhere, "third", 600);
    third.command(&format!("edit {}", elsewhere.join("e.c").display()));
    let lockfiles = place.wait_lockfiles_of(&third.running, |found| found.len() == 2);
    let (_, theirs) = lockfiles
        .iter()
        .find(|(_, c)| c["workspaceFolders"] == json!([elsewhere.to_str().unwrap()]))
        .expect("an IDE of the other workspace");
    let theirs = theirs["pid"].as_u64().unwrap();
    let proxies = common::proxies(third.running.child.id());
    third.quit(SERVER);
    // Its proxies gone (an attached proxy would start a new host)...
    let start = Instant::now();
    while !proxies.iter().all(|&pid| common::is_dead(pid)) {
        assert!(start.elapsed() < SERVER, "proxies left");
        std::thread::sleep(Duration::from_millis(20));
    }
    // ...its host lingers for ten minutes; SIGTERM ends it at once,
    // lockfile removed.
    std::process::Command::new("kill")
        .args(["-TERM", &theirs.to_string()])
        .status()
        .unwrap();
    let start = Instant::now();
    while place.lockfiles().len() != 1 || !common::is_dead(u32::try_from(theirs).unwrap()) {
        // Far below the ten minutes it would linger.
        assert!(start.elapsed() < SERVER, "{:?}", place.lockfiles());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A Neovim (its hosts lingering for no time) editing `main.c` (current)
/// and `app.py` of a fresh workspace, clangd attached; the one lockfile.
struct Editing {
    place: Place,
    nvim: Neovim,
    main_c: std::path::PathBuf,
    app_py: std::path::PathBuf,
    lockfile: (std::path::PathBuf, Value),
}

impl Editing {
    /// With `main_c_text` in `main.c`; `None` (skipped) without the editor
    /// and servers.
    fn start(main_c_text: &str) -> Option<Self> {
        if !installed() {
            return None;
        }
        let (place, main_c, app_py) = two_files(main_c_text, APP_PY);
        let ws = place.workspace.clone();
        let nvim = Neovim::start(&place, &ws, "nvim", 0);
        nvim.command(&format!("edit {}", app_py.display()));
        nvim.command(&format!("edit {}", main_c.display()));
        nvim.wait_lua("#vim.lsp.buf_get_clients(0) == 1", SERVER);
        let lockfile = place
            .wait_lockfiles_of(&nvim.running, |found| found.len() == 1)
            .remove(0);
        Some(Self {
            place,
            nvim,
            main_c,
            app_py,
            lockfile,
        })
    }
}

/// Waits until Neovim shows `expected`: how many of its diagnostics of
/// `path` are Claude's hunks, and whether the server's own `missing_name`
/// error is there too.
fn wait_shown(nvim: &Neovim, path: &Path, expected: (usize, bool)) {
    nvim.wait_hunks(path, "missing_name", expected, SERVER);
}

impl Review for Neovim {
    /// How many of its diagnostics are Claude's hunks (Neovim's
    /// diagnostics do not tell their lines apart here).
    fn wait_hunks(&self, path: &Path, lines: &[u32]) -> Option<u64> {
        wait_shown(self, path, (lines.len(), true));
        None
    }

    /// The code action on the hunk's line, executed.
    fn decide(
        &self,
        _path: &Path,
        (line, _, _): (u32, u32, &str),
        title: &str,
    ) -> Option<Vec<String>> {
        self.run_action(line, title);
        None
    }

    /// clangd publishes again and the hunks stay.
    fn replace_line(&self, path: &Path, line: u32, text: &str) {
        self.lua(&format!(
            "vim.api.nvim_buf_set_lines(vim.fn.bufnr('{}'), {line}, {}, false, {{'{text}'}})",
            path.display(),
            line + 1
        ));
    }

    /// The prompt Neovim's `window/showMessageRequest` handler saw.
    fn prompted(&self) {
        assert_eq!(
            self.lua("_G.prompts[1]").trim(),
            "Claude Code proposes 3 changes to main.c"
        );
    }
}

/// Claude proposes an edit (`openDiff`, as the CLI calls it): Neovim shows
/// three hunks beside clangd's own diagnostics; the user accepts the first,
/// edits elsewhere (the hunks are computed again, clangd publishes again),
/// rejects the second and accepts the third; the call answers
/// `FILE_SAVED` with exactly that text. A second review, withdrawn with
/// `close_tab`, is answered and its hunks go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_s_edit_is_reviewed_hunk_by_hunk_in_neovim() {
    let Some(Editing {
        place,
        nvim,
        main_c,
        app_py,
        lockfile,
    }) = Editing::start(REVIEWED_C)
    else {
        return;
    };
    wait_shown(&nvim, &main_c, (0, true));
    let mut client = client_of(&lockfile).await;
    review_hunk_by_hunk(&nvim, &mut client, &lockfile, &main_c).await;

    // A second review, withdrawn by `close_tab` (the user answered in the
    // terminal): answered rejected, its hunks gone.
    withdraw_review(&mut client, &lockfile, &app_py, |one| {
        wait_shown(&nvim, &app_py, (usize::from(one), false));
    })
    .await;
    close_no_diff_tabs(&mut client).await;
    nvim.quit(SERVER);
    place.wait_all_gone(SERVER);
}

/// The text of Neovim's buffer of `path`.
fn buffer_text(nvim: &Neovim, path: &Path) -> String {
    let lines = nvim.lua(&format!(
        "vim.fn.json_encode(vim.api.nvim_buf_get_lines(vim.fn.bufnr('{}'), 0, -1, false))",
        path.display()
    ));
    let lines: Vec<String> = serde_json::from_str(lines.trim()).unwrap();
    lines
        .iter()
        .flat_map(|line| [line.as_str(), "\n"])
        .collect()
}

/// Waits until Neovim shows `n` of Claude's markers in `path`'s buffer.
fn wait_markers(nvim: &Neovim, path: &Path, n: usize) {
    let start = Instant::now();
    while nvim.hunks(path, "").0 != n {
        assert!(start.elapsed() < SERVER, "{:?}", nvim.hunks(path, ""));
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until Neovim's buffer of `path` holds `text`.
fn wait_buffer(nvim: &Neovim, path: &Path, text: &str) {
    let start = Instant::now();
    while buffer_text(nvim, path) != text {
        assert!(start.elapsed() < SERVER, "{:?}", buffer_text(nvim, path));
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A file Claude writes shows in its clean buffer when Neovim reloads it
/// (`autoread`: as it gets the focus back; here `:checktime`), with no
/// edit of ours, which would leave the buffer flagged modified; so does
/// every later write. Each write's changes are marked, and one reverted
/// from its code action is restored in the buffer only. A buffer with
/// unsaved changes is left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_s_writes_reach_clean_buffers_and_never_dirty_ones() {
    let Some(Editing {
        place,
        nvim,
        main_c,
        app_py,
        lockfile,
    }) = Editing::start(MAIN_C)
    else {
        return;
    };
    let mut client = client_of(&lockfile).await;
    wait_labels(&mut client, vec!["main.c", "app.py"]).await;
    // The user has unsaved work in app.py.
    set_text(&nvim, &app_py, BROKEN_PY);
    wait_dirty(&mut client, &app_py, true).await;

    // Claude writes both files, as the CLI does (a new file renamed over).
    claude_writes(&[(&main_c, REVIEWED_C), (&app_py, "count: int = 3\n")]);
    // The user comes back to Neovim (app.py, modified, would be Neovim's
    // own question: not asked here).
    nvim.command(&format!("checktime {}", main_c.display()));
    wait_buffer(&nvim, &main_c, REVIEWED_C);
    let changes = ide_mcp_tools::review::hunks(MAIN_C, REVIEWED_C).len();
    wait_markers(&nvim, &main_c, changes);
    assert_eq!(nvim.expr("&modified").trim(), "0", "reloaded, not edited");
    wait_dirty(&mut client, &main_c, false).await;

    // The second write shows as the first did, its change marked alone.
    let second = format!("{REVIEWED_C}// second\n");
    claude_writes(&[(&main_c, &second)]);
    nvim.command(&format!("checktime {}", main_c.display()));
    wait_buffer(&nvim, &main_c, &second);
    assert_eq!(nvim.expr("&modified").trim(), "0");
    wait_markers(&nvim, &main_c, 1);
    // Reverted from its code action: the buffer loses it, the file keeps it.
    let line = u32::try_from(REVIEWED_C.lines().count()).unwrap();
    nvim.run_action(line, "Claude: revert this change");
    wait_buffer(&nvim, &main_c, REVIEWED_C);
    wait_markers(&nvim, &main_c, 0);
    assert_eq!(std::fs::read_to_string(&main_c).unwrap(), second);
    wait_dirty(&mut client, &main_c, true).await;

    // The unsaved buffer: still the user's, after several looks at the disk.
    std::thread::sleep(ide_mcp_lsp::host::reload::POLL * 8);
    assert_eq!(buffer_text(&nvim, &app_py), BROKEN_PY);
    nvim.quit(SERVER);
    place.wait_all_gone(SERVER);
}
