//! The real `claude` CLI with `ide-mcp bridge` added as the README says
//! (`claude mcp add --scope user ide-mcp -- ide-mcp bridge`), in a workspace
//! open in Neovim whose pyright and clangd run through `ide-mcp lsp-proxy`:
//! the model is offered the bridge's tools under `mcp__ide-mcp__…` (none of
//! those the CLI shows or calls itself) beside the IDE's own
//! `mcp__ide__getDiagnostics`, and a `findReferences` call gets the IDE's
//! answer. The model is the scripted stand-in of the Messages API on
//! loopback (`common::model`); nothing leaves the machine.
//!
//! Needs `claude`, `tmux`, `nvim`, `clangd` and `pyright-langserver`, as
//! `claude_review.rs` does (and skips as it does).

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::claude::Deadline;
use common::ide::SERVER;
use common::lsp::Place;
use common::model::{ModelStandIn, Script, ToolCall, said, tool_results};
use common::neovim::Neovim;
use common::tmux::Terminal;
use ide_mcp::bridge::tools::{CALLED_BY_THE_CLI, FIRST_TIME_NAMES, SHOWN_BY_THE_CLI, left_out};
use serde_json::{Value, json};

const UTIL_PY: &str = "def greet(name):\n    return name\n";
const APP_PY: &str = "from util import greet\n\ngreet(\"a\")\ngreet(\"b\")\n";

/// The server's name in the README's `claude mcp add` line; the CLI names
/// its tools `mcp__<server>__<tool>`.
const PREFIX: &str = "mcp__ide-mcp__";
/// Where `greet` is named: its import and two calls, its definition.
const EVERY_REFERENCE: [(&str, u64); 4] =
    [("app.py", 1), ("app.py", 3), ("app.py", 4), ("util.py", 1)];

/// What the user types; the stand-in recognises its conversation by it.
const PROMPT: &str = "Where is greet called?";
const LAST_WORDS: &str = "greet is called twice in app.py.";
/// The id of the model's `ToolSearch` call.
const SEARCH_ID: &str = "toolu_stand_in_search";
/// The id of the model's `findReferences` call.
const REFERENCES_ID: &str = "toolu_stand_in_references";

/// The whole test, start to end.
const TOTAL: Duration = Duration::from_mins(4);

#[test]
fn the_cli_offers_the_bridge_s_tools_and_relays_a_call_to_the_ide() {
    if !common::claude::installed() {
        return;
    }
    let start = Instant::now();
    let deadline = Deadline(start + TOTAL);
    let place = Place::new();
    let ws = place.workspace.clone();
    std::fs::write(ws.join("util.py"), UTIL_PY).unwrap();
    std::fs::write(ws.join("app.py"), APP_PY).unwrap();
    let nvim = Neovim::start(&place, &ws, "nvim", 0);
    // pyright's client attaches once its server has initialized; the
    // IDE's answer below waits for that.
    nvim.command(&format!("edit {}", ws.join("app.py").display()));
    let lockfile = place
        .wait_lockfiles_of(&nvim.running, |found| found.len() == 1)
        .remove(0);
    let arguments = json!({"filePath": ws.join("util.py"), "line": 1, "character": 5});
    // What the IDE itself lists and answers, once pyright has the workspace.
    let (ide_tools, answer) = ask_the_ide(&lockfile, &arguments);
    let ide_ready = start.elapsed();

    let model = ModelStandIn::start(Script {
        prompt: PROMPT.to_owned(),
        // The CLI defers MCP tools: it names them to the model, which
        // fetches a schema with `ToolSearch` before calling the tool.
        calls: vec![
            ToolCall {
                id: SEARCH_ID,
                name: "ToolSearch".to_owned(),
                input: json!({"query": format!("select:{PREFIX}findReferences")}),
            },
            ToolCall {
                id: REFERENCES_ID,
                name: format!("{PREFIX}findReferences"),
                input: arguments,
            },
        ],
        last_words: LAST_WORDS.to_owned(),
    });
    common::claude::write_config(&place.config(), &ws);
    add_the_bridge(&place, &model);
    let claude = common::claude::start(
        &place,
        &model,
        common::lockfile_port(&lockfile.0),
        &["--permission-mode", "default"],
        |command| {
            command.env("PATH", common::path_with_ide_mcp());
        },
    );
    // Connected to our IDE: the host has told it which file is open.
    claude.wait_for("In app.py", deadline.left(), || model.summary());
    claude.type_text(PROMPT);
    claude.wait_for(PROMPT, deadline.left(), String::new);
    claude.press("Enter");
    allow_the_call(&claude, &model, &deadline);
    claude.wait_for(LAST_WORDS, deadline.left(), || model.summary());

    // The IDE lists the bridged tools and those left out, and the model
    // is offered the first alone.
    let ide_names: Vec<&str> = ide_tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .filter(|name| !left_out(name))
        .collect();
    // The tools of the IDE of Neovim's proxies that the bridge lists: all
    // but those left out, as before any IDE was seen.
    assert_eq!(ide_names, FIRST_TIME_NAMES);
    let conversation = model.conversation(PROMPT);
    let offered = offered_names(&conversation[0]);
    assert_eq!(offered, expected_names(), "{}", model.summary());
    for name in SHOWN_BY_THE_CLI.iter().chain(CALLED_BY_THE_CLI) {
        assert!(!offered.contains(&format!("{PREFIX}{name}")), "{name}");
    }
    // Fetched, the tool comes with the IDE's description and schema.
    let ide_entry = ide_tools
        .iter()
        .find(|tool| tool["name"] == "findReferences")
        .unwrap();
    let loaded = conversation[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == format!("{PREFIX}findReferences"))
        .unwrap_or_else(|| panic!("not loaded: {}", conversation[1]["tools"]));
    assert_eq!(
        (&loaded["description"], &loaded["input_schema"]),
        (&ide_entry["description"], &ide_entry["inputSchema"])
    );
    let last = conversation.last().unwrap();
    let result = tool_results(last)
        .find(|block| block["tool_use_id"] == REFERENCES_ID)
        .unwrap_or_else(|| panic!("no result of the call in the last request: {last}"));
    assert_eq!(
        said(result),
        json!({"type": "tool_result", "tool_use_id": REFERENCES_ID,
            "content": [{"type": "text", "text": answer}]}),
    );
    eprintln!(
        "claude_bridge: IDE answering {ide_ready:?}, all done {:?}; the stand-in's requests:\n{}",
        start.elapsed(),
        model.summary()
    );
    drop(claude);
    drop(model);
    nvim.quit(deadline.left());
    place.wait_all_gone_but(&["bridge-tools.json"], deadline.left());
}

/// The IDE's tools (its `tools/list` entries), and its `findReferences`
/// answer (text) for `arguments` once it holds every reference of `greet`.
fn ask_the_ide(lockfile: &(std::path::PathBuf, Value), arguments: &Value) -> (Vec<Value>, String) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut client = common::ide::client_of(lockfile).await;
        client.answer_within = SERVER;
        let list = client.request("tools/list", json!({})).await;
        let tools = list["tools"].as_array().unwrap().clone();
        let start = Instant::now();
        loop {
            let result = client
                .request(
                    "tools/call",
                    json!({"name": "findReferences", "arguments": arguments}),
                )
                .await;
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            if result["isError"] != true
                && places(text)
                    .iter()
                    .map(|(f, l)| (f.as_str(), *l))
                    .eq(EVERY_REFERENCE)
            {
                return (tools, text.to_owned());
            }
            assert!(start.elapsed() < SERVER, "findReferences: still {result}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
}

/// The (file name, line) of each location in a `findReferences` answer,
/// sorted.
fn places(answer: &str) -> Vec<(String, u64)> {
    let Ok(Value::Array(locations)) = serde_json::from_str(answer) else {
        return Vec::new();
    };
    let mut places: Vec<(String, u64)> = locations
        .iter()
        .filter_map(|location| {
            let path = Path::new(location["filePath"].as_str()?);
            let name = path.file_name()?.to_string_lossy().into_owned();
            Some((name, location["line"].as_u64()?))
        })
        .collect();
    places.sort();
    places
}

/// `claude mcp add --scope user ide-mcp -- ide-mcp bridge`, the README's
/// line, in the test's own configuration directory.
fn add_the_bridge(place: &Place, model: &ModelStandIn) {
    let mut command = Command::new("claude");
    command
        .args([
            "mcp", "add", "--scope", "user", "ide-mcp", "--", "ide-mcp", "bridge",
        ])
        .current_dir(&place.workspace);
    common::claude::isolate(&mut command, place, model);
    let output = command.output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && said.contains("Added stdio MCP server ide-mcp"),
        "claude mcp add: {said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Answers the CLI's permission prompt for the MCP tool's call: "Yes",
/// the first choice, as a user presses Enter (again while the prompt is
/// shown: it may be drawn before it takes keys).
fn allow_the_call(claude: &Terminal, model: &ModelStandIn, deadline: &Deadline) {
    const ASKED: &str = "Do you want to proceed?";
    claude.wait_for(ASKED, deadline.left(), || model.summary());
    while claude.screen().contains(ASKED) {
        assert!(!deadline.left().is_zero(), "{}", claude.screen());
        claude.press("Enter");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The MCP tools a request offers the model: those in its `tools`, and
/// those it names as deferred (a line of their own in a text of the
/// system prompt or of a message).
fn offered_names(request: &Value) -> BTreeSet<String> {
    let blocks = request["system"].as_array().into_iter().flatten().chain(
        request["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_array())
            .flatten(),
    );
    let whole = request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_str());
    let texts = blocks
        .filter_map(|block| block["text"].as_str())
        .chain(whole);
    let listed = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str());
    texts
        .flat_map(str::lines)
        .map(str::trim)
        .chain(listed)
        .filter(|name| name.starts_with("mcp__") && !name.contains(' '))
        .map(str::to_owned)
        .collect()
}

/// The bridge's tools under its prefix, and the IDE's `getDiagnostics` as
/// the CLI shows it itself.
fn expected_names() -> BTreeSet<String> {
    FIRST_TIME_NAMES
        .iter()
        .map(|name| format!("{PREFIX}{name}"))
        .chain(["mcp__ide__getDiagnostics".to_owned()])
        .collect()
}
