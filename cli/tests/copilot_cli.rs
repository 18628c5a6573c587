//! The real `copilot` CLI, run interactively in a terminal, against the
//! Copilot face of the host of a real Neovim (whose clangd runs through
//! `ide-mcp lsp-proxy`): the CLI connects to the editor by its name when
//! the editor's lockfile appears; the editor's selection reaches the
//! model's prompt; the model's `ide-get_diagnostics` call is answered with
//! clangd's error exactly; and the model's edits are reviewed hunk by hunk
//! in Neovim: all accepted (the CLI writes its proposal), part accepted
//! (the accepted hunk in the buffer, unsaved; the file untouched; the CLI
//! told rejected), none accepted (nothing changes), and answered in the
//! terminal first (the review withdrawn from Neovim by `close_diff`, the
//! CLI writes). The model is a scripted stand-in of an OpenAI-compatible
//! API on loopback (`common::copilot`); nothing leaves the machine, and no
//! GitHub login is needed.
//!
//! Needs `copilot` (npm `@github/copilot`), `tmux`, `nvim`, `clangd` and
//! `pyright-langserver` (`tests/lsp/install.sh` installs them). Without
//! them the test fails, unless the install script found a registry
//! unreachable (`IDE_MCP_LSP_MISSING=1`, set by `.ci/run`): then it says it
//! skipped.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::claude::Deadline;
use common::copilot::{CopilotStandIn, Turn, ide_selection, last_user_text, tool_results};
use common::lsp::Place;
use common::neovim::Neovim;
use common::tmux::Terminal;
use serde_json::{Value, json};

/// The file of the selection and of the diagnostics: one error, clangd's
/// on line 9.
const MAIN_C: &str = "#include <stdio.h>\n\nint add(int a, int b) {\n  return a + b;\n}\n\nint main(void) {\n  int value = add(1, 2);\n  return missing;\n}\n";

/// Each file the model edits, before.
const BEFORE_C: &str = "int add(int a, int b) {\n  return a + b;\n}\n\nint main(void) {\n  int value = add(1, 2);\n  return value;\n}\n";
/// The model's edit: one `edit` call whose change is two hunks, lines 2
/// and 6 (one-based), three unchanged lines apart.
const OLD_STR: &str = "  return a + b;\n}\n\nint main(void) {\n  int value = add(1, 2);";
const NEW_STR: &str = "  return a + b; /* sum */\n}\n\nint main(void) {\n  int value = add(2, 3);";
/// The file as the model proposes it.
const PROPOSED_C: &str = "int add(int a, int b) {\n  return a + b; /* sum */\n}\n\nint main(void) {\n  int value = add(2, 3);\n  return value;\n}\n";
/// The first hunk accepted, the second rejected.
const PART_C: &str = "int add(int a, int b) {\n  return a + b; /* sum */\n}\n\nint main(void) {\n  int value = add(1, 2);\n  return value;\n}\n";

/// The prompts; the stand-in recognises its turns by them.
const DIAGNOSE: &str = "What is wrong in main.c?";
const EDIT_ALL: &str = "Comment add() in all.c";
const EDIT_PART: &str = "Comment add() in part.c";
const EDIT_NONE: &str = "Comment add() in none.c";
const EDIT_TERMINAL: &str = "Comment add() in terminal.c";

/// What the model says last in the turn of `prompt`.
fn last_words(prompt: &str) -> String {
    format!("Done: {prompt}.")
}

/// The whole test, start to end.
const TOTAL: Duration = Duration::from_mins(5);

/// The workspace's files, written.
struct Files {
    main_c: PathBuf,
    all: PathBuf,
    part: PathBuf,
    none: PathBuf,
    terminal: PathBuf,
}

impl Files {
    fn write(place: &Place) -> Self {
        let at = |name: &str, text: &str| {
            let path = place.workspace.join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        Self {
            main_c: at("main.c", MAIN_C),
            all: at("all.c", BEFORE_C),
            part: at("part.c", BEFORE_C),
            none: at("none.c", BEFORE_C),
            terminal: at("terminal.c", BEFORE_C),
        }
    }

    fn turns(&self) -> Vec<Turn> {
        let uri = format!("file://{}", self.main_c.display());
        let edit = |prompt: &str, file: &Path| Turn {
            prompt: prompt.to_owned(),
            calls: vec![(
                "edit".to_owned(),
                json!({"path": file, "old_str": OLD_STR, "new_str": NEW_STR}),
            )],
            last_words: last_words(prompt),
        };
        vec![
            Turn {
                prompt: DIAGNOSE.to_owned(),
                calls: vec![("ide-get_diagnostics".to_owned(), json!({"uri": uri}))],
                last_words: last_words(DIAGNOSE),
            },
            edit(EDIT_ALL, &self.all),
            edit(EDIT_PART, &self.part),
            edit(EDIT_NONE, &self.none),
            edit(EDIT_TERMINAL, &self.terminal),
        ]
    }
}

#[test]
fn copilot_sees_neovim_and_its_edits_are_reviewed_there() {
    if !common::copilot::installed() {
        return;
    }
    let start = Instant::now();
    let deadline = Deadline(start + TOTAL);
    let place = Place::new();
    let files = Files::write(&place);
    let model = CopilotStandIn::start(files.turns());

    // The CLI first: it watches its lockfile directory, and connects when
    // the editor's host writes a lockfile for its working directory.
    let copilot = common::copilot::start(&place, &model);
    copilot.wait_for("Copilot v", deadline.left(), || model.summary());
    let nvim = Neovim::start(&place, &place.workspace, "nvim", 0);
    for file in [
        &files.all,
        &files.part,
        &files.none,
        &files.terminal,
        &files.main_c,
    ] {
        nvim.command(&format!("edit {}", file.display()));
        nvim.wait_lua("#vim.lsp.buf_get_clients(0) == 1", deadline.left());
    }
    // (1) Connected to the editor, by its name: `/ide` lists it, current.
    // (The CLI also says `Connected to Neovim` when its watcher connects,
    // but for a moment only: an ephemeral line.)
    ide_listing(&copilot, &place.workspace, &deadline);
    let connected = start.elapsed();

    // (2) The selection reaches the model with the prompt, and (3) the
    // model's call of the IDE's diagnostics is answered exactly.
    nvim.wait_lua(
        "#vim.diagnostic.get(0, { severity = vim.diagnostic.severity.ERROR }) == 1",
        deadline.left(),
    );
    nvim.select_word("main.c", "3G0w", deadline.left());
    copilot.wait_for("@main.c:3", deadline.left(), String::new);
    prompt(&copilot, DIAGNOSE, &deadline);
    copilot.wait_for(&last_words(DIAGNOSE), deadline.left(), || model.summary());
    let turn = model.turn(DIAGNOSE);
    assert_eq!(
        ide_selection(&turn[0]),
        Some("File: main.c (line 3)\n```\nadd\n```\n"),
        "{}",
        last_user_text(&turn[0]).unwrap_or_default()
    );
    assert_the_diagnostics_came_back(turn.last().unwrap(), &files.main_c);
    let diagnosed = start.elapsed();

    // (4) All accepted in Neovim: the CLI writes its proposal.
    prompt(&copilot, EDIT_ALL, &deadline);
    review(&nvim, &files.all, [true, true], &deadline);
    deadline.wait_file(&files.all, PROPOSED_C, || explain(&copilot, &model));
    copilot.wait_for(&last_words(EDIT_ALL), deadline.left(), || model.summary());
    assert_eq!(
        edit_result(&model, EDIT_ALL),
        Some(format!(
            "File {} updated with changes.",
            files.all.display()
        ))
    );

    // (5) Part accepted: the hunk is in the buffer, unsaved; the CLI is
    // told rejected and writes nothing.
    prompt(&copilot, EDIT_PART, &deadline);
    review(&nvim, &files.part, [true, false], &deadline);
    deadline.wait(
        "the accepted hunk in part.c's buffer",
        || nvim.buffer(&files.part) == (PART_C.to_owned(), true),
        || format!("{:?}", nvim.buffer(&files.part)),
    );
    rejected(&copilot, "part.c", &deadline);
    assert_eq!(std::fs::read_to_string(&files.part).unwrap(), BEFORE_C);
    assert_eq!(edit_result(&model, EDIT_PART), None, "the turn ended");

    // (6) None accepted: nothing changes.
    prompt(&copilot, EDIT_NONE, &deadline);
    review(&nvim, &files.none, [false, false], &deadline);
    rejected(&copilot, "none.c", &deadline);
    assert_eq!(std::fs::read_to_string(&files.none).unwrap(), BEFORE_C);
    assert_eq!(nvim.buffer(&files.none), (BEFORE_C.to_owned(), false));
    assert_eq!(edit_result(&model, EDIT_NONE), None);

    // (7) Answered in the terminal first: the review is withdrawn from
    // Neovim (`close_diff`), and the CLI writes.
    prompt(&copilot, EDIT_TERMINAL, &deadline);
    nvim.command("buffer terminal.c");
    nvim.wait_hunks(&files.terminal, "", (2, false), deadline.left());
    assert_eq!(nvim.review_codes(&files.terminal), ["claude-edit"; 2]);
    copilot.wait_for("Do you want to edit", deadline.left(), String::new);
    copilot.press("Enter");
    deadline.wait(
        "the review withdrawn from terminal.c",
        || {
            !nvim
                .review_codes(&files.terminal)
                .contains(&"claude-edit".to_owned())
        },
        || format!("{:?}", nvim.review_codes(&files.terminal)),
    );
    deadline.wait_file(&files.terminal, PROPOSED_C, || explain(&copilot, &model));
    copilot.wait_for(&last_words(EDIT_TERMINAL), deadline.left(), || {
        model.summary()
    });

    eprintln!(
        "copilot_cli: connected {connected:?}, diagnosed {diagnosed:?}, all done {:?}; \
         the stand-in's requests:\n{}",
        start.elapsed(),
        model.summary()
    );
    drop(copilot);
    drop(model);
    nvim.quit(deadline.left());
    place.wait_all_gone(deadline.left());
}

/// `/ide` lists Neovim's workspace as the current IDE connection; closed
/// again with Escape.
fn ide_listing(copilot: &Terminal, workspace: &Path, deadline: &Deadline) {
    let listed = format!("Neovim: {} (current)", workspace.display());
    deadline.wait(
        "the CLI connected to Neovim",
        || {
            copilot.type_text("/ide");
            copilot.wait_for("/ide", deadline.left(), String::new);
            copilot.press("Enter");
            // Loaded: its settings follow the list (or the word of none).
            let screen = copilot.wait_for("Settings:", deadline.left(), String::new);
            copilot.press("Escape");
            deadline.wait(
                "the `/ide` panel closed",
                || !copilot.screen().contains("Settings:"),
                || copilot.screen(),
            );
            screen.contains(&listed) && screen.contains("Disconnect from current IDE")
        },
        || copilot.screen(),
    );
}

/// Types `text` into the CLI's prompt and sends it, once the CLI is done
/// with the turn before (keys typed while it works may be lost).
fn prompt(copilot: &Terminal, text: &str, deadline: &Deadline) {
    deadline.wait(
        "the CLI waiting for a prompt",
        || copilot.screen().contains("/ commands"),
        || copilot.screen(),
    );
    copilot.type_text(text);
    copilot.wait_for(text, deadline.left(), String::new);
    copilot.press("Enter");
}

/// Decides the two hunks of the review of `file` in Neovim (lines 2 and 6,
/// one-based), in order (`true` accepts).
fn review(nvim: &Neovim, file: &Path, decisions: [bool; 2], deadline: &Deadline) {
    let name = file.file_name().unwrap().to_str().unwrap();
    nvim.command(&format!("buffer {name}"));
    nvim.wait_hunks(file, "", (2, false), deadline.left());
    for (left, line, accept) in [(1, 1, decisions[0]), (0, 5, decisions[1])] {
        let verb = if accept { "accept" } else { "reject" };
        nvim.run_action(line, &format!("Copilot: {verb} this change"));
        nvim.wait_hunks(file, "", (left, false), deadline.left());
    }
}

/// Waits until the CLI shows its edit of `name` rejected (and its turn
/// ended: the model is not asked again).
fn rejected(copilot: &Terminal, name: &str, deadline: &Deadline) {
    let line = format!("Edit {name} The user rejected this tool call.");
    copilot.wait_for(&line, deadline.left(), String::new);
}

/// The result of the turn's `edit` call as the CLI told the model, if it
/// did.
fn edit_result(model: &CopilotStandIn, prompt: &str) -> Option<String> {
    let turn = model.turn(prompt);
    let last = turn.last()?;
    let [(_, content)] = tool_results(last)[..] else {
        return None;
    };
    Some(content.to_owned())
}

/// The CLI gave the model the IDE's answer to `get_diagnostics` as it is:
/// clangd's one error in `main_c`, in the Copilot dialect.
fn assert_the_diagnostics_came_back(last: &Value, main_c: &Path) {
    let results = tool_results(last);
    let [(id, content)] = results.as_slice() else {
        panic!("one tool result expected: {last}")
    };
    assert_eq!(*id, "call_0_0");
    let uri = format!("file://{}", main_c.display());
    let answer: Value =
        serde_json::from_str(content).unwrap_or_else(|_| panic!("not JSON: {content}"));
    assert_eq!(
        answer,
        json!([{
            "uri": uri,
            "filePath": main_c,
            "diagnostics": [{
                "message": "Use of undeclared identifier 'missing'",
                "severity": "Error",
                "range": {"start": {"line": 8, "character": 9}, "end": {"line": 8, "character": 16}},
                "source": "clang",
                "code": "undeclared_var_use",
            }],
        }])
    );
}

fn explain(copilot: &Terminal, model: &CopilotStandIn) -> String {
    format!(
        "The terminal shows:\n{}\nThe stand-in's requests:\n{}",
        copilot.screen(),
        model.summary()
    )
}
