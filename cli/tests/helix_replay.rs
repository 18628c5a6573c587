//! Helix 25.07.1, as recorded with clangd 14 and pyright 1.1.414 behind
//! `ide-mcp lsp-proxy` (`tests/fixtures/helix/session.jsonl`, made by
//! `tests/helix/record.sh`; README "Development"), replayed without Helix
//! nor the servers, which CI cannot install: the real proxy, one per
//! server, each with `lsp-echo --replay` playing its server's side,
//! and the test writing Helix's messages in the recorded order. At each
//! step Helix took, an MCP client reads over the IDE WebSocket exactly what
//! Claude Code would; at the end each server has received Helix's bytes
//! unchanged, and Helix the server's, but for the answers the proxy
//! extends with its code action.
//!
//! The session: `hx main.c` in a folder without `.git` (Helix sends
//! `rootUri: null`, `workspaceFolders: []`, only `rootPath`), `:open
//! app.py`, an unsaved error typed in each, `:w` of each, `int` selected on
//! line 2 of `main.c` and `space a`, "Send selection to Claude Code" picked
//! from the menu, `:qa`.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::ide::notification;
use common::lsp::{Place, WAIT};
use common::replay::{self, Changes, Replay};
use common::ws::WsClient;
use serde_json::{Value, json};

const RECORDING: &str = include_str!("../../tests/fixtures/helix/session.jsonl");

/// The files as Helix opened them, and as `:w` wrote them.
const MAIN_C: &str = "int main(void) {\n  int value = 1;\n  return value;\n}\n";
const SAVED_C: &str = "int main(void) {\n  int value = 1;\n  return missing_name;\n}\n";
const APP_PY: &str = "count: int = 1\n";
const SAVED_PY: &str = "count: int = \"one\"\n";

/// The recorded streams: each server's name.
const CLANGD: &str = "clangd";
const PYRIGHT: &str = "pyright-langserver";

/// Our code action's title and command.
const SEND: &str = "Send selection to Claude Code";
const SEND_COMMAND: &str = "ide-mcp.sendSelection";

/// The steps of the recording, in order.
const STEPS: [&str; 9] = [
    "open-c",
    "open-py",
    "edit-c",
    "edit-py",
    "save-py",
    "save-c",
    "code-action",
    "send",
    "quit",
];

/// The workspace's two files.
struct Files {
    ws: PathBuf,
    main_c: PathBuf,
    app_py: PathBuf,
}

impl Files {
    fn new(ws: &Path) -> Self {
        let files = Self {
            ws: ws.to_owned(),
            main_c: ws.join("main.c"),
            app_py: ws.join("app.py"),
        };
        std::fs::write(&files.main_c, MAIN_C).unwrap();
        std::fs::write(&files.app_py, APP_PY).unwrap();
        files
    }
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// A `getOpenEditors` tab.
fn tab(path: &Path, language: &str, active: bool, dirty: bool) -> Value {
    json!({
        "uri": uri(path),
        "isActive": active,
        "label": path.file_name().unwrap().to_str().unwrap(),
        "languageId": language,
        "isDirty": dirty,
    })
}

/// A file's `getDiagnostics` entry with one error: `range` is start line,
/// start character, end line, end character.
fn one_error(path: &Path, message: &str, range: [u32; 4], source: &str, code: &str) -> Value {
    let [line, character, end_line, end_character] = range;
    json!({"uri": uri(path), "diagnostics": [{
        "message": message,
        "severity": "Error",
        "range": {"start": {"line": line, "character": character}, "end": {"line": end_line, "character": end_character}},
        "source": source,
        "code": code,
    }]})
}

/// clangd's diagnostic of the unsaved `main.c`, as the IDE gives it.
fn clang_error(main_c: &Path) -> Value {
    one_error(
        main_c,
        "Use of undeclared identifier 'missing_name'",
        [2, 9, 2, 21],
        "clang",
        "undeclared_var_use",
    )
}

/// pyright's diagnostic of the unsaved `app.py`, as the IDE gives it
/// (pyright indents its second line with no-break spaces).
fn pyright_error(app_py: &Path) -> Value {
    one_error(
        app_py,
        "Type \"Literal['one']\" is not assignable to declared type \"int\"\n\u{a0}\u{a0}\"Literal['one']\" is not assignable to \"int\"",
        [0, 13, 0, 18],
        "Pyright",
        "reportAssignmentType",
    )
}

/// Calls `tool` until it answers `expected` exactly (the proxies pass
/// what they see to the host as it comes), at most [`WAIT`].
async fn expect(client: &mut WsClient, tool: &str, args: Value, expected: &Value) {
    let start = Instant::now();
    loop {
        let answer = client.call(tool, args.clone()).await;
        if answer == *expected || start.elapsed() > WAIT {
            assert_eq!(answer, *expected, "{tool} {args}");
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether an editor message is our code action's command, which the proxy
/// answers itself and never forwards.
fn is_our_command(body: &str) -> bool {
    let message: Value = serde_json::from_str(body).unwrap();
    message["method"] == "workspace/executeCommand" && message["params"]["command"] == SEND_COMMAND
}

/// Before Helix sent a `didSave`, it had written the file.
fn save_as_helix_did(body: &str) {
    let message: Value = serde_json::from_str(body).unwrap();
    if message["method"] != "textDocument/didSave" {
        return;
    }
    let uri = message["params"]["textDocument"]["uri"].as_str().unwrap();
    let path = Path::new(uri.strip_prefix("file://").unwrap());
    let text = match path.file_name().unwrap().to_str().unwrap() {
        "main.c" => SAVED_C,
        "app.py" => SAVED_PY,
        other => panic!("Helix saved {other}"),
    };
    std::fs::write(path, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_helix_session_reaches_claude_as_it_did() {
    let place = Place::new();
    let files = Files::new(&place.workspace);
    let pyright = place.dir.path().join("pyright");
    let entries = replay::load(
        RECORDING,
        &[
            ("${WORKSPACE}", files.ws.to_str().unwrap()),
            ("${PYRIGHT}", pyright.to_str().unwrap()),
        ],
    );
    let mut replay = Replay::start(&place, entries, save_as_helix_did);
    let mut client = None;
    let mut steps = Vec::new();
    while let Some(step) = tokio::task::block_in_place(|| replay.next_step()) {
        eprintln!("step {step}");
        if step == "open-c" {
            client = Some(open_c(&place, &replay, &files).await);
        } else {
            let client = client.as_mut().expect("open-c comes first");
            check_step(&step, client, &place, &files).await;
        }
        steps.push(step);
    }
    assert_eq!(steps, STEPS);

    // `:qa`: Helix's `shutdown` and `exit` reached each server, and Helix
    // went: the proxies end with their servers, the host with them (it
    // lingers for no time here), and nothing is left.
    let changes = tokio::task::block_in_place(|| replay.finish(is_our_command));
    assert_eq!(changes.keys().collect::<Vec<_>>(), [CLANGD, PYRIGHT]);
    for (stream, changes) in &changes {
        // clangd's answers to Helix's `initialize` and `space a`, and the
        // proxy's to our command; pyright's `initialize` answer.
        let expected: &[&str] = match stream.as_str() {
            CLANGD => &[
                "initialize",
                "textDocument/codeAction",
                "workspace/executeCommand",
            ],
            _ => &["initialize"],
        };
        assert_eq!(check_changes(stream, changes), expected, "{stream}");
    }
    place.wait_all_gone(common::ide::SERVER);
    let mut client = client.unwrap();
    while client.next_message(common::ide::SERVER).await.is_some() {}
}

/// `hx main.c`: the IDE of the workspace Helix named only by `rootPath`,
/// named after Helix's `clientInfo`, with `main.c` open and active.
async fn open_c(place: &Place, replay: &Replay, files: &Files) -> WsClient {
    let lockfiles = place.wait_lockfiles(replay.proxy(CLANGD), |found| found.len() == 1);
    let (lockfile, content) = &lockfiles[0];
    assert_eq!(content["ideName"], "Helix", "{content}");
    assert_eq!(content["workspaceFolders"], json!([files.ws]), "{content}");
    let port = common::lockfile_port(lockfile);
    let mut client = common::ws::connect(port, content["authToken"].as_str().unwrap()).await;
    let ws = &files.ws;
    expect(
        &mut client,
        "getWorkspaceFolders",
        json!({}),
        &json!({"success": true, "folders": [{"name": "ws", "uri": uri(ws), "path": ws}], "rootPath": ws}),
    )
    .await;
    let tabs = json!({"tabs": [tab(&files.main_c, "c", true, false)]});
    expect(&mut client, "getOpenEditors", json!({}), &tabs).await;
    expect(&mut client, "getDiagnostics", json!({}), &json!([])).await;
    client
}

/// What the IDE says after each later step.
async fn check_step(step: &str, client: &mut WsClient, place: &Place, files: &Files) {
    let Files { main_c, app_py, .. } = files;
    let both = json!([pyright_error(app_py), clang_error(main_c)]);
    match step {
        // `:open app.py`: pyright's proxy joins the same IDE.
        "open-py" => {
            editors(client, files, (false, false), (true, false)).await;
            expect(client, "getDiagnostics", json!({}), &json!([])).await;
            assert_eq!(place.lockfiles().len(), 1);
        }
        // `:open main.c`, `return missing_name;` typed: dirty, clangd's
        // error on the unsaved text; main.c active again (Helix tells the
        // server nothing of `:open`, but the `didChange` says it); the
        // completion Helix asked for once the typing stopped put the
        // cursor after the `;`.
        "edit-c" => {
            let one = json!({"uri": uri(main_c)});
            expect(client, "getDiagnostics", one, &json!([clang_error(main_c)])).await;
            editors(client, files, (true, true), (false, false)).await;
            expect_cursor(client, main_c, 2, 22).await;
        }
        // `:open app.py`, `"one"` typed: both errors; the cursor after
        // `"one"` (Helix's completion again, triggered by the `"`).
        "edit-py" => {
            expect(client, "getDiagnostics", json!({}), &both).await;
            editors(client, files, (false, true), (true, true)).await;
            expect_cursor(client, app_py, 0, 18).await;
        }
        // `:w`: app.py clean; main.c still dirty.
        "save-py" => {
            expect_dirty(client, app_py, false).await;
            expect_dirty(client, main_c, true).await;
        }
        // `:open main.c`, `:w`: both clean and main.c active (its
        // `didSave`), the errors still there (they are on disk now).
        "save-c" => {
            editors(client, files, (true, false), (false, false)).await;
            expect(client, "getDiagnostics", json!({}), &both).await;
            open_file_is_refused(client, app_py).await;
        }
        "code-action" => code_action(client, main_c).await,
        // "Send selection to Claude Code" picked: `at_mentioned` of line 2.
        "send" => {
            let mention = notification(client, "at_mentioned", |_| true).await;
            assert_eq!(
                mention["params"],
                json!({"filePath": main_c, "lineStart": 1, "lineEnd": 1}),
                "{mention}"
            );
        }
        // Helix's `shutdown` and `exit` follow: checked by the caller.
        "quit" => {}
        other => panic!("a step the test does not know: {other}"),
    }
}

/// Expects `getOpenEditors` to list main.c and app.py, each (active,
/// dirty) as given, and `checkDocumentDirty` to agree.
async fn editors(client: &mut WsClient, files: &Files, main_c: (bool, bool), app_py: (bool, bool)) {
    let tabs = json!({"tabs": [
        tab(&files.main_c, "c", main_c.0, main_c.1),
        tab(&files.app_py, "python", app_py.0, app_py.1),
    ]});
    expect(client, "getOpenEditors", json!({}), &tabs).await;
    expect_dirty(client, &files.main_c, main_c.1).await;
    expect_dirty(client, &files.app_py, app_py.1).await;
}

/// Expects the selection to be a cursor in `path`.
async fn expect_cursor(client: &mut WsClient, path: &Path, line: u32, character: u32) {
    let cursor = json!({"line": line, "character": character});
    let selection = json!({
        "success": true, "text": "", "filePath": path, "fileUrl": uri(path),
        "selection": {"start": cursor, "end": cursor, "isEmpty": true},
    });
    expect(client, "getCurrentSelection", json!({}), &selection).await;
}

async fn expect_dirty(client: &mut WsClient, path: &Path, is_dirty: bool) {
    let expected =
        json!({"success": true, "filePath": path, "isDirty": is_dirty, "isUntitled": false});
    expect(
        client,
        "checkDocumentDirty",
        json!({"filePath": path}),
        &expected,
    )
    .await;
}

/// Helix handles `window/showDocument` but does not say so in its
/// `initialize`: `openFile` is refused, and nothing is sent to Helix.
async fn open_file_is_refused(client: &mut WsClient, path: &Path) {
    let call = json!({"name": "openFile", "arguments": {"filePath": path}});
    let result = client.request("tools/call", call).await;
    assert_eq!(result["isError"], true, "{result}");
    let refusal = format!(
        "could not open {}: the editor does not support window/showDocument",
        path.display()
    );
    assert_eq!(result["content"][0]["text"], refusal, "{result}");
}

/// `int` selected on line 2 and `space a`: Helix's code action request
/// carries the selection, which reaches Claude.
async fn code_action(client: &mut WsClient, main_c: &Path) {
    let expected = json!({
        "success": true, "text": "int", "filePath": main_c, "fileUrl": uri(main_c),
        "selection": {
            "start": {"line": 1, "character": 2},
            "end": {"line": 1, "character": 5},
            "isEmpty": false,
        },
    });
    expect(client, "getCurrentSelection", json!({}), &expected).await;
    let pushed = notification(client, "selection_changed", |p| p["text"] == "int").await;
    let mut params = expected;
    params.as_object_mut().unwrap().remove("success");
    assert_eq!(pushed["params"], params, "{pushed}");
}

/// What Helix received that its server did not send so: the answers to
/// `initialize` (our commands listed) and to code action requests (our
/// action added), and the answer to our command; everything else went
/// through as the server wrote it. Returns the methods of the requests
/// whose answers were changed, in the editor's order.
fn check_changes(stream: &str, changes: &Changes) -> Vec<String> {
    let request = |id: &Value| {
        changes
            .editor
            .iter()
            .find(|message| message["id"] == *id && message.get("method").is_some())
            .unwrap_or_else(|| panic!("{stream}: no request {id} for {changes:#?}"))
    };
    let server_answer = |id: &Value| {
        changes
            .replaced
            .iter()
            .find(|message| message["id"] == *id)
            .unwrap_or_else(|| panic!("{stream}: no answer {id} of the server: {changes:#?}"))
    };
    let mut methods = Vec::new();
    for written in &changes.written {
        let id = &written["id"];
        let request = request(id);
        methods.push(request["method"].as_str().unwrap().to_owned());
        let mut expected = match request["method"].as_str().unwrap() {
            "initialize" => with_our_commands(server_answer(id), written),
            "textDocument/codeAction" => with_our_action(server_answer(id), &request["params"]),
            "workspace/executeCommand" if is_our_command(&request.to_string()) => {
                json!({"jsonrpc": "2.0", "id": id, "result": null})
            }
            other => panic!("{stream}: the answer to {other} was changed: {written}"),
        };
        // Members in the proxy's order; JSON's equality ignores it.
        expected["jsonrpc"] = json!("2.0");
        assert_eq!(*written, expected, "{stream}");
    }
    for replaced in &changes.replaced {
        let id = &replaced["id"];
        assert!(
            changes.written.iter().any(|written| written["id"] == *id),
            "{stream}: the server's {replaced} never reached Helix"
        );
    }
    methods
}

/// The server's `initialize` answer with our commands after its own, as
/// `written` lists them (all of them `ide-mcp.…`, `sendSelection` first).
fn with_our_commands(server: &Value, written: &Value) -> Value {
    let pointer = "/result/capabilities/executeCommandProvider/commands";
    let theirs = server.pointer(pointer).and_then(Value::as_array);
    let theirs = theirs.cloned().unwrap_or_default();
    let listed = written.pointer(pointer).and_then(Value::as_array).unwrap();
    let ours = &listed[theirs.len()..];
    assert_eq!(listed[..theirs.len()], theirs, "{written}");
    assert_eq!(ours[0], SEND_COMMAND, "{written}");
    assert!(
        ours.iter()
            .all(|c| c.as_str().unwrap().starts_with("ide-mcp."))
    );
    let mut expected = server.clone();
    expected["result"]["capabilities"]["executeCommandProvider"]["commands"] = json!(listed);
    expected
}

/// The server's code actions with ours after them, for the request's
/// document and range.
fn with_our_action(server: &Value, params: &Value) -> Value {
    let arguments = json!([params["textDocument"]["uri"], params["range"]]);
    let ours = json!({"title": SEND, "command": {"title": SEND, "command": SEND_COMMAND, "arguments": arguments}});
    let mut expected = server.clone();
    let mut actions = server["result"].as_array().cloned().unwrap_or_default();
    actions.push(ours);
    expected["result"] = json!(actions);
    expected
}

/// The recorder of the fixture (`ide-mcp lsp-record`), here in front of the
/// echo server: both directions pass byte for byte, headers included, and
/// each message is one line of the log, its body verbatim when it is one
/// line of JSON, as a string otherwise, with a header other than
/// `Content-Length` kept.
#[test]
fn the_recorder_passes_every_byte_and_logs_each_message() {
    let dir = tempfile::tempdir().unwrap();
    let (log, received) = (dir.path().join("log.jsonl"), dir.path().join("received"));
    let mut command = std::process::Command::new(common::bin());
    command
        .args(["lsp-record", "--log"])
        .arg(&log)
        .args(["--stream", "echo", "--wire", "server", "--"])
        .args([ide_mcp_test_support::lsp_echo(), "--record"])
        .arg(&received)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1, 2]}}"#;
    let pretty = "{\"jsonrpc\": \"2.0\",\n \"method\": \"n\"}";
    let exit = r#"{"jsonrpc":"2.0","method":"exit"}"#;
    let mut input = replay::frame(request);
    input.extend(
        format!(
            "Content-Length: {}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{pretty}",
            pretty.len()
        )
        .bytes(),
    );
    input.extend(replay::frame(exit));
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &input).unwrap();
    drop(child.stdin.take());
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());

    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"a":[1, 2]}}"#;
    assert_eq!(output.stdout, replay::frame(answer));
    assert_eq!(std::fs::read(&received).unwrap(), input);
    let log = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let from = |who: &str| -> Vec<Value> {
        lines
            .iter()
            .filter(|line| line["from"] == who)
            .map(|line| {
                assert_eq!(
                    (&line["stream"], &line["wire"]),
                    (&json!("echo"), &json!("server"))
                );
                let mut line = line.clone();
                let fields = line.as_object_mut().unwrap();
                for key in ["stream", "wire", "from"] {
                    fields.remove(key);
                }
                line
            })
            .collect()
    };
    let header = format!(
        "Content-Length: {}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n",
        pretty.len()
    );
    assert_eq!(
        from("proxy"),
        [
            json!({"body": serde_json::from_str::<Value>(request).unwrap()}),
            json!({"header": header, "text": pretty}),
            json!({"body": {"jsonrpc": "2.0", "method": "exit"}}),
        ]
    );
    assert_eq!(
        from("server"),
        [json!({"body": serde_json::from_str::<Value>(answer).unwrap()})]
    );
    // Verbatim: the space in `[1, 2]` is kept.
    assert!(
        log.contains(r#""body":{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1, 2]}}"#),
        "{log}"
    );
}
