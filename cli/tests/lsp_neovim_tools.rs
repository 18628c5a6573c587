//! The live LSP tools on a Neovim user's own pyright and clangd, through
//! `ide-mcp lsp-proxy`: references on the editor's unsaved text, a
//! definition in another file, and the editor's own requests answered all
//! along.
//!
//! Needs `nvim`, `clangd` and `pyright-langserver` on the `PATH`, as
//! `lsp_neovim.rs` does (and skips as it does).

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use common::ide::{SERVER, labels, until};
use common::lsp::Place;
use common::neovim::Neovim;
use common::ws::WsClient;
use serde_json::{Value, json};

const UTIL_PY: &str = "def greet(name):\n    return name\n";
const APP_PY: &str = "from util import greet\n\ngreet(\"a\")\n";
const TYPED_PY: &str = "from util import greet\n\ngreet(\"a\")\ngreet(\"b\")\n";
const ADD_H: &str = "int add(int a, int b);\n";
const MAIN_C: &str = "#include \"add.h\"\n\nint main(void) {\n  return add(1, 2);\n}\n";

/// Calls `tool` until it succeeds with an answer `done` holds of (a
/// server still indexing answers less, or an error); the answer.
async fn until_found(
    client: &mut WsClient,
    tool: &str,
    args: Value,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let start = Instant::now();
    loop {
        let result = client
            .request("tools/call", json!({"name": tool, "arguments": args}))
            .await;
        if result["isError"] != true {
            let answer: Value =
                serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
            if done(&answer) {
                return answer;
            }
        }
        assert!(start.elapsed() < SERVER, "{tool} {args}: still {result}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// The (file name, line) of each location.
fn places(answer: &Value) -> BTreeSet<(String, u64)> {
    answer
        .as_array()
        .unwrap()
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

/// The editor's own hover, asked of its server and answered.
fn editor_hover_answered(nvim: &Neovim) -> bool {
    nvim.lua(
        "(function() local r = vim.lsp.buf_request_sync(0, 'textDocument/hover', \
         vim.lsp.util.make_position_params(), 20000) or {} \
         for _, v in pairs(r) do if v.result then return 1 end end return 0 end)()",
    ) == "1"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_ask_neovim_s_own_pyright_and_clangd() {
    if !["nvim", "clangd", "pyright-langserver"]
        .into_iter()
        .all(common::installed)
    {
        return;
    }
    let place = Place::new();
    let ws = place.workspace.clone();
    for (name, text) in [
        ("util.py", UTIL_PY),
        ("app.py", APP_PY),
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
    let lines: Vec<&str> = TYPED_PY.lines().collect();
    nvim.lua(&format!(
        "vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.fn.json_decode([==[{}]==]))",
        serde_json::to_string(&lines).unwrap()
    ));
    until(
        &mut client,
        "checkDocumentDirty",
        json!({"filePath": ws.join("app.py")}),
        |d| d["isDirty"] == true,
    )
    .await;
    let expected: BTreeSet<(String, u64)> =
        [("app.py", 1), ("app.py", 3), ("app.py", 4), ("util.py", 1)]
            .into_iter()
            .map(|(f, l)| (f.to_owned(), l))
            .collect();
    let args = json!({"filePath": ws.join("util.py"), "line": 1, "character": 5});
    let references = until_found(&mut client, "findReferences", args, |answer| {
        expected.is_subset(&places(answer))
    })
    .await;
    let typed = references
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

    // The editor's own hover is answered while a tool's request runs.
    nvim.command("call cursor(4, 2)");
    let asking = {
        let mut other = common::ide::client_of(&lockfiles[0]).await;
        other.answer_within = SERVER;
        let args = json!({"filePath": ws.join("app.py"), "line": 4, "character": 2});
        tokio::spawn(async move {
            other
                .request("tools/call", json!({"name": "hover", "arguments": args}))
                .await
        })
    };
    assert!(editor_hover_answered(&nvim), "the editor's hover");
    let hover = asking.await.unwrap();
    assert_ne!(hover["isError"], true, "{hover}");
    assert!(
        hover["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("greet"),
        "{hover}"
    );

    assert!(editor_hover_answered(&nvim), "the editor's hover, after");
    nvim.quit(SERVER);
}
