//! End-to-end tests of `ide-mcp serve` against the built binary: the IDE
//! WebSocket with its lockfile, every tool over it, SIGTERM.
//!
//! Every server runs with `CLAUDE_CONFIG_DIR` and `CARGO_TARGET_DIR` in its
//! own temporary directory, on an ephemeral port, and is killed when its
//! test ends.

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::ws::{WsClient, ws_request};
use common::{
    ANSWER, DEADLINE, Running, Sandbox, children, diagnostics_of, initialize_params, is_dead,
    wait_for_lockfile,
};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_serve_with_lockfile_tools_diagnostics_and_sigterm() {
    let sandbox = Sandbox::new();
    let broken = sandbox.file("broken/src/lib.rs");
    let warns = sandbox.file("warns/src/lib.rs");
    let select = format!("{warns}:5:9-5:15");
    let mut server = sandbox.serve(&[
        "--open",
        &broken,
        "--select",
        &select,
        "--ide-name",
        "e2e IDE",
        // Long enough that the query after the edit below must see its check.
        "--diagnostics-wait",
        "120000",
    ]);

    let (lockfile, port, token) = check_lockfile(&sandbox, &mut server);

    // A wrong token is refused before the upgrade.
    assert!(
        tokio_tungstenite::connect_async(ws_request(port, "wrong"))
            .await
            .is_err()
    );

    let mut client = WsClient::new(ide_mcp_test_support::connect(port, &token).await);
    client.answer_within = ANSWER;
    let init = client.request("initialize", initialize_params()).await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    client.notify("notifications/initialized").await;

    // --select reaches the CLI as selection_changed, the only way it can.
    let start = Instant::now();
    let selection = loop {
        if let Some(found) = client
            .notifications
            .iter()
            .find(|n| n["method"] == "selection_changed")
        {
            break found.clone();
        }
        let left = ANSWER.saturating_sub(start.elapsed());
        let message = client
            .next_message(left)
            .await
            .expect("selection_changed after initialize");
        client.notifications.push(message);
    };
    assert_eq!(selection["params"]["text"], "ünused");
    assert_eq!(selection["params"]["filePath"], warns.as_str());

    let list = client.request("tools/list", json!({})).await;
    common::assert_headless_tools(&common::tool_names(&list));

    read_tools_answer(&mut client, &sandbox).await;
    diagnostics_follow_the_disk(&mut client, &sandbox).await;

    // SIGTERM: a clean exit, the lockfile removed.
    let status = server.terminate(common::ANSWER);
    assert!(status.success(), "{status}; stderr:\n{}", server.stderr());
    assert!(!lockfile.exists());
    assert!(
        server
            .stderr()
            .contains(&format!("CLAUDE_CODE_SSE_PORT={port} claude"))
    );
}

/// The lockfile: fields as the CLI reads them, private modes. Returns its
/// path, the port and the token.
fn check_lockfile(sandbox: &Sandbox, server: &mut Running) -> (PathBuf, u16, String) {
    let (lockfile, content) = wait_for_lockfile(sandbox, server);
    let port = common::lockfile_port(&lockfile);
    assert_ne!(port, 0);
    assert_eq!(content["pid"], json!(server.child.id()));
    assert_eq!(
        content["workspaceFolders"],
        json!([sandbox.ws.to_str().unwrap()])
    );
    assert_eq!(content["ideName"], "e2e IDE");
    assert_eq!(content["transport"], "ws");
    assert_eq!(content["runningInWindows"], false);
    let token = content["authToken"].as_str().unwrap().to_owned();
    assert!(token.len() >= 32, "{token}");
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&lockfile), 0o600);
    assert_eq!(mode(lockfile.parent().unwrap()), 0o700);

    (lockfile, port, token)
}

/// The four tools that read the headless editor state.
async fn read_tools_answer(client: &mut WsClient, sandbox: &Sandbox) {
    let broken = sandbox.file("broken/src/lib.rs");
    let warns = sandbox.file("warns/src/lib.rs");
    let folders = client.call("getWorkspaceFolders", json!({})).await;
    assert_eq!(folders["folders"][0]["path"], sandbox.ws.to_str().unwrap());
    assert_eq!(folders["rootPath"], sandbox.ws.to_str().unwrap());

    let editors = client.call("getOpenEditors", json!({})).await;
    assert_eq!(
        editors["tabs"],
        json!([
            {"uri": format!("file://{broken}"), "isActive": false, "label": "lib.rs", "languageId": "rust", "isDirty": false},
            {"uri": format!("file://{warns}"), "isActive": true, "label": "lib.rs", "languageId": "rust", "isDirty": false},
        ])
    );

    let current = client.call("getCurrentSelection", json!({})).await;
    assert_eq!(current["success"], true);
    assert_eq!(current["text"], "ünused");
    assert_eq!(
        current["selection"],
        json!({"start": {"line": 4, "character": 8}, "end": {"line": 4, "character": 14}, "isEmpty": false})
    );

    let dirty = client
        .call("checkDocumentDirty", json!({"filePath": broken}))
        .await;
    assert_eq!(dirty["isDirty"], false);
}

/// Real cargo diagnostics in the CLI's shape, fresh after an edit on disk.
async fn diagnostics_follow_the_disk(client: &mut WsClient, sandbox: &Sandbox) {
    let broken = sandbox.file("broken/src/lib.rs");
    let warns = sandbox.file("warns/src/lib.rs");
    let broken_uri = format!("file://{broken}");
    let warns_uri = format!("file://{warns}");
    let all = client.call("getDiagnostics", json!({})).await;
    let errors = diagnostics_of(&all, &broken_uri).unwrap_or_else(|| panic!("{all}"));
    assert_eq!(errors.len(), 1, "{all}");
    assert_eq!(errors[0]["severity"], "Error");
    assert_eq!(errors[0]["code"], "E0425");
    assert_eq!(errors[0]["source"], "rustc");
    assert_eq!(
        errors[0]["range"],
        json!({"start": {"line": 5, "character": 28}, "end": {"line": 5, "character": 41}})
    );
    let warnings = diagnostics_of(&all, &warns_uri).unwrap_or_else(|| panic!("{all}"));
    assert_eq!(warnings.len(), 1, "{all}");
    assert_eq!(warnings[0]["severity"], "Warning");
    assert_eq!(warnings[0]["code"], "unused_variables");
    assert_eq!(
        warnings[0]["range"],
        json!({"start": {"line": 4, "character": 8}, "end": {"line": 4, "character": 14}})
    );

    // One file's diagnostics: the uri echoed, answered from what is known.
    let one = client
        .call("getDiagnostics", json!({"uri": broken_uri}))
        .await;
    assert_eq!(one[0]["uri"], broken_uri);
    assert_eq!(one[0]["diagnostics"].as_array().unwrap().len(), 1);

    // Fix the error on disk, then ask ~50 ms later, as the CLI does after an
    // edit: the answer waits for the re-check and no longer has the error.
    let text = std::fs::read_to_string(&broken).unwrap();
    std::fs::write(&broken, text.replace("missing_value + value", "value")).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let after = client.call("getDiagnostics", json!({})).await;
    assert!(diagnostics_of(&after, &broken_uri).is_none(), "{after}");
    assert_eq!(
        diagnostics_of(&after, &warns_uri).unwrap().len(),
        1,
        "{after}"
    );
}

#[test]
fn a_missing_open_file_fails_before_serving() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .command(&[
            "serve",
            "--open",
            "no/such/file.rs",
            "--diagnostics",
            "none",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no/such/file.rs"), "{stderr}");
    assert!(sandbox.lockfiles().is_empty());
}

#[test]
fn sigterm_during_a_check_kills_cargo_too() {
    let sandbox = Sandbox::new();
    // A package whose build script takes a while, so the check is running.
    let slow = sandbox.dir.path().join("slow");
    std::fs::create_dir_all(slow.join("src")).unwrap();
    std::fs::write(
        slow.join("Cargo.toml"),
        "[package]\nname = \"slow\"\nversion = \"0.1.0\"\nedition = \"2024\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        slow.join("build.rs"),
        // Up to 5 min, but gone within 0.1 s of cargo (its parent) dying.
        "fn main() {\n\
         let parent = std::os::unix::process::parent_id();\n\
         for _ in 0..3000 {\n\
         std::thread::sleep(std::time::Duration::from_millis(100));\n\
         if std::os::unix::process::parent_id() != parent { return; }\n\
         }\n\
         }\n",
    )
    .unwrap();
    std::fs::write(slow.join("src/lib.rs"), "//! Slow to build.\n").unwrap();
    let mut server =
        Running::spawn(sandbox.command(&["serve", "--workspace", slow.to_str().unwrap()]));
    wait_for_lockfile(&sandbox, &mut server);

    let start = Instant::now();
    let cargo = loop {
        server.assert_running();
        // `cargo metadata` comes first; the check is the child that stays
        // (found by its command line, whatever else runs beside it).
        if let Some(child) = children(server.child.id()).into_iter().find(|child| {
            std::fs::read_to_string(format!("/proc/{child}/cmdline"))
                .is_ok_and(|cmdline| cmdline.contains("check"))
        }) {
            break child;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no cargo check; stderr:\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Wait for the build script: cargo is then silent for a while, so only
    // the server killing it (not a write to a closed pipe) ends it soon.
    while !children(cargo).iter().any(|&child| {
        std::fs::read_to_string(format!("/proc/{child}/cmdline"))
            .is_ok_and(|cmdline| cmdline.contains("build-script-build"))
    }) {
        server.assert_running();
        assert!(
            start.elapsed() < DEADLINE,
            "no build script; stderr:\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = server.terminate(common::ANSWER);
    assert!(status.success(), "{status}; stderr:\n{}", server.stderr());
    let start = Instant::now();
    while !is_dead(cargo) {
        // Far below the build script's five minutes: the server killed it.
        assert!(
            start.elapsed() < ANSWER,
            "cargo {cargo} outlived the server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(sandbox.lockfiles().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_selection_reaches_a_client_that_listens_late() {
    let sandbox = Sandbox::new();
    let warns = sandbox.file("warns/src/lib.rs");
    let select = format!("{warns}:5:9-5:15");
    let mut server = sandbox.serve(&[
        "--select",
        &select,
        "--ide-name",
        "e2e IDE",
        "--diagnostics",
        "none",
    ]);
    let (_lockfile, port, token) = check_lockfile(&sandbox, &mut server);
    // `--select` is published shortly after the server starts serving: a
    // client connected before would get it live too. Once a first client
    // has received it, it is the latest state every later client gets.
    let mut first = WsClient::new(ide_mcp_test_support::connect(port, &token).await);
    first.answer_within = ANSWER;
    first.request("initialize", initialize_params()).await;
    first.notify("notifications/initialized").await;
    first.notify("ide_connected").await;
    let published = first.next_message(ANSWER).await.expect("the selection");
    assert_eq!(published["method"], "selection_changed");
    // As the `claude` CLI: connect, initialize, say `ide_connected`, and
    // miss the copy sent at once (its UI takes the connection only later;
    // what came before is dropped for good).
    let mut client = WsClient::new(ide_mcp_test_support::connect(port, &token).await);
    client.answer_within = ANSWER;
    client.request("initialize", initialize_params()).await;
    client.notify("notifications/initialized").await;
    client.notify("ide_connected").await;
    let missed = client
        .next_message(ANSWER)
        .await
        .expect("selection_changed at ide_connected");
    assert_eq!(missed["method"], "selection_changed");
    // Listening now: the selection still arrives (the events, not a window
    // of time, tell the two copies apart: a loaded machine may delay both).
    let selection = client
        .next_message(ANSWER)
        .await
        .expect("selection_changed to a client that listens late");
    assert_eq!(selection["method"], "selection_changed");
    assert_eq!(selection["params"]["text"], "ünused");
    assert_eq!(selection["params"]["filePath"], warns.as_str());
    // Once: nothing floods it afterwards.
    assert_eq!(client.next_message(Duration::from_secs(2)).await, None);
}
