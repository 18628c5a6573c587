//! End-to-end tests of the other ways in, against the built binary:
//! `serve --stdio` through pipes, `tools --lint`, `call`.

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Output, Stdio};
use std::sync::mpsc;

use common::{ANSWER, Running, Sandbox, diagnostics_of, initialize_params};
use serde_json::{Value, json};

#[test]
fn stdio_serve_lists_and_calls_tools_and_writes_no_lockfile() {
    let sandbox = Sandbox::new();
    let mut command = sandbox.command(&[
        "serve",
        "--stdio",
        "--workspace",
        sandbox.ws.to_str().unwrap(),
        "--diagnostics",
        "none",
    ]);
    command.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut server = Running::spawn(command);
    let mut stdin = server.child.stdin.take().unwrap();
    let stdout = server.child.stdout.take().unwrap();
    let (lines_tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines_tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let answer = |request: Value, stdin: &mut std::process::ChildStdin| -> Value {
        writeln!(stdin, "{request}").unwrap();
        let line = lines
            .recv_timeout(ANSWER)
            .unwrap_or_else(|_| panic!("no answer to {request}"));
        serde_json::from_str(&line).unwrap()
    };

    let init = answer(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params()}),
        &mut stdin,
    );
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let list = answer(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        &mut stdin,
    );
    common::assert_headless_tools(&common::tool_names(&list["result"]));
    let call = answer(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "getWorkspaceFolders", "arguments": {}}}),
        &mut stdin,
    );
    let folders: Value =
        serde_json::from_str(call["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(folders["folders"][0]["path"], sandbox.ws.to_str().unwrap());
    let diagnostics = answer(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
               "params": {"name": "getDiagnostics", "arguments": {}}}),
        &mut stdin,
    );
    assert_eq!(diagnostics["result"]["content"][0]["text"], "[]");

    assert!(sandbox.lockfiles().is_empty());
    drop(stdin);
    let status = server.wait_timeout(common::ANSWER);
    assert!(status.success(), "{status}; stderr:\n{}", server.stderr());
}

fn run(sandbox: &Sandbox, args: &[&str]) -> Output {
    let output = sandbox.command(args).output().unwrap();
    assert!(
        output.status.success(),
        "ide-mcp {args:?} failed ({}); stderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn call_text(sandbox: &Sandbox, args: &[&str]) -> Value {
    let output = run(sandbox, args);
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn tools_lint_passes_and_lists_what_serve_serves() {
    let sandbox = Sandbox::new();
    let output = run(&sandbox, &["tools", "--lint"]);
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    common::assert_headless_tools(&common::tool_names(&list));
    assert!(String::from_utf8_lossy(&output.stderr).contains("0 violation"));
}

#[test]
fn call_prints_each_tools_result() {
    let sandbox = Sandbox::new();
    let ws = sandbox.ws.to_str().unwrap();
    let broken = sandbox.file("broken/src/lib.rs");
    let warns = sandbox.file("warns/src/lib.rs");

    let folders = call_text(
        &sandbox,
        &["call", "getWorkspaceFolders", "--workspace", ws],
    );
    assert_eq!(folders["folders"][0]["path"], ws);

    let editors = call_text(&sandbox, &["call", "getOpenEditors", "--open", &broken]);
    assert_eq!(editors["tabs"][0]["uri"], format!("file://{broken}"));
    assert_eq!(editors["tabs"][0]["isActive"], true);

    // Columns are 1-based characters: `missing_value` starts at the 28th.
    let select = format!("{broken}:6:28-6:41");
    let selection = call_text(
        &sandbox,
        &["call", "getCurrentSelection", "--select", &select],
    );
    assert_eq!(selection["text"], "missing_value");
    assert_eq!(
        selection["selection"]["start"],
        json!({"line": 5, "character": 28})
    );

    let arguments = json!({"filePath": broken}).to_string();
    let dirty = call_text(&sandbox, &["call", "checkDocumentDirty", &arguments]);
    assert_eq!(dirty["isDirty"], false);

    // getDiagnostics waits for the first complete check.
    let diagnostics = call_text(&sandbox, &["call", "getDiagnostics", "--workspace", ws]);
    let errors = diagnostics_of(&diagnostics, &format!("file://{broken}")).unwrap();
    assert_eq!(errors[0]["code"], "E0425");
    let warnings = diagnostics_of(&diagnostics, &format!("file://{warns}")).unwrap();
    assert_eq!(warnings[0]["code"], "unused_variables");

    // A tool error is printed and fails the command; an unknown tool fails.
    let output = sandbox
        .command(&["call", "checkDocumentDirty", "{}"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["isError"], true);
    let output = sandbox.command(&["call", "noSuchTool"]).output().unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("noSuchTool"));
}
