//! The real `opencode` TUI, run interactively in a terminal, with a real
//! Neovim (whose clangd runs through `ide-mcp lsp-proxy`) as its IDE over
//! Claude's protocol, and `ide-mcp bridge` as an MCP server in its
//! `opencode.json`, the README's entry: the selection made in Neovim and
//! an `@` mention sent from Neovim ("Send selection to Claude Code", the
//! host's `at_mentioned`) reach the model's request; the model is offered
//! the bridge's tools, and its call of one gets the IDE's answer. The
//! model is a scripted stand-in of the Messages API on loopback
//! (`common::model`); nothing leaves the machine (`common::opencode`).
//!
//! opencode finds its IDE in `~/.claude/ide` alone, so the editor and
//! opencode share a home of the test's own, with no `CLAUDE_CONFIG_DIR`
//! (`Place::at_home`), and no `CLAUDE_CODE_SSE_PORT` (with it, opencode
//! connects without the token and is refused). It reads the IDE's 0-based
//! lines as 1-based (its bug): lines 3 to 5 are `#2-4` to it, and the
//! mention makes it read lines 2 to 4.
//!
//! Needs `opencode` (npm `opencode-ai`), `tmux`, `nvim`, `clangd` and
//! `pyright-langserver` (`tests/lsp/install.sh` installs them). Without
//! them the test fails, unless the install script found a registry
//! unreachable (`IDE_MCP_LSP_MISSING=1`, set by `.ci/run`): then it says it
//! skipped.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use common::claude::Deadline;
use common::ide::SEND;
use common::lsp::Place;
use common::model::{ModelStandIn, Script, ToolCall, text_of, tool_results, user_messages};
use common::neovim::Neovim;
use ide_mcp::bridge::tools::{FIRST_TIME_NAMES, left_out};
use serde_json::{Value, json};

const MAIN_C: &str = "#include <stdio.h>\n\nint add(int a, int b) {\n  return a + b;\n}\n\nint main(void) {\n  int value = add(1, 2);\n  return value;\n}\n";
/// Lines 3 to 5 (one-based), selected linewise in Neovim.
const SELECTED: &str = "int add(int a, int b) {\n  return a + b;\n}";
/// How opencode names that selection: its file and the lines as the IDE
/// sends them (0-based), read as 1-based.
const CONTEXT: &str = "main.c#2-4";

/// The server's name in the README's `opencode.json` entry and `_`:
/// opencode names its tools `<server>_<tool>`.
const PREFIX: &str = "ide-mcp_";
/// The id of the model's `getCurrentSelection` call.
const SELECTION_ID: &str = "toolu_stand_in_selection";

/// What the user types; the stand-in recognises its conversation by it.
const PROMPT: &str = "What does the selected code do?";
const LAST_WORDS: &str = "It adds two numbers.";

/// The whole test, start to end.
const TOTAL: Duration = Duration::from_mins(3);

#[test]
fn the_neovim_selection_and_mention_and_the_bridge_s_tools_reach_opencode_s_model() {
    if !common::opencode::installed() {
        return;
    }
    let start = Instant::now();
    let deadline = Deadline(start + TOTAL);
    let place = Place::at_home();
    let main_c = place.workspace.join("main.c");
    std::fs::write(&main_c, MAIN_C).unwrap();
    let nvim = Neovim::start(&place, &place.workspace, "nvim", 0);
    nvim.command(&format!("edit {}", main_c.display()));
    nvim.wait_lua("#vim.lsp.buf_get_clients(0) == 1", deadline.left());
    place.wait_lockfiles_of(&nvim.running, |found| found.len() == 1);
    nvim.select("3GV5G", deadline.left());
    let editor_ready = start.elapsed();

    let model = ModelStandIn::start(script());
    let opencode = common::opencode::start(&place, &model, &readme_mcp());
    // Connected to the host, which has sent it the selection as it
    // subscribed: the prompt's editor context names it.
    opencode.wait_for(CONTEXT, deadline.left(), || model.summary());
    let connected = start.elapsed();

    // The mention, sent from Neovim, is put in the prompt.
    nvim.run_listed(SEND);
    let mention = format!("@{CONTEXT}");
    opencode.wait_for(&mention, deadline.left(), || model.summary());
    opencode.type_text(PROMPT);
    opencode.wait_for(PROMPT, deadline.left(), String::new);
    opencode.press("Enter");
    opencode.wait_for(LAST_WORDS, deadline.left(), || model.summary());

    let conversation = conversation(&model);
    let first = conversation
        .first()
        .expect("no request of the conversation");
    assert_the_editor_reached(first, &main_c);
    assert_the_bridge_s_tools_offered(first);
    assert_the_call_answered(conversation.last().unwrap(), &main_c);
    eprintln!(
        "opencode_cli: editor ready {editor_ready:?}, opencode connected {connected:?}, \
         all done {:?}; the stand-in's requests:\n{}",
        start.elapsed(),
        model.summary()
    );

    // The bridge ends with opencode, the hosts with Neovim.
    let bridges = common::proxies(opencode.pid());
    assert_eq!(bridges.len(), 1, "opencode's children: {bridges:?}");
    drop(opencode);
    deadline.wait(
        "the bridge to end with opencode",
        || bridges.iter().all(|&pid| common::is_dead(pid)),
        String::new,
    );
    drop(model);
    nvim.quit(deadline.left());
    place.wait_all_gone_but(&["bridge-tools.json"], deadline.left());
}

/// The `mcp` of the README's `opencode.json` (`ide-mcp bridge`).
fn readme_mcp() -> Value {
    let readme = include_str!("../../README.md");
    readme
        .split("```json\n")
        .skip(1)
        .find_map(|block| {
            let config: Value = serde_json::from_str(block.split_once("\n```")?.0).ok()?;
            config.get("mcp").cloned()
        })
        .expect("the README has no `opencode.json` with an `mcp` entry")
}

/// The model calls the bridge's `getCurrentSelection`, then answers.
fn script() -> Script {
    Script {
        prompt: PROMPT.to_owned(),
        calls: vec![ToolCall {
            id: SELECTION_ID,
            name: format!("{PREFIX}getCurrentSelection"),
            input: json!({}),
        }],
        last_words: LAST_WORDS.to_owned(),
    }
}

/// The requests of the conversation: those holding the prompt and offering
/// tools (the title opencode asks for offers none).
fn conversation(model: &ModelStandIn) -> Vec<Value> {
    model
        .conversation(PROMPT)
        .into_iter()
        .filter(|request| request["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .collect()
}

/// The user's turn holds, in this order, the selection (opencode's
/// reminder of it), the typed prompt after the mention, and what the
/// mention made opencode read: lines 2 to 4 of `main.c`, where line 3 to
/// 5 were meant (its 1-based reading of our 0-based lines).
fn assert_the_editor_reached(request: &Value, main_c: &Path) {
    let file = main_c.to_str().unwrap();
    let texts: Vec<&str> = user_messages(request)
        .next()
        .and_then(|message| message["content"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str())
        .collect();
    let expected = [
        format!(
            "<system-reminder>Note: The user selected #2-4 from \"{file}\". ```{SELECTED}```\n\n \
             This may or may not be relevant to the current task.</system-reminder>\n"
        ),
        format!("@{CONTEXT} {PROMPT}"),
        format!(
            "Called the Read tool with the following input: \
             {{\"filePath\":\"{file}\",\"offset\":2,\"limit\":3}}"
        ),
        format!(
            "<path>{file}</path>\n<type>file</type>\n<content>\n2: \n\
             3: int add(int a, int b) {{\n4:   return a + b;\n\n\
             (Showing lines 2-4 of 10. Use offset=5 to continue.)\n</content>"
        ),
    ];
    assert_eq!(texts, expected, "{request}");
}

/// The bridge's tools are offered, under the server's name: the IDE's
/// tools less those the bridge leaves out.
fn assert_the_bridge_s_tools_offered(request: &Value) {
    let offered: BTreeSet<&str> = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str()?.strip_prefix(PREFIX))
        .collect();
    assert_eq!(
        offered,
        FIRST_TIME_NAMES.iter().copied().collect(),
        "{}",
        request["tools"]
    );
    assert!(offered.iter().all(|name| !left_out(name)), "{offered:?}");
}

/// The call's result is the IDE's answer: the selection made in Neovim.
fn assert_the_call_answered(request: &Value, main_c: &Path) {
    let result = tool_results(request)
        .find(|block| block["tool_use_id"] == SELECTION_ID)
        .unwrap_or_else(|| panic!("no result of the call in the last request: {request}"));
    assert_ne!(result["is_error"], true, "{result}");
    let answer: Value = serde_json::from_str(&text_of(&result["content"]))
        .unwrap_or_else(|_| panic!("not the IDE's JSON: {result}"));
    assert_eq!(
        (&answer["text"], &answer["filePath"]),
        (&json!(SELECTED), &json!(main_c)),
        "{answer}"
    );
}
