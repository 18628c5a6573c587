//! The real `gemini` CLI, run interactively in a terminal, against the
//! Gemini face of the host of a real Neovim (whose clangd runs through
//! `ide-mcp lsp-proxy`): `/ide status` shows the editor connected with its
//! open files; the open files, the active one, its cursor and selection
//! reach the model's request; the model's edit is reviewed hunk by hunk in
//! Neovim (one accepted, one rejected) and the CLI writes exactly that,
//! which Neovim then shows unmodified. Two more turns of the same session:
//! an edit rejected in Neovim (the CLI shows it rejected and ends the
//! turn; the file is untouched), and one accepted in the terminal ("Allow
//! once": its hunk withdrawn from Neovim, the CLI writes it). The model is
//! a scripted stand-in of the Gemini API on loopback
//! (`common::gemini`); nothing leaves the machine.
//!
//! Needs `gemini` (npm `@google/gemini-cli`), `tmux`, `nvim`, `clangd` and
//! `pyright-langserver` (`tests/lsp/install.sh` installs them). Without
//! them the test fails, unless the install script found a registry
//! unreachable (`IDE_MCP_LSP_MISSING=1`, set by `.ci/run`): then it says it
//! skipped.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::claude::Deadline;
use common::gemini::{GeminiStandIn, Script, ide_context, parts};
use common::lsp::Place;
use common::neovim::Neovim;
use common::tmux::Terminal;
use serde_json::{Value, json};

const MAIN_C: &str = "#include <stdio.h>\n\nint add(int a, int b) {\n  return a + b;\n}\n\nint main(void) {\n  int value = add(1, 2);\n  return value;\n}\n";
const OTHER_C: &str = "int other(void) {\n  return 0;\n}\n";
/// The model's edit: one `replace` call whose change is two hunks, line 4
/// and line 8 (one-based), three unchanged lines apart.
const OLD_STRING: &str = "  return a + b;\n}\n\nint main(void) {\n  int value = add(1, 2);";
const NEW_STRING: &str =
    "  return a + b; /* sum */\n}\n\nint main(void) {\n  int value = add(2, 3);";
/// The first hunk accepted, the second rejected.
const CHOSEN_C: &str = "#include <stdio.h>\n\nint add(int a, int b) {\n  return a + b; /* sum */\n}\n\nint main(void) {\n  int value = add(1, 2);\n  return value;\n}\n";

/// What the user types; the stand-in recognises its conversation by it.
const PROMPT: &str = "Comment add() and call it with 2 and 3 in main.c";
const LAST_WORDS: &str = "The review is over.";
/// The second turn: an edit the user rejects in Neovim.
const REJECTED_PROMPT: &str = "Return value plus zero in main.c";
const REJECTED: (&str, &str) = ("  return value;", "  return value + 0;");
/// The third turn: an edit the user accepts in the terminal.
const TERMINAL_PROMPT: &str = "Return value times one in main.c";
const TERMINAL: (&str, &str) = ("  return value;", "  return value * 1;");

/// The whole test, start to end.
const TOTAL: Duration = Duration::from_mins(3);

#[test]
fn gemini_sees_neovim_and_its_edit_is_reviewed_there() {
    if !common::gemini::installed() {
        return;
    }
    let start = Instant::now();
    let deadline = Deadline(start + TOTAL);
    let place = Place::new();
    let main_c = place.workspace.join("main.c");
    let other_c = place.workspace.join("other.c");
    std::fs::write(&main_c, MAIN_C).unwrap();
    std::fs::write(&other_c, OTHER_C).unwrap();

    // The editor first: the CLI reads the discovery file once, at start-up.
    let nvim = Neovim::start(&place, &place.workspace, "nvim", 0);
    nvim.command(&format!("edit {}", other_c.display()));
    nvim.wait_lua("#vim.lsp.buf_get_clients(0) == 1", deadline.left());
    nvim.command(&format!("edit {}", main_c.display()));
    nvim.wait_lua("#vim.lsp.buf_get_clients(0) == 1", deadline.left());
    nvim.select_word("main.c", "3G0w", deadline.left());
    deadline.wait(
        "the discovery file",
        || place.gemini_files().len() == 1,
        String::new,
    );
    let editor_ready = start.elapsed();

    let model = GeminiStandIn::start_session(script(&main_c));
    let gemini = common::gemini::start(&place, &model);
    gemini.wait_for("Type your message", deadline.left(), || model.summary());
    let cli_ready = start.elapsed();

    // Waits until Neovim shows `n` hunks of the agent's.
    let hunks = |n: usize| {
        deadline.wait(
            &format!("{n} hunks in Neovim"),
            || nvim.hunks(&main_c, "") == (n, false),
            || explain(&gemini, &model),
        );
    };

    // (1) Connected to the editor, which has told it its open files.
    ide_status(&gemini, &deadline);

    // (2) The IDE context reaches the model with the prompt.
    submit(&gemini, &deadline, PROMPT, || {
        !model.conversation(PROMPT).is_empty()
    });
    let first = model.conversation(PROMPT).remove(0);
    let context = ide_context(&first)
        .unwrap_or_else(|| panic!("no IDE context in the first request: {first}"));
    // The cursor at the selection's end, one-based: line 3, after `add`
    // (zero-based line 2, character 7).
    assert_eq!(
        context,
        json!({
            "activeFile": {
                "path": main_c.to_str().unwrap(),
                "cursor": {"line": 3, "character": 8},
                "selectedText": "add",
            },
            "otherOpenFiles": [other_c.to_str().unwrap()],
        })
    );
    let asked = start.elapsed();

    // (3) The model's `replace` is shown in Neovim, hunk by hunk, named
    // after its agent (source `Gemini CLI`, "Gemini: …" actions).
    hunks(2);
    let reviewing = start.elapsed();
    nvim.run_action(3, "Gemini: accept this change");
    hunks(1);
    nvim.run_action(7, "Gemini: reject this change");
    hunks(0);

    // The CLI, not the IDE, writes the file: the first hunk alone.
    deadline.wait_file(&main_c, CHOSEN_C, || {
        format!(
            "The terminal shows:\n{}\nThe stand-in's requests:\n{}",
            gemini.screen(),
            model.summary()
        )
    });
    gemini.wait_for(LAST_WORDS, deadline.left(), || model.summary());
    assert_the_model_saw_the_edit(&model);
    // The user comes back to Neovim, which reloads the clean buffer.
    nvim.command("checktime");
    deadline.wait(
        "Neovim shows the write",
        || nvim.buffer(&main_c) == (CHOSEN_C.to_owned(), false),
        || gemini.screen(),
    );

    // (4) Rejected in Neovim: the hunk goes, nothing is written.
    submit(&gemini, &deadline, REJECTED_PROMPT, || {
        !model.conversation(REJECTED_PROMPT).is_empty()
    });
    hunks(1);
    nvim.run_action(8, "Gemini: reject this change");
    hunks(0);
    // The CLI shows the edit rejected and ends the turn.
    gemini.wait_for("main.c → Rejected", deadline.left(), || model.summary());
    gemini.wait_for("Request cancelled.", deadline.left(), || model.summary());
    assert_eq!(std::fs::read_to_string(&main_c).unwrap(), CHOSEN_C);

    accepted_in_the_terminal(&gemini, &deadline, &main_c, &hunks, &model);
    eprintln!(
        "gemini_cli: editor ready {editor_ready:?}, CLI ready {cli_ready:?}, \
         asked {asked:?}, hunks shown {reviewing:?}, all done {:?}; the stand-in's requests:\n{}",
        start.elapsed(),
        model.summary()
    );
    drop(gemini);
    drop(model);
    nvim.quit(deadline.left());
    place.wait_all_gone(deadline.left());
    assert_eq!(place.gemini_files(), Vec::<String>::new());
}

/// `/ide status` shows the editor connected with both files, `main.c`
/// active.
fn ide_status(gemini: &Terminal, deadline: &Deadline) {
    submit(gemini, deadline, "/ide status", || {
        let screen = gemini.screen();
        screen.contains("Connected to Neovim") || screen.contains("Disconnected")
    });
    let screen = loop {
        let screen = gemini.screen();
        if screen.contains("Connected to Neovim") || screen.contains("Disconnected") {
            break screen;
        }
        assert!(
            !deadline.left().is_zero(),
            "no status; the screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        screen.contains("\u{1f7e2} Connected to Neovim")
            && screen.contains("- main.c (active)")
            && screen.contains("- other.c"),
        "{screen}"
    );
}

/// The model edits `file` with the CLI's `replace` tool, once per turn.
fn script(file: &Path) -> Vec<Script> {
    let replace = |instruction: &str, (old, new): (&str, &str)| {
        (
            "replace".to_owned(),
            json!({"file_path": file, "instruction": instruction,
                "old_string": old, "new_string": new}),
        )
    };
    vec![
        Script {
            prompt: PROMPT.to_owned(),
            calls: vec![replace(
                "Comment add() and call it with 2 and 3.",
                (OLD_STRING, NEW_STRING),
            )],
            last_words: LAST_WORDS.to_owned(),
        },
        Script {
            prompt: REJECTED_PROMPT.to_owned(),
            calls: vec![replace("Return value plus zero.", REJECTED)],
            last_words: "Not rejected?".to_owned(),
        },
        Script {
            prompt: TERMINAL_PROMPT.to_owned(),
            calls: vec![replace("Return value times one.", TERMINAL)],
            last_words: "Accepted in the terminal.".to_owned(),
        },
    ]
}

/// The CLI offered the `replace` tool with the schema the stand-in was
/// written for, and told the model the edit succeeded.
fn assert_the_model_saw_the_edit(model: &GeminiStandIn) {
    let conversation = model.conversation(PROMPT);
    let first = conversation.first().unwrap();
    let replace = first["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["functionDeclarations"].as_array())
        .flatten()
        .find(|tool| tool["name"] == "replace")
        .unwrap_or_else(|| panic!("the CLI offered no `replace` tool: {first}"));
    let schema = replace
        .get("parametersJsonSchema")
        .or_else(|| replace.get("parameters"))
        .unwrap_or(&Value::Null);
    assert_eq!(
        schema["required"],
        json!(["file_path", "instruction", "old_string", "new_string"]),
        "the CLI's `replace` tool changed: {replace}"
    );
    let last = conversation.last().unwrap();
    let result = parts(last)
        .find_map(|part| part.get("functionResponse"))
        .unwrap_or_else(|| panic!("no result of the edit in the last request: {last}"));
    assert_eq!(result["name"], "replace", "{result}");
    assert!(result["response"].get("error").is_none(), "{result}");
}

/// The terminal and the stand-in's requests, for a failure's message.
fn explain(gemini: &common::tmux::Terminal, model: &GeminiStandIn) -> String {
    format!(
        "The terminal shows:\n{}\nThe stand-in's requests:\n{}",
        gemini.screen(),
        model.summary()
    )
}

/// (5) Accepted in the terminal: the CLI closes the review (its hunk
/// withdrawn from Neovim) and writes the file itself.
fn accepted_in_the_terminal(
    gemini: &common::tmux::Terminal,
    deadline: &Deadline,
    main_c: &Path,
    hunks: &dyn Fn(usize),
    model: &GeminiStandIn,
) {
    submit(gemini, deadline, TERMINAL_PROMPT, || {
        !model.conversation(TERMINAL_PROMPT).is_empty()
    });
    hunks(1);
    gemini.wait_for("Allow once", deadline.left(), || model.summary());
    gemini.press("Enter");
    hunks(0);
    let accepted = CHOSEN_C.replacen(TERMINAL.0, TERMINAL.1, 1);
    deadline.wait_file(main_c, &accepted, || gemini.screen());
}

/// Types `text` and Enter, as the user submits a prompt, until `sent()`.
/// Gemini CLI takes an Enter that reaches it within 30 ms of the last typed
/// key for a new line (`bufferFastReturn`: the line end of a paste), and on
/// a loaded machine the typed keys and the Enter can reach it that close:
/// the text then stays in the input box. So while `sent()` is false and the
/// input box still holds `text` a second after an Enter, Enter is pressed
/// again (then long after the last key).
fn submit(gemini: &Terminal, deadline: &Deadline, text: &str, sent: impl Fn() -> bool) {
    gemini.type_text(text);
    gemini.wait_for(text, deadline.left(), String::new);
    loop {
        gemini.press("Enter");
        let pressed = Instant::now();
        loop {
            if sent() {
                return;
            }
            assert!(
                !deadline.left().is_zero(),
                "never submitted: {text}\n{}",
                gemini.screen()
            );
            if pressed.elapsed() > Duration::from_secs(1) && input_holds(&gemini.screen(), text) {
                eprintln!("gemini_cli: the Enter made a new line; pressed again");
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Whether the CLI's input box (the line just above its status line,
/// `workspace (/directory)`, blank lines aside) holds `text`.
fn input_holds(screen: &str, text: &str) -> bool {
    let lines: Vec<&str> = screen.lines().collect();
    let Some(status) = lines
        .iter()
        .position(|line| line.contains("workspace (/directory)"))
    else {
        return false;
    };
    lines[..status]
        .iter()
        .rev()
        .find(|line| !line.trim().is_empty())
        .is_some_and(|line| line.contains(text))
}
