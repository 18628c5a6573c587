//! The live LSP tools on a Neovim user's own pyright and clangd, through
//! `ide-mcp lsp-proxy`: references on the editor's unsaved text (by
//! position and by name), a definition in another file, callers, a rename
//! whose diffs `patch` applies and pyright then accepts, clangd's fix-it
//! for a missing semicolon, the editor's own requests answered all along,
//! and `ide-mcp bridge` calling through a Neovim quit and started again.
//!
//! Needs `nvim`, `clangd`, `pyright-langserver`, `pyright` and `patch` on
//! the `PATH` (`tests/lsp/install.sh`), and skips as `lsp_neovim.rs` does.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::ide::{SERVER, labels, until, until_result};
use common::lsp::Place;
use common::neovim::Neovim;
use common::stdio::StdioSession;
use common::ws::WsClient;
use serde_json::{Value, json};

const UTIL_PY: &str = "def greet(name):\n    return name\n";
const APP_PY: &str = "from util import greet\n\ngreet(\"a\")\n";
const TYPED_PY: &str = "from util import greet\n\ngreet(\"a\")\ngreet(\"b\")\n";
/// A caller inside a function, for the call hierarchy (never opened in
/// the editor).
const CALLER_PY: &str = "from util import greet\n\n\ndef main():\n    return greet(\"c\")\n";
const ADD_H: &str = "int add(int a, int b);\n";
const MAIN_C: &str = "#include \"add.h\"\n\nint main(void) {\n  return add(1, 2);\n}\n";
/// `main.c` as the user leaves it, unsaved: line 4 lacks its semicolon.
const MAIN_C_TYPED: [&str; 5] = [
    "#include \"add.h\"",
    "",
    "int main(void) {",
    "  return add(1, 2)",
    "}",
];

fn installed() -> bool {
    ["nvim", "clangd", "pyright-langserver", "pyright", "patch"]
        .into_iter()
        .all(common::installed)
}

/// Calls `tool` until it succeeds with an answer `done` holds of (a
/// server still indexing answers less, or an error); the answer.
async fn until_found(
    client: &mut WsClient,
    tool: &str,
    args: Value,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let pause = Duration::from_millis(200);
    until_result(client, tool, args, pause, |result| {
        answer_of(result).filter(|answer| done(answer))
    })
    .await
}

/// A successful result's JSON text, parsed.
fn answer_of(result: &Value) -> Option<Value> {
    if result["isError"] == true {
        return None;
    }
    serde_json::from_str(result["content"][0]["text"].as_str()?).ok()
}

/// The (file name, line) of each location.
fn places(answer: &Value) -> BTreeSet<(String, u64)> {
    answer
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|l| {
            let path = Path::new(l["filePath"].as_str().unwrap());
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                l["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn set(items: &[(&str, u64)]) -> BTreeSet<(String, u64)> {
    items.iter().map(|(f, l)| ((*f).to_owned(), *l)).collect()
}

/// The text of the editor's own hover at the cursor, asked of its server
/// ("" when it got no answer).
fn editor_hover(nvim: &Neovim) -> String {
    nvim.lua(
        "(function() local r = vim.lsp.buf_request_sync(0, 'textDocument/hover', \
         vim.lsp.util.make_position_params(), 20000) or {} \
         for _, v in pairs(r) do if v.result then \
         local c = v.result.contents; if type(c) == 'table' then c = c.value or vim.inspect(c) end \
         return c end end return '' end)()",
    )
}

/// Sets the current buffer's lines (unsaved).
fn type_lines(nvim: &Neovim, lines: &[&str]) {
    nvim.lua(&format!(
        "vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.fn.json_decode([==[{}]==]))",
        serde_json::to_string(lines).unwrap()
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_ask_neovim_s_own_pyright_and_clangd() {
    if !installed() {
        return;
    }
    let place = Place::new();
    let ws = place.workspace.clone();
    for (name, text) in [
        ("util.py", UTIL_PY),
        ("app.py", APP_PY),
        ("caller.py", CALLER_PY),
        ("add.h", ADD_H),
        ("main.c", MAIN_C),
    ] {
        std::fs::write(ws.join(name), text).unwrap();
    }
    let nvim = Neovim::start(&place, &ws, "nvim", 0);
    nvim.command(&format!("edit {}", ws.join("main.c").display()));
    nvim.wait_lua("#vim.lsp.buf_get_clients(0) == 1", SERVER);
    let lockfiles = place.wait_lockfiles_of(&nvim.running, |found| found.len() == 1);
    let mut client = common::ide::client_of(&lockfiles[0]).await;
    client.answer_within = SERVER;
    // C: the definition's declaration, in the header.
    let args = json!({"filePath": ws.join("main.c"), "line": 4, "character": 10});
    let definition = until_found(&mut client, "goToDefinition", args, |answer| {
        answer.as_array().is_some_and(|l| !l.is_empty())
    })
    .await;
    assert_eq!(
        definition,
        json!([{"filePath": ws.join("add.h"), "line": 1, "character": 5, "endLine": 1,
                "endCharacter": 8, "lineText": "int add(int a, int b);"}])
    );
    // pyright's client attaches once the server has initialized: its
    // `didOpen` makes app.py an open editor.
    nvim.command(&format!("edit {}", ws.join("app.py").display()));
    until(&mut client, "getOpenEditors", json!({}), |e| {
        labels(e) == [("main.c".to_owned(), false), ("app.py".to_owned(), true)]
    })
    .await;

    // A call typed, not saved; util.py is not open in the editor.
    type_lines(&nvim, &TYPED_PY.lines().collect::<Vec<_>>());
    until(
        &mut client,
        "checkDocumentDirty",
        json!({"filePath": ws.join("app.py")}),
        |d| d["isDirty"] == true,
    )
    .await;
    references(&mut client, &ws).await;
    callers(&mut client, &ws).await;
    rename(&nvim, &lockfiles[0], &ws).await;
    fix_it(&nvim, &mut client, &ws).await;
    nvim.quit(SERVER);
}

/// References by position and by name, the unsaved call among them.
async fn references(client: &mut WsClient, ws: &Path) {
    let expected = set(&[
        ("app.py", 1),
        ("app.py", 3),
        ("app.py", 4),
        ("caller.py", 1),
        ("caller.py", 5),
        ("util.py", 1),
    ]);
    let args = json!({"filePath": ws.join("util.py"), "line": 1, "character": 5});
    let at = until_found(client, "findReferences", args, |answer| {
        expected.is_subset(&places(answer))
    })
    .await;
    let typed = at
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["line"] == 4 && l["filePath"].as_str().unwrap().ends_with("app.py"))
        .unwrap();
    assert_eq!(typed["lineText"], "greet(\"b\")");
    assert_eq!(
        (&typed["character"], &typed["endCharacter"]),
        (&json!(1), &json!(6))
    );
    // By name: the same call sites, from the file that defines it.
    let by_name = client
        .call(
            "findReferences",
            json!({"filePath": ws.join("util.py"), "symbol": "greet"}),
        )
        .await;
    assert_eq!(places(&by_name), places(&at));
    // A name the file does not have: its symbols, listed.
    let missing = client
        .request(
            "tools/call",
            json!({"name": "findReferences",
                   "arguments": {"filePath": ws.join("util.py"), "symbol": "welcome"}}),
        )
        .await;
    assert_eq!(missing["isError"], true);
    assert_eq!(
        missing["content"][0]["text"],
        format!(
            "no symbol named `welcome` in {}; its symbols: `greet` (Function, line 1), `greet.name` (Variable, line 1)",
            ws.join("util.py").display()
        )
    );
}

/// `greet`'s callers: `main` in caller.py, with its call site.
async fn callers(client: &mut WsClient, ws: &Path) {
    let args = json!({"filePath": ws.join("util.py"), "line": 1, "character": 5,
                      "direction": "incoming"});
    let hierarchy = until_found(client, "callHierarchy", args, |answer| {
        answer[0]["incoming"]
            .as_array()
            .is_some_and(|calls| calls.iter().any(|c| c["name"] == "main"))
    })
    .await;
    assert_eq!(hierarchy[0]["name"], "greet");
    assert_eq!(hierarchy[0]["lineText"], "def greet(name):");
    let main = hierarchy[0]["incoming"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "main")
        .unwrap();
    assert_eq!(
        (&main["filePath"], &main["line"], &main["lineText"]),
        (
            &json!(ws.join("caller.py")),
            &json!(4),
            &json!("def main():")
        )
    );
    assert_eq!(
        main["callSites"],
        json!([{"filePath": ws.join("caller.py"), "line": 5, "character": 12, "endLine": 5,
                "endCharacter": 17, "lineText": "    return greet(\"c\")"}])
    );
}

/// The rename's diffs, applied with `patch` to copies of the files (app.py
/// as the editor has it), leave pyright with no errors; the editor's own
/// hover is answered while the rename is computed.
async fn rename(nvim: &Neovim, lockfile: &(std::path::PathBuf, Value), ws: &Path) {
    nvim.command("call cursor(4, 2)");
    let asking = {
        let mut other = common::ide::client_of(lockfile).await;
        other.answer_within = SERVER;
        let args = json!({"filePath": ws.join("util.py"), "line": 1, "character": 5,
                          "newName": "welcome"});
        tokio::spawn(async move { other.call("renamePreview", args).await })
    };
    let hover = editor_hover(nvim);
    assert!(hover.contains("greet"), "the editor's hover: {hover}");
    let preview = asking.await.unwrap();
    let changes = preview["changes"].as_array().unwrap();
    let mut files: Vec<&str> = changes
        .iter()
        .map(|c| c["filePath"].as_str().unwrap())
        .collect();
    files.sort_unstable();
    let expected: Vec<String> = ["app.py", "caller.py", "util.py"]
        .iter()
        .map(|f| ws.join(f).to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, expected, "{preview:#}");
    // Nothing applied: the files and the editor's buffer are as they were.
    assert_eq!(
        std::fs::read_to_string(ws.join("util.py")).unwrap(),
        UTIL_PY
    );
    assert_eq!(
        nvim.lua("table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '|')"),
        TYPED_PY.trim_end().replace('\n', "|")
    );

    let copy = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("util.py", UTIL_PY),
        ("app.py", TYPED_PY),
        ("caller.py", CALLER_PY),
    ] {
        std::fs::write(copy.path().join(name), text).unwrap();
    }
    assert_eq!(pyright_errors(copy.path()), 0, "before the rename");
    let patch: String = changes
        .iter()
        .map(|c| c["diff"].as_str().unwrap())
        .collect();
    let applied = Command::new("patch")
        .args(["-p1", "--batch", "--forward"])
        .current_dir(copy.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(patch.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(applied.status.success(), "{patch}\n{applied:?}");
    let read = |name: &str| std::fs::read_to_string(copy.path().join(name)).unwrap();
    assert_eq!(read("util.py"), UTIL_PY.replace("greet", "welcome"));
    assert_eq!(read("app.py"), TYPED_PY.replace("greet", "welcome"));
    assert_eq!(read("caller.py"), CALLER_PY.replace("greet", "welcome"));
    assert_eq!(pyright_errors(copy.path()), 0, "after the rename");
    let hover = editor_hover(nvim);
    assert!(
        hover.contains("greet"),
        "the editor's hover, after: {hover}"
    );
}

/// The errors the `pyright` CLI reports for the Python files of `dir`.
fn pyright_errors(dir: &Path) -> u64 {
    let output = Command::new("pyright")
        .arg("--outputjson")
        .current_dir(dir)
        .output()
        .unwrap();
    let report: Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("pyright: {output:?}"));
    report["summary"]["errorCount"].as_u64().unwrap()
}

/// clangd's fix-it for the semicolon the user left out (unsaved), as a
/// diff: clangd reports it on the next token, line 5, and inserts it at the
/// end of line 4; the editor's hover answered after.
async fn fix_it(nvim: &Neovim, client: &mut WsClient, ws: &Path) {
    let main_c = ws.join("main.c");
    nvim.command(&format!("buffer {}", main_c.display()));
    type_lines(nvim, &MAIN_C_TYPED);
    until(client, "getDiagnostics", json!({"uri": main_c}), |found| {
        found[0]["diagnostics"].as_array().is_some_and(|d| {
            d.iter().any(|d| {
                d["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("Expected ';'")
            })
        })
    })
    .await;
    let fixes = client
        .call("quickFixes", json!({"filePath": main_c, "line": 5}))
        .await;
    let diagnostics = fixes["diagnostics"].as_array().unwrap();
    assert!(
        diagnostics
            .iter()
            .any(|d| d["severity"] == "Error" && d["line"] == 5),
        "{fixes:#}"
    );
    let semicolon = fixes["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["title"].as_str().unwrap_or_default().contains("';'"))
        .unwrap_or_else(|| panic!("{fixes:#}"));
    assert_eq!(
        semicolon["changes"],
        json!([{"filePath": main_c, "diff": "--- a/main.c\n+++ b/main.c\n@@ -1,5 +1,5 @@\n #include \"add.h\"\n \n int main(void) {\n-  return add(1, 2)\n+  return add(1, 2);\n }\n"}]),
        "{fixes:#}"
    );
    // Never our own actions.
    assert!(!fixes.to_string().contains("Claude"), "{fixes:#}");
    nvim.command("call cursor(4, 11)");
    let hover = editor_hover(nvim);
    assert!(hover.contains("add"), "the editor's hover in C: {hover}");
}

/// A call through `ide-mcp bridge` until its answer `done` holds of.
fn bridge_until(
    bridge: &mut StdioSession,
    tool: &str,
    args: &Value,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let start = Instant::now();
    loop {
        let result = bridge.request("tools/call", &json!({"name": tool, "arguments": args}));
        if let Some(answer) = answer_of(&result["result"])
            && done(&answer)
        {
            return answer;
        }
        assert!(start.elapsed() < SERVER, "{tool} {args}: still {result}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_calls_through_a_neovim_quit_and_started_again() {
    if !installed() {
        return;
    }
    let place = Place::new();
    let ws = place.workspace.clone();
    std::fs::write(ws.join("util.py"), UTIL_PY).unwrap();
    std::fs::write(ws.join("app.py"), APP_PY).unwrap();
    let start_editor = |name: &str| {
        let nvim = Neovim::start(&place, &ws, name, 0);
        nvim.command(&format!("edit {}", ws.join("app.py").display()));
        place.wait_lockfiles_of(&nvim.running, |found| found.len() == 1);
        nvim
    };
    let nvim = start_editor("first");
    let mut command = Command::new(common::bin());
    command
        .arg("bridge")
        .current_dir(&ws)
        .env_remove("CLAUDE_CODE_SSE_PORT");
    place.environment(&mut command);
    let mut bridge = StdioSession::start(command);
    let bridge_pid = bridge.server.child.id();
    let args = json!({"filePath": ws.join("util.py"), "symbol": "greet"});
    let expected = set(&[("app.py", 1), ("app.py", 3), ("util.py", 1)]);
    bridge_until(&mut bridge, "findReferences", &args, |answer| {
        expected.is_subset(&places(answer))
    });

    // The editor quits: its host goes, and the next call says so.
    nvim.quit(SERVER);
    let start = Instant::now();
    while !place.lockfiles().is_empty() {
        assert!(start.elapsed() < SERVER, "the host stays");
        std::thread::sleep(Duration::from_millis(50));
    }
    let gone = bridge.request(
        "tools/call",
        &json!({"name": "findReferences", "arguments": args}),
    );
    assert_eq!(gone["result"]["isError"], true, "{gone}");

    // Started again (a new host, on a new port): the same bridge answers.
    let nvim = start_editor("second");
    bridge_until(&mut bridge, "findReferences", &args, |answer| {
        expected.is_subset(&places(answer))
    });
    let hover = bridge_until(
        &mut bridge,
        "hover",
        &json!({"filePath": ws.join("app.py"), "line": 3, "character": 2}),
        |answer| {
            answer["contents"]
                .as_str()
                .is_some_and(|c| c.contains("greet"))
        },
    );
    assert!(
        hover["contents"].as_str().unwrap().contains("name"),
        "{hover}"
    );
    assert_eq!(bridge.server.child.id(), bridge_pid);
    bridge.server.assert_running();
    nvim.quit(SERVER);
}
