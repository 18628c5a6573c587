//! The user's deny rules with the real `claude` CLI, run interactively in a
//! terminal with a real Neovim as its IDE (clangd through `ide-mcp
//! lsp-proxy`) and `ide-mcp bridge` as an MCP server: the project's
//! `.claude/settings.json` denies `Read(./.env)` and `Read(./secrets/**)`.
//! `.env` is open in Neovim and attached to clangd, so the host sees its
//! text, its selection and clangd's diagnostics of it; none of it reaches
//! the model, a scripted stand-in of the Messages API on loopback
//! (`common::model`): the selection in `main.c` does, the one in `.env`
//! is not sent, reading `.env` through the bridge's resources fails, and
//! `getDiagnostics` through the CLI lacks its diagnostics.
//!
//! Needs what the other `claude_*` tests need; skips as they do.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::claude::Deadline;
use common::ide::until;
use common::lsp::Place;
use common::model::{ModelStandIn, Script, ToolCall, tool_results};
use common::neovim::Neovim;
use common::tmux::Terminal;
use serde_json::{Value, json};

const MAIN_C: &str = "int main(void) {\n  return missing_name;\n}\n";
/// `.env`: its text, which no request of the CLI may hold.
const SECRET: &str = "topsecret0042";
const ENV: &str = "SECRET_TOKEN=topsecret0042\nOTHER=1\n";
const RULES: &str = r#"{"permissions": {"deny": ["Read(./.env)", "Read(./secrets/**)"]}}"#;

const PROMPT: &str = "Look at the editor's state";
const LAST_WORDS: &str = "Nothing of the denied files here.";
/// The bridge's name in the CLI's configuration.
const SERVER: &str = "ide-mcp";
const SEARCH_ID: &str = "toolu_stand_in_search";
const RESOURCE_ID: &str = "toolu_stand_in_read_resource";
const DIAGNOSTICS_ID: &str = "toolu_stand_in_diagnostics";

/// The whole test, start to end.
const TOTAL: Duration = Duration::from_mins(4);

#[test]
fn nothing_of_a_denied_file_reaches_the_model() {
    if !common::claude::installed() {
        return;
    }
    let deadline = Deadline(Instant::now() + TOTAL);
    let place = Place::new();
    let ws = place.workspace.clone();
    std::fs::write(ws.join("main.c"), MAIN_C).unwrap();
    std::fs::write(ws.join(".env"), ENV).unwrap();
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    std::fs::write(ws.join(".claude/settings.json"), RULES).unwrap();

    let nvim = Neovim::start(&place, &ws, "nvim", 0);
    // `.env` attached to clangd (through the proxy) by hand: the host has
    // its text, its selection and clangd's diagnostics of it.
    nvim.command("edit .env");
    nvim.lua("vim.lsp.buf_attach_client(0, _G.clients.c)");
    nvim.wait_lua("#vim.lsp.buf_get_clients(0) == 1", deadline.left());
    nvim.command("edit main.c");
    nvim.wait_lua("#vim.lsp.buf_get_clients(0) == 1", deadline.left());
    let (lockfile, content) = place
        .wait_lockfiles_of(&nvim.running, |found| found.len() == 1)
        .remove(0);
    let port = common::lockfile_port(&lockfile);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut ide = runtime.block_on(common::ws::connect(
        port,
        content["authToken"].as_str().unwrap(),
    ));

    // The IDE as any client sees it: clangd's error in main.c, nothing of `.env`.
    let diagnostics = runtime.block_on(until(&mut ide, "getDiagnostics", json!({}), |d| {
        d.to_string().contains("missing_name")
    }));
    assert!(!diagnostics.to_string().contains(".env"), "{diagnostics}");
    nvim.select_word("main.c", "2G0ww", common::ANSWER);
    runtime.block_on(until(&mut ide, "getCurrentSelection", json!({}), |s| {
        s["text"] == "missing_name"
    }));

    let model = ModelStandIn::start(script(&ws.join(".env")));
    let claude = start_claude(&place, &model, port);
    // The selection in main.c reached it.
    claude.wait_for("1 line selected", deadline.left(), || model.summary());
    // A selection in `.env`: the host sees it (no selection any more), the
    // CLI is told nothing.
    nvim.select_word(".env", "1G0", common::ANSWER);
    runtime.block_on(until(&mut ide, "getCurrentSelection", json!({}), |s| {
        s["success"] == false
    }));
    claude.type_text(PROMPT);
    claude.wait_for(PROMPT, deadline.left(), String::new);
    claude.press("Enter");
    answer_prompts_until(&claude, &model, LAST_WORDS, &deadline);
    // The selection the CLI shows is main.c's, and no text of `.env`.
    let screen = claude.screen();
    assert!(screen.contains("from main.c"), "{screen}");
    assert!(!screen.contains(SECRET), "{screen}");

    assert_nothing_of_env_reached_the_model(&model, &ws);
    drop(claude);
    drop(model);
    drop(ide);
    nvim.quit(deadline.left());
    place.wait_all_gone_but(&["bridge-tools.json"], deadline.left());
}

/// The model fetches `ReadMcpResourceTool`'s schema, reads `env` through
/// the bridge's resources, then calls the IDE's `getDiagnostics`.
fn script(env: &Path) -> Script {
    Script {
        prompt: PROMPT.to_owned(),
        calls: vec![
            ToolCall {
                id: SEARCH_ID,
                name: "ToolSearch".to_owned(),
                input: json!({"query": "select:ReadMcpResourceTool"}),
            },
            ToolCall {
                id: RESOURCE_ID,
                name: "ReadMcpResourceTool".to_owned(),
                input: json!({"server": SERVER, "uri": format!("file://{}", env.display())}),
            },
            ToolCall {
                id: DIAGNOSTICS_ID,
                name: "mcp__ide__getDiagnostics".to_owned(),
                input: json!({}),
            },
        ],
        last_words: LAST_WORDS.to_owned(),
    }
}

/// `claude` in the workspace with the bridge added as the README says,
/// the stand-in as its API and Neovim's host as its IDE.
fn start_claude(place: &Place, model: &ModelStandIn, ide_port: u16) -> Terminal {
    common::claude::write_config(&place.config(), &place.workspace);
    let mut command = Command::new("claude");
    command
        .args([
            "mcp", "add", "--scope", "user", SERVER, "--", "ide-mcp", "bridge",
        ])
        .current_dir(&place.workspace);
    common::claude::isolate(&mut command, place, model);
    let output = command.output().unwrap();
    assert!(output.status.success(), "claude mcp add: {output:?}");
    common::claude::start(
        place,
        model,
        ide_port,
        &["--permission-mode", "default"],
        |command| {
            command.env("PATH", path_with_ide_mcp());
        },
    )
}

/// `PATH` with the built `ide-mcp` first, as a user who installed it.
fn path_with_ide_mcp() -> std::ffi::OsString {
    let dir = Path::new(common::bin()).parent().unwrap().to_owned();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&rest))).unwrap()
}

/// Answers "Yes" to each permission prompt of the CLI (Enter: the first
/// choice) until the screen shows `done`.
fn answer_prompts_until(claude: &Terminal, model: &ModelStandIn, done: &str, deadline: &Deadline) {
    loop {
        let screen = claude.screen();
        if screen.contains(done) {
            return;
        }
        assert!(
            !deadline.left().is_zero(),
            "the terminal never showed {done:?}; it shows:\n{screen}\n{}",
            model.summary()
        );
        if screen.contains("Do you want to proceed?") {
            claude.press("Enter");
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// No request holds `.env`'s text; the first one holds the selection in
/// `main.c` (as the CLI words it, in a message of the `system` role) and
/// no selection in `.env`; reading `.env` as a resource failed;
/// `getDiagnostics` lists `main.c` alone.
fn assert_nothing_of_env_reached_the_model(model: &ModelStandIn, ws: &Path) {
    for request in model.requests() {
        let body = request.body.to_string();
        assert!(!body.contains(SECRET), "{body}");
        assert!(!body.contains("SECRET_TOKEN"), "{body}");
    }
    let conversation = model.conversation(PROMPT);
    let first = conversation
        .first()
        .expect("no request of the conversation")["messages"]
        .to_string();
    let main_c = ws.join("main.c");
    let selected = format!(
        "The user selected the lines 2 to 2 from {}:\\nmissing_name",
        main_c.display()
    );
    assert!(
        first.contains(&selected),
        "the selection in main.c: {first}"
    );
    assert_eq!(first.matches("The user selected").count(), 1, "{first}");
    let last = conversation.last().unwrap();
    let result = |id: &str| {
        tool_results(last)
            .find(|block| block["tool_use_id"] == id)
            .unwrap_or_else(|| panic!("no result of {id}: {last}"))
            .clone()
    };
    let read = result(RESOURCE_ID);
    assert!(
        read["content"].to_string().contains("Resource not found"),
        "{read}"
    );
    let diagnostics = result(DIAGNOSTICS_ID);
    let listed: Value =
        serde_json::from_str(diagnostics["content"][0]["text"].as_str().unwrap()).unwrap();
    let uris: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, [format!("file://{}", main_c.display())], "{listed}");
}
