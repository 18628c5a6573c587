//! The real `claude` CLI, run interactively in a terminal, proposes an edit
//! to a file open in Neovim (whose clangd runs through `ide-mcp
//! lsp-proxy`); the CLI sends it to the IDE (`openDiff`), the user accepts
//! one hunk and rejects the other in Neovim, and the CLI writes exactly
//! that. The model is a scripted stand-in of the Messages API on loopback
//! (`common::model`); nothing leaves the machine.
//!
//! Needs `claude` (npm `@anthropic-ai/claude-code`), `tmux`, `nvim`,
//! `clangd` and `pyright-langserver` (`tests/lsp/install.sh` installs them).
//! Without them the test fails, unless the install script found a registry
//! unreachable (`IDE_MCP_LSP_MISSING=1`, set by `.ci/run`): then it says it
//! skipped.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::claude::Deadline;
use common::lsp::Place;
use common::model::{ModelStandIn, Script, ToolCall, text_of, tool_results};
use common::neovim::Neovim;
use common::tmux::Terminal;
use serde_json::json;

const MAIN_C: &str = "#include <stdio.h>\n\nint add(int a, int b) {\n  return a + b;\n}\n\nint main(void) {\n  int value = add(1, 2);\n  return value;\n}\n";
/// The model's edit: one `Edit` call whose change is two hunks, line 4
/// and line 8 (one-based), three unchanged lines apart.
const OLD_STRING: &str = "  return a + b;\n}\n\nint main(void) {\n  int value = add(1, 2);";
const NEW_STRING: &str =
    "  return a + b; /* sum */\n}\n\nint main(void) {\n  int value = add(2, 3);";
/// The first hunk accepted, the second rejected.
const CHOSEN_C: &str = "#include <stdio.h>\n\nint add(int a, int b) {\n  return a + b; /* sum */\n}\n\nint main(void) {\n  int value = add(1, 2);\n  return value;\n}\n";

/// The id of the scripted `Read` call.
const READ_ID: &str = "toolu_stand_in_read";
/// The id of the scripted `Edit` call.
const EDIT_ID: &str = "toolu_stand_in_edit";

/// What the user types; the stand-in recognises its conversation by it.
const PROMPT: &str = "Comment add() and call it with 2 and 3 in main.c";
const LAST_WORDS: &str = "The review is over.";

/// The whole test, start to end.
const TOTAL: Duration = Duration::from_mins(2);
/// What the CLI says when its Edit is waiting in the IDE.
const OPENED_IN_IDE: &str = "Opened changes in Neovim";

#[test]
fn claude_s_edit_is_reviewed_in_neovim_and_the_cli_writes_the_chosen_hunks() {
    if !common::claude::installed() {
        return;
    }
    let start = Instant::now();
    let deadline = Deadline(start + TOTAL);
    let place = Place::new();
    let main_c = place.workspace.join("main.c");
    std::fs::write(&main_c, MAIN_C).unwrap();
    let nvim = Neovim::start(&place, &place.workspace, "nvim", 0);
    nvim.command(&format!("edit {}", main_c.display()));
    nvim.wait_lua("#vim.lsp.buf_get_clients(0) == 1", deadline.left());
    let (lockfile, _) = place
        .wait_lockfiles_of(&nvim.running, |found| found.len() == 1)
        .remove(0);
    let editor_ready = start.elapsed();

    let model = ModelStandIn::start(script(&main_c));
    let claude = start_claude(&place, &model, common::lockfile_port(&lockfile));
    // Connected to our IDE: the host has told it which file is open.
    claude.wait_for("In main.c", deadline.left(), || model.summary());
    let cli_ready = start.elapsed();
    claude.type_text(PROMPT);
    claude.wait_for(PROMPT, deadline.left(), String::new);
    claude.press("Enter");

    // The CLI asks permission in the terminal and, at once, in the IDE:
    // the two hunks appear in Neovim, and the terminal prompt says so.
    nvim.wait_hunks(&main_c, "", (2, false), deadline.left());
    let reviewing = start.elapsed();
    assert_eq!(
        nvim.lua("_G.prompts[1]").trim(),
        "Claude Code proposes 2 changes to main.c"
    );
    claude.wait_for(OPENED_IN_IDE, deadline.left(), || model.summary());
    nvim.run_action(3, "Claude: accept this change");
    nvim.wait_hunks(&main_c, "", (1, false), deadline.left());
    nvim.run_action(7, "Claude: reject this change");
    nvim.wait_hunks(&main_c, "", (0, false), deadline.left());

    // The CLI, not the IDE, writes the file: the first hunk alone.
    deadline.wait_file(&main_c, CHOSEN_C, || {
        format!("The terminal shows:\n{}", claude.screen())
    });
    claude.wait_for(LAST_WORDS, deadline.left(), || model.summary());
    assert_the_model_saw_the_review(&model);
    eprintln!(
        "claude_review: editor ready {editor_ready:?}, CLI connected {cli_ready:?}, \
         hunks shown {reviewing:?}, all done {:?}; the stand-in's requests:\n{}",
        start.elapsed(),
        model.summary()
    );
    drop(claude);
    drop(model);
    nvim.quit(deadline.left());
    place.wait_all_gone(deadline.left());
}

/// The model reads `file` (the CLI refuses an edit of a file not read in
/// the conversation), then edits it with the CLI's `Edit` tool.
fn script(file: &Path) -> Script {
    Script {
        prompt: PROMPT.to_owned(),
        calls: vec![
            ToolCall {
                id: READ_ID,
                name: "Read".to_owned(),
                input: json!({"file_path": file}),
            },
            ToolCall {
                id: EDIT_ID,
                name: "Edit".to_owned(),
                input: json!({"file_path": file, "old_string": OLD_STRING,
                    "new_string": NEW_STRING}),
            },
        ],
        last_words: LAST_WORDS.to_owned(),
    }
}

/// `claude --permission-mode default` in the workspace, past its
/// first-run dialogs, with the stand-in as its API and our host as its IDE.
fn start_claude(place: &Place, model: &ModelStandIn, ide_port: u16) -> Terminal {
    common::claude::write_config(&place.config(), &place.workspace);
    common::claude::start(
        place,
        model,
        ide_port,
        &["--permission-mode", "default"],
        |_| {},
    )
}

/// The CLI offered the `Edit` tool the stand-in calls, with the schema it
/// was written for, and told the model the user changed the proposal.
fn assert_the_model_saw_the_review(model: &ModelStandIn) {
    let conversation = model.conversation(PROMPT);
    let first = conversation
        .first()
        .expect("no request of the conversation");
    let edit = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "Edit")
        .expect("the CLI offered no `Edit` tool");
    let schema = &edit["input_schema"];
    assert_eq!(
        schema["required"],
        json!(["file_path", "old_string", "new_string"]),
        "the CLI's `Edit` tool changed: {schema}"
    );
    let last = conversation.last().unwrap();
    let result = tool_results(last)
        .find(|block| block["tool_use_id"] == EDIT_ID)
        .unwrap_or_else(|| panic!("no result of the edit in the last request: {last}"));
    assert_ne!(result["is_error"], true, "{result}");
    assert!(
        text_of(&result["content"]).contains("The user modified your proposed changes"),
        "{result}"
    );
}
