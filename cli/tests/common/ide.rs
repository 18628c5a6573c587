//! What the real-editor tests ask of the IDE over its WebSocket: a tool
//! called until its answer is the expected one, a notification waited
//! for, Claude's proposal to review, and the parts of the answers they
//! compare.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ide_mcp_test_support::tool_answer;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::ws::WsClient;

/// How long a language server may take to answer (pyright starts slowly on
/// a loaded machine).
pub(crate) const SERVER: Duration = Duration::from_secs(90);

/// `main.c` of the real-editor tests' workspace.
pub(crate) const MAIN_C: &str = "int main(void) {\n  int value = 1;\n  return value;\n}\n";
/// [`MAIN_C`] with a type error: clangd reports `missing_name`.
pub(crate) const BROKEN_C: &str = "int main(void) {\n  int value = 1;\n  return missing_name;\n}\n";
/// `app.py` of the real-editor tests' workspace.
pub(crate) const APP_PY: &str = "count: int = 1\n";
/// [`APP_PY`] with a type error: pyright reports a string for an `"int"`.
pub(crate) const BROKEN_PY: &str = "count: int = \"one\"\n";
/// [`edit_save_and_fix`] of [`MAIN_C`] and [`APP_PY`].
pub(crate) const EDIT_TEXTS: EditTexts = EditTexts {
    main_c: MAIN_C,
    broken_c: BROKEN_C,
    broken_py: BROKEN_PY,
};
/// Our code action's title.
pub(crate) const SEND: &str = "Send selection to Claude Code";

/// A file to review: clangd reports `missing_name`, which the proposal
/// keeps.
pub(crate) const REVIEWED_C: &str = "#include <stdio.h>\n\nint add(int a, int b) {\n  return a + b;\n}\n\nint main(void) {\n  int value = add(1, 2);\n  return missing_name;\n}\n";
/// Claude's proposal: three hunks (line 3 changed, a line inserted before
/// line 6, line 7 replaced by two).
pub(crate) const PROPOSED_C: &str = "#include <stdio.h>\n\nint add(int a, int b) {\n  return a + b; /* sum */\n}\n\n/* helper above */\nint main(void) {\n  int value = add(2, 3);\n  printf(\"%d\\n\", value);\n  return missing_name;\n}\n";
/// What the user chose: the first and third hunks, and an edit of their own
/// (line 1 made `// edited`) made while reviewing.
pub(crate) const CHOSEN_C: &str = "#include <stdio.h>\n// edited\nint add(int a, int b) {\n  return a + b; /* sum */\n}\n\nint main(void) {\n  int value = add(2, 3);\n  printf(\"%d\\n\", value);\n  return missing_name;\n}\n";

/// A connection to the IDE of `lockfile` (its path and content).
pub(crate) async fn client_of(lockfile: &(PathBuf, Value)) -> WsClient {
    let port = super::lockfile_port(&lockfile.0);
    super::ws::connect(port, lockfile.1["authToken"].as_str().unwrap()).await
}

/// Claude's `openDiff` of `path` as the CLI calls it (old and new path the
/// same), on a connection of its own: the call answers only once the
/// review is decided or withdrawn. Its answer.
pub(crate) fn open_diff(
    mut client: WsClient,
    path: &Path,
    contents: &str,
    tab_name: &str,
) -> JoinHandle<Value> {
    let args = json!({"old_file_path": path, "new_file_path": path,
        "new_file_contents": contents, "tab_name": tab_name});
    tokio::spawn(async move {
        client
            .request("tools/call", json!({"name": "openDiff", "arguments": args}))
            .await
    })
}

/// The texts of a tool's answer (`FILE_SAVED` and the text, ...).
pub(crate) fn texts(result: &Value) -> Vec<&str> {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["text"].as_str().unwrap())
        .collect()
}

/// Calls `tool` until `done` holds of its answer; returns that answer.
/// An error result fails the test, as [`WsClient::call`] does.
pub(crate) async fn until(
    client: &mut WsClient,
    tool: &str,
    args: Value,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let pause = Duration::from_millis(100);
    until_result(client, tool, args, pause, |result| {
        let answer = tool_answer(result);
        done(&answer).then_some(answer)
    })
    .await
}

/// Calls `tool` every `pause` until `take` takes something of its
/// `CallToolResult`, for at most [`SERVER`]; what it took.
pub(crate) async fn until_result<T>(
    client: &mut WsClient,
    tool: &str,
    args: Value,
    pause: Duration,
    take: impl Fn(&Value) -> Option<T>,
) -> T {
    let start = Instant::now();
    loop {
        let result = client
            .request("tools/call", json!({"name": tool, "arguments": args}))
            .await;
        if let Some(taken) = take(&result) {
            return taken;
        }
        assert!(start.elapsed() < SERVER, "{tool} {args}: still {result}");
        tokio::time::sleep(pause).await;
    }
}

/// Waits for a notification `method` whose params satisfy `matches`.
pub(crate) async fn notification(
    client: &mut WsClient,
    method: &str,
    matches: impl Fn(&Value) -> bool,
) -> Value {
    let found = |message: &Value| message["method"] == method && matches(&message["params"]);
    if let Some(index) = client.notifications.iter().position(found) {
        return client.notifications.remove(index);
    }
    let start = Instant::now();
    loop {
        let left = SERVER.saturating_sub(start.elapsed());
        let message = client
            .next_message(left)
            .await
            .unwrap_or_else(|| panic!("no {method} notification"));
        if found(&message) {
            return message;
        }
    }
}

/// The tabs of a `getOpenEditors` answer: label and whether it is active.
pub(crate) fn labels(editors: &Value) -> Vec<(String, bool)> {
    editors["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tab| {
            (
                tab["label"].as_str().unwrap().to_owned(),
                tab["isActive"] == true,
            )
        })
        .collect()
}

/// The diagnostics of `path` in a `getDiagnostics` answer.
pub(crate) fn diagnostics<'a>(answer: &'a Value, path: &Path) -> Vec<&'a Value> {
    let uri = format!("file://{}", path.display());
    answer
        .as_array()
        .unwrap()
        .iter()
        .filter(|file| file["uri"] == uri.as_str())
        .flat_map(|file| file["diagnostics"].as_array().unwrap())
        .collect()
}

/// Whether a `getDiagnostics` answer holds an error of `path` whose
/// message contains `text`.
pub(crate) fn has_error(answer: &Value, path: &Path, text: &str) -> bool {
    diagnostics(answer, path)
        .iter()
        .any(|d| d["severity"] == "Error" && d["message"].as_str().unwrap().contains(text))
}

/// Waits until `checkDocumentDirty` of `path` answers `dirty`.
pub(crate) async fn wait_dirty(client: &mut WsClient, path: &Path, dirty: bool) {
    until(
        client,
        "checkDocumentDirty",
        json!({"filePath": path}),
        |d| d["isDirty"] == dirty,
    )
    .await;
}

/// Waits until `getDiagnostics` holds an error of each `(path, text)`.
pub(crate) async fn wait_errors(client: &mut WsClient, errors: &[(&Path, &str)]) {
    until(client, "getDiagnostics", json!({}), |all| {
        errors
            .iter()
            .all(|&(path, text)| has_error(all, path, text))
    })
    .await;
}

/// Waits until `getDiagnostics` of `path`'s URI answers no diagnostics.
pub(crate) async fn wait_no_diagnostics(client: &mut WsClient, path: &Path) {
    let uri = format!("file://{}", path.display());
    until(client, "getDiagnostics", json!({"uri": uri}), |one| {
        *one == json!([{"uri": uri, "diagnostics": []}])
    })
    .await;
}

/// Waits until the selection is `text` at `line`, from `start` to `end`
/// (UTF-16 columns) of `path`, exactly as `getCurrentSelection` answers
/// it; then for its `selection_changed` notification.
pub(crate) async fn wait_selection(
    client: &mut WsClient,
    path: &Path,
    text: &str,
    (line, start, end): (u32, u32, u32),
) {
    let selection = until(client, "getCurrentSelection", json!({}), |s| {
        s["text"] == text
    })
    .await;
    assert_eq!(
        selection,
        json!({
            "success": true,
            "text": text,
            "filePath": path,
            "fileUrl": format!("file://{}", path.display()),
            "selection": {
                "start": {"line": line, "character": start},
                "end": {"line": line, "character": end},
                "isEmpty": false,
            },
        })
    );
    notification(client, "selection_changed", |params| params["text"] == text).await;
}

/// Waits for the `at_mentioned` of line 1 of `path` (our code action's).
pub(crate) async fn wait_mention(client: &mut WsClient, path: &Path) {
    let mention = notification(client, "at_mentioned", |_| true).await;
    assert_eq!(
        mention["params"],
        json!({"filePath": path, "lineStart": 1, "lineEnd": 1}),
        "{mention}"
    );
}

/// The review's code actions on a hunk, as the menu lists them.
pub(crate) const ACCEPT: &str = "Claude: accept this change";
/// See [`ACCEPT`].
pub(crate) const REJECT: &str = "Claude: reject this change";

/// Asserts that a hunk's menu offers the review's four actions.
pub(crate) fn assert_hunk_menu(menu: &[String]) {
    for title in [
        ACCEPT,
        REJECT,
        "Claude: accept all 3 changes",
        "Claude: reject all",
    ] {
        assert!(menu.iter().any(|m| m == title), "{title} not in {menu:?}");
    }
}

/// Claude never sees its own hunks as diagnostics.
pub(crate) async fn assert_hunks_unseen(client: &mut WsClient) {
    let all = client.call("getDiagnostics", json!({})).await;
    assert!(!all.to_string().contains("Claude Code"), "{all}");
}

/// A review of `app_py` on a connection of its own to the IDE of
/// `lockfile`, withdrawn by `close_tab` on `client` (the user answered in
/// the terminal): answered rejected, its hunk gone. `shown(true)` waits
/// until the editor shows the one hunk, `shown(false)` until it shows
/// none.
pub(crate) async fn withdraw_review(
    client: &mut WsClient,
    lockfile: &(PathBuf, Value),
    app_py: &Path,
    shown: impl Fn(bool),
) {
    let mut second = client_of(lockfile).await;
    second.answer_within = SERVER;
    let withdrawn = open_diff(
        second,
        app_py,
        "count: int = 2\ntotal: int = 3\n",
        "app tab",
    );
    shown(true);
    let closed = client
        .request(
            "tools/call",
            json!({"name": "close_tab", "arguments": {"tab_name": "app tab"}}),
        )
        .await;
    assert_eq!(texts(&closed), ["TAB_CLOSED"]);
    let result = withdrawn.await.unwrap();
    assert_eq!(texts(&result), ["DIFF_REJECTED", "app tab"], "{result}");
    shown(false);
}

/// `closeAllDiffTabs` with no review open: none closed.
pub(crate) async fn close_no_diff_tabs(client: &mut WsClient) {
    let none = client
        .request(
            "tools/call",
            json!({"name": "closeAllDiffTabs", "arguments": {}}),
        )
        .await;
    assert_eq!(texts(&none), ["CLOSED_0_DIFF_TABS"]);
}

/// Reads `client` until its connection ends (the host gone), notifications
/// sent before still unread.
pub(crate) async fn wait_closed(client: &mut WsClient) {
    let closing = Instant::now();
    while client.next_message(SERVER).await.is_some() {
        assert!(
            closing.elapsed() < SERVER,
            "the host's connection stays open"
        );
    }
}

/// Writes each `(path, text)` as Claude's CLI does (a new file renamed
/// over).
pub(crate) fn claude_writes(files: &[(&Path, &str)]) {
    for &(path, text) in files {
        let new = path.with_extension("new");
        std::fs::write(&new, text).unwrap();
        std::fs::rename(&new, path).unwrap();
    }
}

/// Asserts that the IDE directory of `place` holds `lockfile` alone,
/// before and after the CLI's clean-up (which keeps it).
pub(crate) fn assert_lockfile_alone(place: &super::lsp::Place, lockfile: &Path) {
    let name = lockfile.file_name().unwrap().to_str().unwrap().to_owned();
    assert_eq!(place.lockfiles().len(), 1);
    assert_eq!(place.ide_dir_entries(), std::slice::from_ref(&name));
    assert_eq!(place.cli_cleanup(), Vec::<String>::new());
    assert_eq!(place.ide_dir_entries(), [name]);
}

/// The processes an editor leaves to end: the host of `lockfile`, then
/// `others` (the editor's own), then each of `proxies` (`expected` of them)
/// followed by its one server (its child that is not the host, which the
/// proxy that started it has as a child too).
pub(crate) fn processes(
    lockfile: &(PathBuf, Value),
    others: &[u32],
    proxies: &[u32],
    expected: usize,
) -> Vec<u32> {
    let host = u32::try_from(lockfile.1["pid"].as_u64().unwrap()).unwrap();
    assert_eq!(proxies.len(), expected, "{proxies:?}");
    let mut all = vec![host];
    all.extend_from_slice(others);
    for &proxy in proxies {
        let servers: Vec<u32> = super::children(proxy)
            .into_iter()
            .filter(|&pid| pid != host)
            .collect();
        assert_eq!(servers.len(), 1, "proxy {proxy}: {servers:?}");
        all.push(proxy);
        all.extend(servers);
    }
    all
}

/// Waits until each of `pids` (proxies, servers, the host, …) has ended
/// and nothing is left in the IDE directory nor in the private one; `log`
/// (the proxies') is shown if not.
pub(crate) fn wait_gone(place: &super::lsp::Place, pids: &[u32], log: &Path) {
    let start = Instant::now();
    while !pids.iter().all(|&pid| super::is_dead(pid)) {
        assert!(
            start.elapsed() < SERVER,
            "left behind: {:?}; log:\n{}",
            pids.iter()
                .filter(|&&pid| !super::is_dead(pid))
                .collect::<Vec<_>>(),
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    place.wait_all_gone(SERVER);
}

/// What the real-editor tests do in an editor, each editor its own way.
pub(crate) trait Editor {
    /// Sets the whole text of the buffer of `path`, unsaved.
    fn set_text(&self, path: &Path, text: &str);
    /// Saves the buffer of `path`.
    fn save(&self, path: &Path);
    /// Checks what the editor itself shows of the servers' errors in
    /// `main_c` (`missing_name`) and `app_py` (`"int"`), once the IDE has
    /// them; nothing by default.
    fn shows_errors(&self, _main_c: &Path, _app_py: &Path) {}
}

/// The texts of [`edit_save_and_fix`]: `main.c` as it was, and each file
/// with a type error.
pub(crate) struct EditTexts {
    /// `main.c` fixed.
    pub(crate) main_c: &'static str,
    /// `main.c` returning `missing_name`.
    pub(crate) broken_c: &'static str,
    /// `app.py` with a string for an `int`.
    pub(crate) broken_py: &'static str,
}

/// An unsaved type error in each file → dirty, each server's diagnostic
/// (in the IDE and as the editor shows it); saved → clean; the fix → the
/// diagnostic goes.
pub(crate) async fn edit_save_and_fix(
    editor: &impl Editor,
    client: &mut WsClient,
    (main_c, app_py): (&Path, &Path),
    texts: &EditTexts,
) {
    editor.set_text(main_c, texts.broken_c);
    editor.set_text(app_py, texts.broken_py);
    // Editors send `didChange` after a while (a debounce, an idle time).
    wait_dirty(client, main_c, true).await;
    wait_errors(client, &[(main_c, "missing_name"), (app_py, "\"int\"")]).await;
    editor.shows_errors(main_c, app_py);
    editor.save(main_c);
    wait_dirty(client, main_c, false).await;
    editor.set_text(main_c, texts.main_c);
    wait_no_diagnostics(client, main_c).await;
}

/// A fresh workspace with `main.c` and `app.py` of these texts; their
/// paths.
pub(crate) fn two_files(
    main_c_text: &str,
    app_py_text: &str,
) -> (super::lsp::Place, PathBuf, PathBuf) {
    let place = super::lsp::Place::new();
    let (main_c, app_py) = (
        place.workspace.join("main.c"),
        place.workspace.join("app.py"),
    );
    std::fs::write(&main_c, main_c_text).unwrap();
    std::fs::write(&app_py, app_py_text).unwrap();
    (place, main_c, app_py)
}

/// Asserts that the lockfile's `content` names the IDE `ide_name` and
/// the one workspace folder `workspace`.
pub(crate) fn assert_lockfile_names(content: &Value, ide_name: &str, workspace: &Path) {
    assert_eq!(content["ideName"], ide_name, "{content}");
    assert_eq!(
        content["workspaceFolders"],
        json!([workspace.to_str().unwrap()])
    );
}

/// With `main.c` open: listed, active; `app_py` opened → both listed,
/// `app.py` active.
pub(crate) async fn open_reaches_claude(
    client: &mut WsClient,
    app_py: &Path,
    open: impl FnOnce(&Path),
) {
    until(client, "getOpenEditors", json!({}), |e| {
        labels(e) == [("main.c".to_owned(), true)]
    })
    .await;
    open(app_py);
    until(client, "getOpenEditors", json!({}), |e| {
        labels(e) == [("main.c".to_owned(), false), ("app.py".to_owned(), true)]
    })
    .await;
}

/// How an editor shows Claude's hunks and lets the user decide them, for
/// [`review_hunk_by_hunk`].
pub(crate) trait Review {
    /// Waits until the editor shows, of `path`, Claude's hunks at `lines`
    /// (their first lines, 0-based) beside the server's own `missing_name`
    /// error; the hunks' revision, where the editor shows it.
    fn wait_hunks(&self, path: &Path, lines: &[u32]) -> Option<u64>;
    /// As [`Review::wait_hunks`], the hunks computed again after an edit
    /// elsewhere: where the editor shows it, of revision `first` still.
    fn wait_same_hunks(&self, path: &Path, lines: &[u32], first: Option<u64>) {
        let _ = first;
        self.wait_hunks(path, lines);
    }
    /// Picks `title` on the hunk at `at` (line, column, the word there) of
    /// `path`; the menu it was picked from, where the editor shows one.
    fn decide(&self, path: &Path, at: (u32, u32, &str), title: &str) -> Option<Vec<String>>;
    /// Replaces line `line` of the buffer of `path` by `text`, unsaved.
    fn replace_line(&self, path: &Path, line: u32, text: &str);
    /// What the editor does with the review's prompt once the hunks are
    /// shown (answer it, check it); nothing by default.
    fn prompted(&self) {}
}

/// Claude proposes an edit of `main_c` ([`REVIEWED_C`] → [`PROPOSED_C`],
/// `openDiff` as the CLI calls it, on a connection of its own to the IDE
/// of `lockfile`): the editor shows three hunks beside the server's own
/// error; the user accepts the first, edits elsewhere (the hunks are
/// computed again), rejects the second and accepts the third; the call
/// answers `FILE_SAVED` with exactly that text ([`CHOSEN_C`]), the file
/// untouched.
pub(crate) async fn review_hunk_by_hunk(
    editor: &impl Review,
    client: &mut WsClient,
    lockfile: &(PathBuf, Value),
    main_c: &Path,
) {
    let mut reviewer = client_of(lockfile).await;
    reviewer.answer_within = SERVER * 3;
    let asked = Instant::now();
    let review = open_diff(
        reviewer,
        main_c,
        PROPOSED_C,
        "✻ [Claude Code] main.c (5f680c) ⧉",
    );
    let first = editor.wait_hunks(main_c, &[3, 6, 7]);
    eprintln!("three hunks shown after {:?}", asked.elapsed());
    assert_hunks_unseen(client).await;
    editor.prompted();

    if let Some(menu) = editor.decide(main_c, (3, 2, "return"), ACCEPT) {
        eprintln!("the menu on a hunk: {menu:?}");
        assert_hunk_menu(&menu);
    }
    editor.wait_hunks(main_c, &[6, 7]);
    // An edit outside the hunks, unsaved: computed again, the same hunks at
    // the same lines, and the edit is not offered back as one.
    editor.replace_line(main_c, 1, "// edited");
    wait_dirty(client, main_c, true).await;
    editor.wait_same_hunks(main_c, &[6, 7], first);
    editor.decide(main_c, (6, 0, "int"), REJECT);
    editor.wait_hunks(main_c, &[7]);
    editor.decide(main_c, (7, 2, "int"), ACCEPT);
    let result = review.await.unwrap();
    assert_eq!(texts(&result), ["FILE_SAVED", CHOSEN_C], "{result}");
    eprintln!("reviewed in {:?}", asked.elapsed());
    // Decided: the server's own diagnostics alone.
    editor.wait_hunks(main_c, &[]);
    assert_eq!(
        std::fs::read_to_string(main_c).unwrap(),
        REVIEWED_C,
        "the IDE never writes the file"
    );
}
