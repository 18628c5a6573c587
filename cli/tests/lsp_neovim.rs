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

use common::lsp::Place;
use common::neovim::Neovim;
use common::ws::WsClient;
use serde_json::{Value, json};

/// How long a language server may take to answer (pyright starts slowly on
/// a loaded machine).
const SERVER: Duration = Duration::from_secs(90);

const MAIN_C: &str = "int main(void) {\n  int value = 1;\n  return value;\n}\n";
const BROKEN_C: &str = "int main(void) {\n  int value = 1;\n  return missing_name;\n}\n";
const APP_PY: &str = "count: int = 1\n";
const BROKEN_PY: &str = "count: int = \"one\"\n";

/// Calls `tool` until `done` holds of its answer; returns that answer.
async fn until(
    client: &mut WsClient,
    tool: &str,
    args: Value,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let start = Instant::now();
    loop {
        let answer = client.call(tool, args.clone()).await;
        if done(&answer) {
            return answer;
        }
        assert!(start.elapsed() < SERVER, "{tool} {args}: still {answer}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits for a notification `method` whose params satisfy `matches`.
async fn notification(
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

fn labels(editors: &Value) -> Vec<(String, bool)> {
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

fn diagnostics<'a>(answer: &'a Value, path: &Path) -> Vec<&'a Value> {
    let uri = format!("file://{}", path.display());
    answer
        .as_array()
        .unwrap()
        .iter()
        .filter(|file| file["uri"] == uri.as_str())
        .flat_map(|file| file["diagnostics"].as_array().unwrap())
        .collect()
}

fn has_error(answer: &Value, path: &Path, text: &str) -> bool {
    diagnostics(answer, path)
        .iter()
        .any(|d| d["severity"] == "Error" && d["message"].as_str().unwrap().contains(text))
}

/// Sets the whole text of the buffer of `path` without saving.
fn set_text(nvim: &Neovim, path: &Path, text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    nvim.lua(&format!(
        "vim.api.nvim_buf_set_lines(vim.fn.bufnr('{}'), 0, -1, false, vim.fn.json_decode([==[{}]==]))",
        path.display(),
        serde_json::to_string(&lines).unwrap()
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_neovim_user_s_files_edits_diagnostics_and_selection_reach_claude() {
    if !["nvim", "clangd", "pyright-langserver"]
        .into_iter()
        .all(common::installed)
    {
        return;
    }
    let place = Place::new();
    let ws = place.workspace.clone();
    let (main_c, app_py) = (ws.join("main.c"), ws.join("app.py"));
    std::fs::write(&main_c, MAIN_C).unwrap();
    std::fs::write(&app_py, APP_PY).unwrap();
    let nvim = Neovim::start(&place, &ws, "nvim", 0);

    // Open → listed, active; one IDE for the editor's two proxies.
    nvim.command(&format!("edit {}", main_c.display()));
    nvim.wait_lua("#vim.lsp.buf_get_clients(0) == 1", SERVER);
    let lockfiles = place.wait_lockfiles_of(&nvim.running, |found| found.len() == 1);
    let (lockfile, content) = &lockfiles[0];
    assert_eq!(content["ideName"], "Neovim");
    assert_eq!(content["workspaceFolders"], json!([ws.to_str().unwrap()]));
    let port = common::lockfile_port(lockfile);
    let mut client = common::ws::connect(port, content["authToken"].as_str().unwrap()).await;
    until(&mut client, "getOpenEditors", json!({}), |e| {
        labels(e) == [("main.c".to_owned(), true)]
    })
    .await;
    nvim.command(&format!("edit {}", app_py.display()));
    until(&mut client, "getOpenEditors", json!({}), |e| {
        labels(e) == [("main.c".to_owned(), false), ("app.py".to_owned(), true)]
    })
    .await;
    edit_save_and_fix(&nvim, &mut client, &main_c, &app_py).await;
    select_and_send(&nvim, &mut client, &main_c).await;
    quit(nvim, &place).await;
}

/// An unsaved type error in each file → dirty, each server's diagnostic;
/// `:w` → clean; the fix → the diagnostic goes.
async fn edit_save_and_fix(nvim: &Neovim, client: &mut WsClient, main_c: &Path, app_py: &Path) {
    nvim.command("buffer main.c");
    set_text(nvim, main_c, BROKEN_C);
    set_text(nvim, app_py, BROKEN_PY);
    // Neovim sends `didChange` after a debounce.
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

    // `:w` → clean; the fix → the diagnostic goes.
    nvim.command("write");
    until(
        client,
        "checkDocumentDirty",
        json!({"filePath": main_c}),
        |d| d["isDirty"] == false,
    )
    .await;
    set_text(nvim, main_c, MAIN_C);
    let uri = format!("file://{}", main_c.display());
    until(client, "getDiagnostics", json!({"uri": uri}), |one| {
        *one == json!([{"uri": uri, "diagnostics": []}])
    })
    .await;
}

/// A visual selection and a range code action → the selection, pushed; our
/// code action, executed → `at_mentioned`.
async fn select_and_send(nvim: &Neovim, client: &mut WsClient, main_c: &Path) {
    nvim.command("normal! 2G0wviw\u{1b}");
    nvim.lua(
        "(function() local p = vim.lsp.util.make_given_range_params(); \
         p.context = { diagnostics = {} }; _G.actions = nil; \
         vim.lsp.buf_request(0, 'textDocument/codeAction', p, \
         function(_, result) _G.actions = result or {} end) end)()",
    );
    nvim.wait_lua("_G.actions ~= nil", SERVER);
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

    let title = nvim.lua(
        "(function() for _, a in ipairs(_G.actions) do \
         if a.title == 'Send selection to Claude Code' then \
         vim.lsp.buf.execute_command(a.command or a); return a.title end end; \
         return 'none' end)()",
    );
    assert_eq!(title, "Send selection to Claude Code");
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
    let proxies = common::children(nvim.running.child.id());
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
