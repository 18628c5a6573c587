//! End-to-end tests of `ide-mcp bridge`, the built binary over stdio, in
//! front of real IDEs: `ide-mcp serve` (the headless host), the IDE host of
//! `lsp-proxy`, and IDEs that embed the runtime as an editor does, here
//! with tools of their own (one that says which IDE answered, a slow one
//! that reports progress, one that echoes its arguments) and resources and
//! prompts.
//!
//! Every bridge runs with the test's own `CLAUDE_CONFIG_DIR` and
//! `XDG_RUNTIME_DIR` (where it remembers the tools it saw).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use common::stdio::StdioSession;
use common::ws::WsClient;
use common::{Running, Sandbox, lockfile_port, tool_names, wait_for_lockfile};
use ide_mcp::bridge::tools::{FIRST_TIME_NAMES, left_out};
use ide_mcp_runtime::{
    ListedResource, Notifier, Progress, Registry, Server, WsOptions, WsServerHandle, mcp_prompt,
    mcp_resource, mcp_tool,
};
use serde_json::{Value, json};

/// What the bridge relays of the headless host (`serve`, which has no
/// language servers of an editor's to ask).
const HEADLESS: [&str; 5] = [
    "checkDocumentDirty",
    "getCurrentSelection",
    "getLatestSelection",
    "getOpenEditors",
    "getWorkspaceFolders",
];

/// The answer to a call with no IDE running for `cwd`.
fn no_ide(cwd: &Path) -> Value {
    json!({"content": [{"type": "text", "text": format!(
        "no IDE for {} is running: start your editor with `ide-mcp lsp-proxy`, or `ide-mcp serve`",
        cwd.display()
    )}], "isError": true})
}

/// `ide-mcp bridge [args]` in `cwd`, with the sandbox's directories.
fn bridge_command(sandbox: &Sandbox, cwd: &Path, args: &[&str]) -> Command {
    let mut command = sandbox.command(&[&["bridge"], args].concat());
    command
        .current_dir(cwd)
        .env("XDG_RUNTIME_DIR", run_dir(sandbox))
        .env_remove("CLAUDE_CODE_SSE_PORT");
    command
}

fn bridge(sandbox: &Sandbox, cwd: &Path, args: &[&str]) -> StdioSession {
    StdioSession::start(bridge_command(sandbox, cwd, args))
}

fn run_dir(sandbox: &Sandbox) -> PathBuf {
    sandbox.dir.path().join("run")
}

/// `ide-mcp serve` on the sandbox's workspace: the process, its port and token.
fn serve(sandbox: &Sandbox, extra: &[&str]) -> (Running, u16, String) {
    let ws = sandbox.ws.to_str().unwrap();
    let args = [
        &["serve", "--workspace", ws, "--diagnostics", "none"],
        extra,
    ]
    .concat();
    let mut server = Running::spawn(sandbox.command(&args));
    let (lockfile, content) = wait_for_lockfile(sandbox, &mut server);
    let token = content["authToken"].as_str().unwrap().to_owned();
    (server, lockfile_port(&lockfile), token)
}

fn call(session: &mut StdioSession, tool: &str, arguments: &Value) -> Value {
    let answer = session.request("tools/call", &json!({"name": tool, "arguments": arguments}));
    answer["result"].clone()
}

/// A call's JSON text, parsed; panics on an `isError` result.
fn call_json(session: &mut StdioSession, tool: &str, arguments: &Value) -> Value {
    let result = call(session, tool, arguments);
    assert_ne!(result["isError"], true, "{result}");
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

fn list_names(session: &mut StdioSession) -> Vec<String> {
    let list = session.request("tools/list", &json!({}));
    tool_names(&list["result"])
        .into_iter()
        .map(str::to_owned)
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn the_headless_host_s_tools_are_relayed_as_it_answers_them() {
    let sandbox = Sandbox::new();
    let broken = sandbox.file("broken/src/lib.rs");
    let (_server, port, token) = serve(&sandbox, &["--open", &broken]);
    let rt = runtime();
    let mut ide: WsClient = rt.block_on(common::ws::connect(port, &token));

    // From a subdirectory of the workspace.
    let mut bridge = bridge(&sandbox, &sandbox.ws.join("broken/src"), &[]);
    // The host's resources and prompts, if it has any, as the host says.
    let mut host = WsClient::new(rt.block_on(ide_mcp_test_support::connect(port, &token)));
    let host_init = rt.block_on(host.request("initialize", common::initialize_params()));
    let mut capabilities = json!({"tools": {"listChanged": true}});
    for key in ["resources", "prompts"] {
        if host_init["capabilities"].get(key).is_some() {
            capabilities[key] = json!({"listChanged": true});
        }
    }
    assert_eq!(bridge.init["result"]["capabilities"], capabilities);
    assert_eq!(
        bridge.init["result"]["serverInfo"]["name"],
        "ide-mcp-bridge"
    );

    // The host's list, less what the CLI has already, entry for entry.
    let listed = bridge.request("tools/list", &json!({}));
    let relayed: Vec<&str> = common::served_tools()
        .into_iter()
        .filter(|tool| !left_out(tool))
        .collect();
    assert_eq!(tool_names(&listed["result"]), relayed);
    assert_eq!(relayed, HEADLESS);
    let direct = rt.block_on(ide.request("tools/list", json!({})));
    let kept: Vec<Value> = direct["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| !left_out(tool["name"].as_str().unwrap()))
        .cloned()
        .collect();
    assert_eq!(listed["result"]["tools"], Value::Array(kept));

    // Each result exactly as the host answers it, a bad argument's
    // `isError` too.
    for (tool, arguments) in [
        ("getOpenEditors", json!({})),
        ("getWorkspaceFolders", json!({})),
        ("checkDocumentDirty", json!({"filePath": broken})),
        ("checkDocumentDirty", json!({})),
    ] {
        let relayed = call(&mut bridge, tool, &arguments);
        let direct =
            rt.block_on(ide.request("tools/call", json!({"name": tool, "arguments": arguments})));
        assert_eq!(relayed, direct, "{tool} {arguments}");
    }
    let editors = call_json(&mut bridge, "getOpenEditors", &json!({}));
    assert_eq!(editors["tabs"][0]["uri"], format!("file://{broken}"));
    let bad = call(&mut bridge, "checkDocumentDirty", &json!({}));
    assert_eq!(bad["isError"], true);
    assert!(
        bad["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("filePath"),
        "{bad}"
    );

    // `_meta` (a progress token, the CLI's tool-use id) goes along; the
    // client's own id comes back, a string one too.
    bridge.send(
        &json!({"jsonrpc": "2.0", "id": "call-a", "method": "tools/call", "params": {
        "name": "getWorkspaceFolders", "arguments": {},
        "_meta": {"progressToken": "p-1", "claudecode/toolUseId": "toolu_1"}}}),
    );
    let answer = next_answer(&mut bridge, &json!("call-a"));
    let folders = call(&mut bridge, "getWorkspaceFolders", &json!({}));
    assert_eq!(answer["result"], folders);

    // The host's JSON-RPC error, unchanged.
    let unknown = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                         "params": {"name": "noSuchTool", "arguments": {}}});
    let direct: Value = serde_json::from_str(
        &rt.block_on(ide_mcp_test_support::ask(&mut ide.ws, &unknown.to_string())),
    )
    .unwrap();
    let relayed = bridge.request("tools/call", &unknown["params"]);
    assert_eq!(relayed["error"], direct["error"]);
    assert_eq!(relayed["error"]["code"], -32602, "{relayed}");

    // `--all`: every tool the host serves.
    let mut all = self::bridge(&sandbox, &sandbox.ws, &["--all"]);
    assert_eq!(list_names(&mut all), common::served_tools());

    // Nothing of ours in the CLI's directory; what we saw in our private one.
    let ide_dir: Vec<_> = std::fs::read_dir(sandbox.config().join("ide"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(ide_dir, [format!("{port}.lock").as_str()]);
    assert_private(&run_dir(&sandbox).join("ide-mcp"));
}

/// The cache: one private file in a private directory.
fn assert_private(dir: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(dir), 0o700);
    assert_eq!(mode(&dir.join("bridge-tools.json")), 0o600);
}

/// Reads until the answer to `id`; the notifications read past are kept.
fn next_answer(session: &mut StdioSession, id: &Value) -> Value {
    let start = Instant::now();
    loop {
        let left = common::ANSWER.saturating_sub(start.elapsed());
        let message = session
            .next_message(left)
            .unwrap_or_else(|| panic!("no answer to {id}"));
        if message["id"] == *id {
            return message;
        }
        session.notifications.push(message);
    }
}

/// Calls `tool` until the answer says no IDE runs for `cwd`: the IDE just
/// went away, and until the bridge has seen its connection close, a call
/// may still be sent on it, and is answered that the IDE left meanwhile.
fn until_no_ide(session: &mut StdioSession, tool: &str, cwd: &Path) {
    let left = format!(
        "the IDE for {} closed its connection before it answered; call again to reach it once it runs",
        cwd.display()
    );
    let start = Instant::now();
    loop {
        let answer = call(session, tool, &json!({}));
        if answer == no_ide(cwd) {
            return;
        }
        assert_eq!(answer["content"][0]["text"], left.as_str(), "{answer}");
        assert!(start.elapsed() < common::ANSWER, "{answer}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn list_changes(session: &StdioSession) -> usize {
    session
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/tools/list_changed")
        .count()
}

#[test]
fn with_no_ide_the_first_time_tools_then_the_ide_once_it_runs_and_after_it_restarts() {
    let sandbox = Sandbox::new();
    let mut bridge = bridge(&sandbox, &sandbox.ws, &[]);
    let first = bridge.request("tools/list", &json!({}));
    assert_eq!(tool_names(&first["result"]), FIRST_TIME_NAMES);
    assert_eq!(
        call(&mut bridge, "getWorkspaceFolders", &json!({})),
        no_ide(&sandbox.ws)
    );

    let (mut server, _, first_token) = serve(&sandbox, &[]);
    let folders = call_json(&mut bridge, "getWorkspaceFolders", &json!({}));
    assert_eq!(folders["rootPath"], sandbox.ws.to_str().unwrap());
    // The headless host has no live LSP tools: the list changed, once.
    assert_eq!(
        tool_names(&bridge.request("tools/list", &json!({}))["result"]),
        HEADLESS
    );
    assert_eq!(list_changes(&bridge), 1);

    // The host goes away, and another starts (a new port, a new token).
    let status = server.terminate(common::ANSWER);
    assert!(status.success(), "{status}");
    until_no_ide(&mut bridge, "getWorkspaceFolders", &sandbox.ws);
    let (_server, _, token) = serve(&sandbox, &["--open", &sandbox.file("warns/src/lib.rs")]);
    assert_ne!(token, first_token);
    let editors = call_json(&mut bridge, "getOpenEditors", &json!({}));
    assert_eq!(editors["tabs"][0]["label"], "lib.rs", "{editors}");
    // The same list again: nothing more to announce.
    assert_eq!(list_changes(&bridge), 1);
}

// --- IDEs that embed the runtime ----------------------------------------

/// Which test IDE this is.
struct Label(&'static str);

/// What the test IDEs' tools saw happen.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<String>>>);

impl Events {
    fn push(&self, event: String) {
        self.0.lock().unwrap().push(event);
    }

    fn wait_for(&self, event: &str) {
        let start = Instant::now();
        while !self.0.lock().unwrap().iter().any(|e| e == event) {
            assert!(
                start.elapsed() < common::ANSWER,
                "no {event}: {:?}",
                self.0.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Says which test IDE answered.
#[mcp_tool(read_only)]
fn which_ide(label: &Label) -> String {
    label.0.to_owned()
}

/// Reports progress 1 to `n`, then waits until the call is given up on.
#[mcp_tool]
async fn count_then_wait(events: &Events, progress: Progress, n: u32) -> String {
    struct Dropped(Events);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.push("countThenWait dropped".to_owned());
        }
    }
    let _dropped = Dropped(events.clone());
    for i in 1..=n {
        progress.report(f64::from(i), Some(f64::from(n)), None);
    }
    std::future::pending::<()>().await;
    unreachable!()
}

/// Returns its arguments.
#[mcp_tool]
fn echo_arguments(text: String, number: f64) -> Value {
    json!({"text": text, "number": number})
}

/// An IDE embedding the runtime, serving `tools` for `folders`, with its
/// lockfile in the sandbox's CLI configuration.
fn embedded(
    rt: &tokio::runtime::Runtime,
    sandbox: &Sandbox,
    label: &'static str,
    folders: &[&Path],
    tools: &[&str],
    events: &Events,
) -> WsServerHandle {
    let registry = Registry::from_tools(
        ide_mcp_runtime::tools()
            .iter()
            .filter(|tool| tool.face.is_none() && tools.contains(&tool.name)),
    )
    .unwrap();
    assert_eq!(registry.tools().len(), tools.len());
    embedded_with(
        rt,
        sandbox,
        label,
        folders,
        registry,
        events,
        Notifier::new(),
    )
}

/// An IDE embedding the runtime, serving `registry` for `folders`, with
/// its lockfile in the sandbox's CLI configuration; its notifications go
/// through `notifier`.
fn embedded_with(
    rt: &tokio::runtime::Runtime,
    sandbox: &Sandbox,
    label: &'static str,
    folders: &[&Path],
    registry: Registry,
    events: &Events,
    notifier: Notifier,
) -> WsServerHandle {
    let server = Server::builder(label, "1")
        .registry(Arc::new(registry))
        .notifier(notifier)
        .state(Label(label))
        .state(events.clone())
        .build()
        .unwrap();
    let options = WsOptions {
        workspace_folders: folders
            .iter()
            .map(|folder| folder.to_str().unwrap().to_owned())
            .collect(),
        ide_name: label.to_owned(),
        config_dir: Some(sandbox.config()),
        ..WsOptions::default()
    };
    rt.block_on(server.serve_ws(options)).unwrap()
}

/// The test IDE's notes, which say which IDE answered.
#[mcp_resource(uri = "notes://today", mime_type = "text/markdown")]
fn today_notes(label: &Label) -> String {
    format!("# Notes of {}", label.0)
}

/// One line of the notes; only the first exists.
#[mcp_resource(uri = "notes://line/{n}", list = note_lines, mime_type = "text/plain")]
fn note_line(n: String) -> Option<String> {
    (n == "1").then(|| "the first line".to_owned())
}

fn note_lines() -> Vec<ListedResource> {
    vec![ListedResource::new("notes://line/1", "line 1")]
}

/// Reviews the notes of a day.
#[mcp_prompt(name = "reviewNotes")]
fn review_notes(
    label: &Label,
    day: String,
    #[arg(description = "What to look for; everything by default")] concern: Option<String>,
) -> String {
    let concern = concern.unwrap_or_else(|| "anything".to_owned());
    format!("Review the notes of {} for {day}: {concern}.", label.0)
}

fn which(session: &mut StdioSession) -> Value {
    call_json(session, "whichIde", &json!({}))
}

#[test]
fn an_embedded_ide_s_progress_cancellation_restart_and_list_change() {
    let sandbox = Sandbox::new();
    let rt = runtime();
    let events = Events::default();
    let one = embedded(
        &rt,
        &sandbox,
        "one",
        &[&sandbox.ws],
        &["whichIde", "countThenWait"],
        &events,
    );
    let mut bridge = bridge(&sandbox, &sandbox.ws, &[]);
    assert_eq!(list_names(&mut bridge), ["countThenWait", "whichIde"]);
    assert_eq!(which(&mut bridge), "one");

    // Progress for the client's token, then the client cancels: the call
    // is cancelled at the IDE, and answered to no one.
    bridge.send(
        &json!({"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {
        "name": "countThenWait", "arguments": {"n": 3}, "_meta": {"progressToken": "tok"}}}),
    );
    for i in 1..=3 {
        let progress = bridge.next_message(common::ANSWER).expect("progress");
        assert_eq!(
            progress,
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": "tok", "progress": f64::from(i), "total": 3.0}})
        );
    }
    bridge.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": "slow", "reason": "test"}}),
    );
    events.wait_for("countThenWait dropped");
    assert_eq!(bridge.request("ping", &json!({}))["result"], json!({}));
    assert!(
        bridge.notifications.iter().all(|m| m["id"] != "slow"),
        "{:?}",
        bridge.notifications
    );

    // The IDE goes away: calls say so, and a bridge started now lists what
    // this one saw.
    rt.block_on(one.shutdown());
    until_no_ide(&mut bridge, "whichIde", &sandbox.ws);
    let mut later = self::bridge(&sandbox, &sandbox.ws, &[]);
    assert_eq!(list_names(&mut later), ["countThenWait", "whichIde"]);
    assert_eq!(
        call(&mut later, "whichIde", &json!({})),
        no_ide(&sandbox.ws)
    );

    // Another IDE with other tools: the next call reaches it, and the list
    // change is announced.
    let _two = embedded(
        &rt,
        &sandbox,
        "two",
        &[&sandbox.ws],
        &["whichIde", "echoArguments"],
        &events,
    );
    assert_eq!(which(&mut bridge), "two");
    assert_eq!(list_changes(&bridge), 1, "{:?}", bridge.notifications);
    assert_eq!(list_names(&mut bridge), ["echoArguments", "whichIde"]);
    let echoed = call_json(
        &mut bridge,
        "echoArguments",
        &json!({"text": "héllo 🦀", "number": 1.5}),
    );
    assert_eq!(echoed, json!({"text": "héllo 🦀", "number": 1.5}));
}

/// Sets the modification time of `port`'s lockfile to `age` before now.
fn age_lockfile(sandbox: &Sandbox, port: u16, age: Duration) {
    let path = sandbox.config().join(format!("ide/{port}.lock"));
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - age)
        .unwrap();
}

/// Every file of the CLI's IDE directory with its content and time.
fn ide_dir(sandbox: &Sandbox) -> Vec<(PathBuf, Vec<u8>, SystemTime)> {
    let mut files: Vec<_> = std::fs::read_dir(sandbox.config().join("ide"))
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
            (path.clone(), std::fs::read(&path).unwrap(), modified)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn the_sse_port_wins_over_the_folders_and_the_most_recent_lockfile_over_others() {
    let sandbox = Sandbox::new();
    let rt = runtime();
    let events = Events::default();
    let elsewhere = sandbox.dir.path().canonicalize().unwrap().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let a = embedded(&rt, &sandbox, "a", &[&sandbox.ws], &["whichIde"], &events);
    let b = embedded(&rt, &sandbox, "b", &[&elsewhere], &["whichIde"], &events);
    let c = embedded(&rt, &sandbox, "c", &[&sandbox.ws], &["whichIde"], &events);
    // What the CLI would delete, which the bridge leaves alone: a dead
    // IDE's lockfile, and one that is not JSON.
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let dead_lockfile = json!({"pid": dead, "workspaceFolders": [sandbox.ws], "ideName": "dead",
                               "transport": "ws", "runningInWindows": false, "authToken": "x"});
    std::fs::write(
        sandbox.config().join("ide/1.lock"),
        dead_lockfile.to_string(),
    )
    .unwrap();
    std::fs::write(sandbox.config().join("ide/2.lock"), "/legacy\n").unwrap();

    age_lockfile(&sandbox, a.port(), Duration::from_mins(1));
    age_lockfile(&sandbox, c.port(), Duration::from_secs(30));
    let before = ide_dir(&sandbox);
    let src = sandbox.ws.join("broken/src");
    assert_eq!(which(&mut bridge(&sandbox, &src, &[])), "c");
    age_lockfile(&sandbox, a.port(), Duration::from_secs(0));
    let before_a = ide_dir(&sandbox);
    assert_eq!(which(&mut bridge(&sandbox, &src, &[])), "a");

    let mut command = bridge_command(&sandbox, &src, &[]);
    command.env("CLAUDE_CODE_SSE_PORT", b.port().to_string());
    assert_eq!(which(&mut StdioSession::start(command)), "b");
    assert_eq!(ide_dir(&sandbox), before_a);
    assert_eq!(before.len(), 5);
}

#[test]
fn the_ide_host_of_lsp_proxy_is_relayed() {
    use common::lsp::{Place, initialize, message};
    let place = Place::new();
    let file = place.workspace.join("main.c");
    std::fs::write(&file, "int main(void) { return 0; }\n").unwrap();
    let mut proxy = place.proxy(&[], &Place::echo(&[]));
    proxy.send(&initialize(4_000_002, &place.workspace, "Bridge Editor"));
    proxy.send(&message(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": format!("file://{}", file.display()),
                                    "languageId": "c", "version": 1, "text": "int main(void) { return 0; }\n"}}})));
    place.wait_lockfiles(&proxy, |found| found.len() == 1);

    let mut command = Command::new(common::bin());
    command
        .arg("bridge")
        .current_dir(&place.workspace)
        .env_remove("CLAUDE_CODE_SSE_PORT");
    place.environment(&mut command);
    let mut bridge = StdioSession::start(command);
    // The host serves every IDE tool (openDiff too): the CLI's are left out.
    assert_eq!(list_names(&mut bridge), FIRST_TIME_NAMES);
    let start = Instant::now();
    loop {
        let editors = call_json(&mut bridge, "getOpenEditors", &json!({}));
        if editors["tabs"][0]["uri"] == format!("file://{}", file.display()) {
            break;
        }
        assert!(start.elapsed() < common::ANSWER, "{editors}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let dirty = call_json(
        &mut bridge,
        "checkDocumentDirty",
        &json!({"filePath": file.to_str().unwrap()}),
    );
    assert_eq!(dirty["success"], true, "{dirty}");
    assert_eq!(dirty["filePath"], file.to_str().unwrap(), "{dirty}");
}

/// Asks `bridge` and the IDE (`direct`) each request, under the same id:
/// the answers must be the same bytes. The answers, parsed.
fn same_answers(
    rt: &tokio::runtime::Runtime,
    bridge: &mut StdioSession,
    direct: &mut WsClient,
    requests: &[(&str, Value)],
) -> Vec<Value> {
    let mut answers = Vec::new();
    for (i, (method, params)) in requests.iter().enumerate() {
        let request = json!({"jsonrpc": "2.0", "id": 100 + i, "method": method, "params": params})
            .to_string();
        let relayed = bridge.ask_raw(&request);
        let answered = rt.block_on(ide_mcp_test_support::ask(&mut direct.ws, &request));
        assert_eq!(relayed, answered, "{request}");
        answers.push(serde_json::from_str::<Value>(&relayed).unwrap());
    }
    answers
}

/// What the relayed answers hold: the IDE's items, its errors with their codes.
fn what_they_hold(answers: &[Value]) {
    assert_eq!(
        answers[0]["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["uri"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["notes://today", "notes://line/1"]
    );
    assert_eq!(
        answers[1]["result"]["resourceTemplates"][0]["uriTemplate"],
        "notes://line/{n}"
    );
    assert_eq!(
        answers[2]["result"]["contents"],
        json!([{"uri": "notes://today", "mimeType": "text/markdown", "text": "# Notes of notes"}])
    );
    assert_eq!(
        answers[3]["result"]["contents"][0]["text"],
        "the first line"
    );
    for (answer, code) in [
        (4, -32002),
        (5, -32002),
        (6, -32602),
        (9, -32602),
        (10, -32602),
    ] {
        assert_eq!(
            answers[answer]["error"]["code"], code,
            "{}",
            answers[answer]
        );
    }
    assert_eq!(answers[7]["result"]["prompts"][0]["name"], "reviewNotes");
    assert_eq!(
        answers[8]["result"]["messages"][0]["content"]["text"],
        "Review the notes of notes for Monday: typos."
    );
}

/// The IDE's resources and prompts change: the bridge's client is told,
/// with the IDE's own notifications (an IDE's message goes to every
/// client of it, the bridge's link among them).
fn list_changes_are_passed_on(ide_notifier: &Notifier, bridge: &mut StdioSession) {
    for method in [
        "notifications/resources/list_changed",
        "notifications/prompts/list_changed",
    ] {
        let clients = ide_notifier.notify(method, &json!({}));
        assert!(clients >= 1, "the bridge is connected to the IDE");
        let seen =
            |bridge: &StdioSession| bridge.notifications.iter().any(|n| n["method"] == method);
        let until = Instant::now() + common::ANSWER;
        while !seen(bridge) {
            assert!(
                Instant::now() < until,
                "{method} never reached the bridge's client"
            );
            bridge.request("ping", &json!({}));
        }
        let passed = bridge
            .notifications
            .iter()
            .find(|n| n["method"] == method)
            .unwrap();
        assert_eq!(
            passed,
            &json!({"jsonrpc": "2.0", "method": method, "params": {}})
        );
    }
}

#[test]
fn an_ide_s_resources_and_prompts_are_relayed_as_it_answers_them() {
    let sandbox = Sandbox::new();
    let rt = runtime();
    let events = Events::default();
    let registry = Registry::from_items(
        ide_mcp_runtime::tools()
            .iter()
            .filter(|tool| tool.name == "whichIde"),
        ide_mcp_runtime::resource::resources()
            .iter()
            .filter(|resource| resource.uri.starts_with("notes://")),
        ide_mcp_runtime::prompt::prompts()
            .iter()
            .filter(|prompt| prompt.name == "reviewNotes"),
    )
    .unwrap();
    let ide_notifier = Notifier::new();
    let ide = embedded_with(
        &rt,
        &sandbox,
        "notes",
        &[&sandbox.ws],
        registry,
        &events,
        ide_notifier.clone(),
    );
    let mut direct = rt.block_on(common::ws::connect(ide.port(), ide.auth_token()));
    let mut bridge = bridge(&sandbox, &sandbox.ws, &[]);
    assert_eq!(
        bridge.init["result"]["capabilities"],
        json!({"tools": {"listChanged": true}, "resources": {"listChanged": true},
               "prompts": {"listChanged": true}})
    );

    // Each answer, the IDE's errors included, byte for byte as the IDE
    // gives it (the same id asked of both).
    let requests = [
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "notes://today"})),
        ("resources/read", json!({"uri": "notes://line/1"})),
        ("resources/read", json!({"uri": "notes://line/2"})),
        ("resources/read", json!({"uri": "notes://nowhere"})),
        ("resources/read", json!({})),
        ("prompts/list", json!({})),
        (
            "prompts/get",
            json!({"name": "reviewNotes", "arguments": {"day": "Monday", "concern": "typos"}}),
        ),
        (
            "prompts/get",
            json!({"name": "reviewNotes", "arguments": {}}),
        ),
        ("prompts/get", json!({"name": "noSuchPrompt"})),
    ];
    let answers = same_answers(&rt, &mut bridge, &mut direct, &requests);
    what_they_hold(&answers);

    // A 2026-07-28 request: the IDE's result, marked complete; the IDE is
    // asked in its own session's era.
    let stateless = bridge.request(
        "resources/read",
        &json!({"uri": "notes://today",
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    );
    let mut expected = answers[2]["result"].clone();
    expected["resultType"] = json!("complete");
    assert_eq!(stateless["result"], expected, "{stateless}");

    list_changes_are_passed_on(&ide_notifier, &mut bridge);

    // No IDE: said so, as an internal error.
    rt.block_on(ide.shutdown());
    until_no_ide(&mut bridge, "whichIde", &sandbox.ws);
    let none = bridge.request("resources/read", &json!({"uri": "notes://today"}));
    assert_eq!(
        none["error"],
        json!({"code": -32603, "message": format!(
            "no IDE for {} is running: start your editor with `ide-mcp lsp-proxy`, or `ide-mcp serve`",
            sandbox.ws.display()
        )}),
    );
}

#[test]
fn an_ide_without_resources_or_prompts_has_none_advertised_and_its_errors_passed_on() {
    let sandbox = Sandbox::new();
    let rt = runtime();
    let events = Events::default();
    let _tools_only = embedded(
        &rt,
        &sandbox,
        "tools only",
        &[&sandbox.ws],
        &["whichIde"],
        &events,
    );
    let mut plain = self::bridge(&sandbox, &sandbox.ws, &[]);
    assert_eq!(
        plain.init["result"]["capabilities"],
        json!({"tools": {"listChanged": true}})
    );
    assert_eq!(which(&mut plain), "tools only");
    let unknown = plain.request("prompts/list", &json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
}
