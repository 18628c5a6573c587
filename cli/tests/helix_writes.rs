//! A long session in Helix 25.07.1, as recorded with clangd 14 behind
//! `ide-mcp lsp-proxy` (`tests/fixtures/helix/writes.jsonl`, made by
//! `bash tests/helix/record.sh --writes`; README "Development"), replayed
//! without Helix nor clangd, which CI cannot install: the real proxy, with
//! `lsp-echo --replay` playing clangd's side, the test writing Helix's
//! messages in the recorded order and, between the steps, Claude's ten
//! writes as the CLI's auto mode makes them (a new file beside, renamed
//! over: `tests/fixtures/helix/writes/NN-NAME`).
//!
//! Helix reloads nothing by itself, so the proxy's IDE shows each write
//! with an edit (`workspace/applyEdit`); Helix flags the buffer modified,
//! and the next write must show all the same. After each step the IDE
//! says each file clean or dirty as Helix's text and the disk are, and the
//! write's markers are those the step leaves: kept, reverted, replaced by
//! a later write's, dismissed by typing. At the end the proxy has sent
//! Helix exactly the edits it sent in the recording, and clangd received
//! what it received in the recording.

mod common;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::ide::claude_writes;
use common::lsp::{Place, WAIT};
use common::replay::{self, Replay};
use common::ws::WsClient;
use serde_json::{Value, json};

const RECORDING: &str = include_str!("../../tests/fixtures/helix/writes.jsonl");

/// The recorded stream: the server's name.
const CLANGD: &str = "clangd";

/// The session's two files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum File {
    Main,
    Util,
}

impl File {
    fn name(self) -> &'static str {
        match self {
            Self::Main => "main.c",
            Self::Util => "util.c",
        }
    }
}

/// A recorded step: what Claude wrote before it (the number of its text
/// in `tests/fixtures/helix/writes/`), and what the IDE says after it:
/// each file dirty or not, and the lines (0-based) of its markers.
struct Step {
    name: &'static str,
    write: Option<(&'static str, File)>,
    dirty: [bool; 2],
    markers: [&'static [u32]; 2],
}

const fn step(
    name: &'static str,
    write: Option<(&'static str, File)>,
    dirty: [bool; 2],
    markers: [&'static [u32]; 2],
) -> Step {
    Step {
        name,
        write,
        dirty,
        markers,
    }
}

const CLEAN: [bool; 2] = [false, false];
const NONE: [&[u32]; 2] = [&[], &[]];

/// The session, as `record.sh --writes` typed it.
const STEPS: [Step; 28] = [
    step("open", None, CLEAN, NONE),
    // Each write shows in its buffer, marked; "keep all" at line 4.
    step("write-01", Some(("01", File::Main)), CLEAN, [&[3], &[]]),
    step("keep-all-01", None, CLEAN, NONE),
    // The second write to a buffer Helix flags modified shows the same.
    step("write-02", Some(("02", File::Main)), CLEAN, [&[7], &[]]),
    step("keep-02", None, CLEAN, NONE),
    // util.c, not shown, takes the edit too; a later write's markers
    // replace the earlier ones.
    step("write-03", Some(("03", File::Util)), CLEAN, [&[], &[1]]),
    step("write-04", Some(("04", File::Util)), CLEAN, [&[], &[5]]),
    // Reverted in the buffer only, then saved (`:w!`).
    step("revert-04", None, [false, true], NONE),
    step("save-04", None, CLEAN, NONE),
    // Two hunks: one reverted, the other kept, then saved.
    step("write-05", Some(("05", File::Main)), CLEAN, [&[3, 7], &[]]),
    step("revert-05", None, [true, false], [&[7], &[]]),
    step("keep-05", None, [true, false], NONE),
    step("save-05", None, CLEAN, NONE),
    step("write-06", Some(("06", File::Main)), CLEAN, [&[8], &[]]),
    step("keep-all-06", None, CLEAN, NONE),
    // The user types in util.c; Claude writes main.c meanwhile; the user
    // types in main.c, which dismisses the markers; both saved.
    step("type-util", None, [false, true], NONE),
    step(
        "write-07",
        Some(("07", File::Main)),
        [false, true],
        [&[10], &[]],
    ),
    step("type-main", None, [true, true], NONE),
    step("save-main", None, [false, true], NONE),
    step("save-util", None, CLEAN, NONE),
    step("write-08", Some(("08", File::Util)), CLEAN, [&[], &[2]]),
    step("keep-all-08", None, CLEAN, NONE),
    // "revert all", then saved.
    step("write-09", Some(("09", File::Main)), CLEAN, [&[2], &[]]),
    step("revert-all-09", None, [true, false], NONE),
    step("save-09", None, CLEAN, NONE),
    // The tenth write shows as the first did.
    step("write-10", Some(("10", File::Main)), CLEAN, [&[7], &[]]),
    step("keep-all-10", None, CLEAN, NONE),
    // `:qa!`: Helix's `shutdown` and `exit`; checked by `finish`.
    step("quit", None, CLEAN, NONE),
];

/// The text of `tests/fixtures/helix/writes/NAME`.
fn fixture(name: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/helix/writes");
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// What Helix wrote at each `:w!`, in order: the buffer's text then.
fn saves() -> VecDeque<(File, String)> {
    let reverted_04 = fixture("04-util.c").replacen("return x * 3", "return 3 * x", 1);
    VecDeque::from([
        (File::Util, reverted_04.clone()),
        (
            File::Main,
            fixture("05-main.c").replacen("/* two */", "/* one */", 1),
        ),
        (File::Main, format!("{}// mine\n", fixture("07-main.c"))),
        (File::Util, format!("// a note of the user\n{reverted_04}")),
        (
            File::Main,
            fixture("09-main.c").replacen("static int add(", "int add(", 1),
        ),
    ])
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The lines of the markers in the last `publishDiagnostics` of `uri`
/// the proxy wrote Helix (none before the first).
fn markers(output: &[u8], uri: &str) -> Vec<u32> {
    let last = replay::complete_bodies(output)
        .0
        .iter()
        .map(|body| serde_json::from_str::<Value>(body).unwrap())
        .rfind(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri);
    let Some(last) = last else {
        return Vec::new();
    };
    let mut lines: Vec<u32> = last["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["source"] == "Claude Code")
        .map(|d| u32::try_from(d["range"]["start"]["line"].as_u64().unwrap()).unwrap())
        .collect();
    lines.sort_unstable();
    lines
}

/// The IDE's answers after `step`, each awaited (the proxy passes what it
/// sees to the host as it comes), at most [`WAIT`].
async fn check(step: &Step, client: &mut WsClient, replay: &Replay, files: &[PathBuf; 2]) {
    for (i, path) in files.iter().enumerate() {
        let expected = json!({"success": true, "filePath": path, "isDirty": step.dirty[i],
            "isUntitled": false});
        let args = json!({"filePath": path});
        let start = Instant::now();
        loop {
            let answer = client.call("checkDocumentDirty", args.clone()).await;
            if answer == expected || start.elapsed() > WAIT {
                assert_eq!(answer, expected, "{}: {}", step.name, path.display());
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let uri = uri(path);
        let start = Instant::now();
        loop {
            let shown = markers(&replay.proxy(CLANGD).output(), &uri);
            if shown == step.markers[i] || start.elapsed() > WAIT {
                assert_eq!(shown, step.markers[i], "{}: {}", step.name, path.display());
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Never to the model.
        let diagnostics = client.call("getDiagnostics", json!({"uri": uri})).await;
        assert!(
            !diagnostics.to_string().contains("Claude Code"),
            "{}: {diagnostics}",
            step.name
        );
    }
}

/// Waits until the host's log (at `log`) says it first looked at each of
/// `files` on disk, at most [`WAIT`].
fn first_looks(log: &Path, files: &[PathBuf; 2]) {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let looked = files.iter().all(|path| {
            text.lines().any(|line| {
                line.contains("first look at an open file on disk")
                    && line.contains(&path.display().to_string())
            })
        });
        if looked {
            return;
        }
        assert!(start.elapsed() < WAIT, "no first look in the log:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The edits (`workspace/applyEdit`) among `bodies`.
fn edits(bodies: impl IntoIterator<Item = Value>) -> Vec<Value> {
    bodies
        .into_iter()
        .filter(|m| m["method"] == "workspace/applyEdit")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_writes_in_a_recorded_helix_session_show_as_the_first() {
    let place = Place::new();
    let ws = place.workspace.clone();
    let files = [File::Main, File::Util].map(|file| ws.join(file.name()));
    for (file, path) in [File::Main, File::Util].iter().zip(&files) {
        std::fs::write(path, fixture(&format!("00-{}", file.name()))).unwrap();
    }
    let entries = replay::load(RECORDING, &[("${WORKSPACE}", ws.to_str().unwrap())]);
    let recorded_edits = edits(entries.iter().filter_map(|entry| match entry {
        replay::Entry::Editor {
            from_editor: false,
            body,
            ..
        } => Some(serde_json::from_str(body).unwrap()),
        _ => None,
    }));
    assert_eq!(recorded_edits.len(), 13, "ten writes and three reverts");
    // Before Helix's `didSave`, it had written the file.
    let saves = Arc::new(Mutex::new(saves()));
    let pending = Arc::clone(&saves);
    let ws_of_saves = ws.clone();
    let log = place.dir.path().join("proxy.log");
    let mut replay = Replay::start_with(
        &place,
        entries,
        &["--log", log.to_str().unwrap()],
        move |body| {
            let message: Value = serde_json::from_str(body).unwrap();
            if message["method"] == "textDocument/didSave" {
                let (file, text) = pending.lock().unwrap().pop_front().expect("a save");
                let path = ws_of_saves.join(file.name());
                assert_eq!(
                    message["params"]["textDocument"]["uri"],
                    uri(&path),
                    "Helix saved another file"
                );
                std::fs::write(path, text).unwrap();
            }
        },
    );
    let mut client: Option<WsClient> = None;
    for step in &STEPS {
        if let Some((number, file)) = step.write {
            let path = ws.join(file.name());
            let text = fixture(&format!("{number}-{}", file.name()));
            claude_writes(&[(&path, &text)]);
        }
        let name = tokio::task::block_in_place(|| replay.next_step());
        assert_eq!(name.as_deref(), Some(step.name));
        eprintln!("step {}", step.name);
        if client.is_none() {
            let lockfiles = place.wait_lockfiles(replay.proxy(CLANGD), |found| found.len() == 1);
            let (lockfile, content) = &lockfiles[0];
            assert_eq!(content["ideName"], "Helix", "{content}");
            let port = common::lockfile_port(lockfile);
            client = Some(common::ws::connect(port, content["authToken"].as_str().unwrap()).await);
        }
        if step.name == "quit" {
            // Helix is gone, and the IDE with it.
            break;
        }
        check(step, client.as_mut().unwrap(), &replay, &files).await;
        if step.name == "open" {
            // A write is told from the disk as the host first looked at it
            // (once a file is open, at its next poll): after that look.
            first_looks(&log, &files);
        }
    }
    assert!(saves.lock().unwrap().is_empty(), "saves left");

    // What clangd received is what it received in the recording: Helix's
    // messages, less our commands and Helix's answers to our edits, and
    // Claude's markers taken out of code actions' contexts.
    let changes = tokio::task::block_in_place(|| replay.finish_as_recorded());
    // Each write shown with the edit it had in the recording, the tenth as
    // the first; the reverts too.
    assert_eq!(edits(changes[CLANGD].written.clone()), recorded_edits);
    place.wait_all_gone(common::ide::SERVER);
    let mut client = client.unwrap();
    while client.next_message(common::ide::SERVER).await.is_some() {}
}
