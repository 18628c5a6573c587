//! `ide-mcp serve --lsp` with real language servers (pyright from npm,
//! clangd from Debian; `tests/lsp/install.sh` installs them): an error
//! written to disk is in the next `getDiagnostics {}` (which waits, within
//! `--diagnostics-wait`, for the server's fresh publish), fixed it is gone,
//! a killed server is restarted with its diagnostics back, SIGTERM of the
//! host takes its servers down; cargo and pyright together in one answer.
//! A server that hangs after start-up (the fake `lsp-echo --diagnose
//! --hang`) is found by the liveness probe, killed and restarted, its
//! diagnostics dropped, while a healthy one beside it is left alone; the
//! probe is also run against pyright and clangd.
//!
//! The live LSP tools on the host's own clangd and pyright: listed with
//! `--lsp` only; exact answers of goToDefinition across C files, hover,
//! findReferences by position and by name, renamePreview's diffs (files
//! untouched), quickFixes of a clangd error in a file no server had open,
//! pyright's lack of implementations as an `isError` naming it; a killed
//! server's question is answered (an error, or the restarted server's
//! answer), never left hanging.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::served_tools_with;
use common::stdio::{StdioSession, messages_from};
use common::{DEADLINE, Running, Sandbox, bin, children, installed, is_dead, wait_for_lockfile};
use serde_json::{Value, json};

/// The bound each fresh-after-edit query may wait (generous: a shared
/// machine); the test asserts that one query, not a poll, sees the change.
const WAIT_MS: &str = "20000";

fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    // Not `.tmpXXXX`: pyright excludes every path with a hidden directory
    // in it (`**/.*`) and publishes nothing for its files.
    let dir = tempfile::Builder::new()
        .prefix("ide-mcp-")
        .tempdir()
        .unwrap();
    let ws = dir.path().canonicalize().unwrap().join("ws");
    for (name, text) in files {
        let path = ws.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    (dir, ws)
}

fn serve(dir: &Path, ws: &Path, extra: &[&str]) -> StdioSession {
    let mut command = Command::new(bin());
    command
        .args(["serve", "--stdio", "--workspace"])
        .arg(ws)
        .args(["--diagnostics-wait", WAIT_MS])
        .args(extra)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env("RUST_LOG", "info,ide_mcp=debug,ide_mcp_lsp::client=debug")
        .current_dir(ws);
    StdioSession::start(command)
}

/// Writes `text` to `path` as an editor saves. The `claude` CLI asks about
/// 20 ms later; here the query waits until the host's watcher has seen the
/// change, which on a machine loaded by parallel tests may take longer:
/// what is asserted is that one query (no polling) gets the fresh
/// diagnostics.
fn save(session: &StdioSession, path: &Path, text: &str) {
    common::write_seen(&session.server, path, text);
}

/// The host's language server children (`node` for pyright).
fn servers(session: &StdioSession) -> Vec<u32> {
    children(session.pid())
}

/// The whole cycle against one server: `good` has no error, `bad` has one
/// whose message contains `error`.
fn cycle(server: &[&str], source: &str, file: &str, good: &str, bad: &str, error: &str) {
    let (dir, ws) = workspace(&[(file, good)]);
    let path = ws.join(file);
    let mut args = vec!["--lsp"];
    let command = server.join(" ");
    args.push(&command);
    args.extend(["--lsp-open", file]);
    // Probed often: the server must answer `$/ide-mcp/ping` throughout.
    args.extend([
        "--lsp-probe-interval",
        "200",
        "--lsp-probe-timeout",
        "10000",
    ]);
    let mut session = serve(dir.path(), &ws, &args);
    let clean = session.diagnostics_until("the first analysis", DEADLINE, |list| {
        messages_from(list, source).is_empty()
    });
    assert!(messages_from(&clean, source).is_empty(), "{clean:#}");

    // An error on disk: the very next query has it.
    save(&session, &path, bad);
    let list = session.diagnostics();
    let found = messages_from(&list, source);
    assert!(
        found.iter().any(|m| m.contains(error)),
        "{found:?} in {list:#}\nstderr:\n{}",
        session.server.stderr()
    );

    // Fixed on disk: gone at the next query.
    save(&session, &path, good);
    let list = session.diagnostics();
    assert!(messages_from(&list, source).is_empty(), "{list:#}");

    // The server killed: restarted, and the error (written back) is served.
    save(&session, &path, bad);
    let before = servers(&session);
    assert_eq!(before.len(), 1, "one server: {before:?}");
    Command::new("kill")
        .args(["-KILL", &before[0].to_string()])
        .status()
        .unwrap();
    let start = Instant::now();
    while servers(&session) == before || servers(&session).is_empty() {
        assert!(start.elapsed() < DEADLINE, "the server was not restarted");
        std::thread::sleep(Duration::from_millis(50));
    }
    let list = session.diagnostics_until("the restarted server's diagnostics", DEADLINE, |list| {
        messages_from(list, source)
            .iter()
            .any(|m| m.contains(error))
    });
    assert!(!messages_from(&list, source).is_empty());
    let after = servers(&session);
    assert_eq!(after.len(), 1, "{after:?}");
    assert_ne!(after, before, "a new server process");
    assert!(
        session.server.stderr().contains("language server failed"),
        "the crash is logged"
    );
    // The cycle may take less than a probe's interval: wait for one.
    let start = Instant::now();
    while !session
        .server
        .stderr()
        .contains("`$/ide-mcp/ping` answered")
    {
        assert!(
            start.elapsed() < DEADLINE,
            "no probe answered:\n{}",
            session.server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let log = session.server.stderr();
    assert!(
        !log.contains("stopped answering"),
        "the server answers the probe:\n{log}"
    );

    // SIGTERM of the host: it exits and takes its server with it.
    let status = session.server.terminate(common::ANSWER);
    assert!(status.success() || status.code().is_none(), "{status}");
    let start = Instant::now();
    while !is_dead(after[0]) {
        assert!(start.elapsed() < DEADLINE, "the server outlived the host");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn pyright_on_a_python_workspace() {
    if !installed("pyright-langserver") {
        return;
    }
    cycle(
        &["pyright-langserver", "--stdio"],
        "Pyright",
        "pkg/app.py",
        "def f(x: int) -> int:\n    return x\n",
        "def f(x: int) -> str:\n    return x\n",
        "is not assignable to return type",
    );
}

#[test]
fn clangd_on_a_c_workspace() {
    if !installed("clangd") {
        return;
    }
    cycle(
        &["clangd"],
        "clang",
        "src/main.c",
        "int main(void) {\n  return 0;\n}\n",
        "int main(void) {\n  return missing;\n}\n",
        "Use of undeclared identifier 'missing'",
    );
}

#[test]
fn cargo_and_pyright_in_one_answer() {
    if !installed("pyright-langserver") {
        return;
    }
    let sandbox = common::Sandbox::new();
    std::fs::write(sandbox.ws.join("tool.py"), "n: int = 'x'\n").unwrap();
    let mut session = serve(
        sandbox.dir.path(),
        &sandbox.ws,
        &["--lsp", "pyright-langserver --stdio"],
    );
    let list = session.diagnostics_until("cargo's and pyright's", DEADLINE, |list| {
        !messages_from(list, "rustc").is_empty() && !messages_from(list, "Pyright").is_empty()
    });
    let rustc = messages_from(&list, "rustc");
    assert!(
        rustc
            .iter()
            .any(|m| m.starts_with("lib.rs: cannot find value `missing_value`")),
        "{rustc:?}"
    );
    let pyright = messages_from(&list, "Pyright");
    assert!(
        pyright
            .iter()
            .any(|m| m.starts_with("tool.py: Type \"Literal['x']\"")),
        "{pyright:?}"
    );
}

/// The probe of the tests: often, and a deadline generous enough for a
/// healthy server on a loaded machine.
const PROBE: [&str; 4] = ["--lsp-probe-interval", "200", "--lsp-probe-timeout", "2000"];

/// `serve` (IDE WebSocket) on `ws` with no cargo source and `args`.
fn serve_ide(sandbox: &Sandbox, args: &[&str]) -> Running {
    let mut command = sandbox.command(&["serve", "--diagnostics", "none"]);
    command.args(args).env(
        "RUST_LOG",
        "info,ide_mcp::diagnostics::watch=debug,ide_mcp_lsp::client=debug",
    );
    Running::spawn(command)
}

/// The `lsp-echo` diagnostics of `list` (messages `pid PID, version N…`),
/// as (pid, message).
fn echoes(list: &Value) -> Vec<(u32, String)> {
    messages_from(list, "lsp-echo")
        .into_iter()
        .map(|line| {
            let message = line.split_once(": ").unwrap().1.to_owned();
            let pid = message
                .strip_prefix("pid ")
                .and_then(|rest| rest.split(',').next())
                .and_then(|pid| pid.parse().ok())
                .unwrap_or_else(|| panic!("not an lsp-echo message: {message}"));
            (pid, message)
        })
        .collect()
}

/// The host's children that run `lsp-echo --hang`.
fn hanging_children(host: u32) -> Vec<u32> {
    children(host)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| cmdline.split(|b| *b == 0).any(|arg| arg == b"--hang"))
        })
        .collect()
}

#[tokio::test]
async fn a_hung_server_is_restarted_and_its_diagnostics_dropped() {
    let (dir, ws) = workspace(&[("notes.txt", "one\n")]);
    let sandbox = Sandbox { dir, ws };
    let path = sandbox.ws.join("notes.txt");
    let echo = format!("'{}' --diagnose", ide_mcp_test_support::lsp_echo());
    let hanging = format!("{echo} --hang");
    // A fresh diagnostic is waited for far longer than any answer may take
    // (`ANSWER`): an answer proves the wait was released.
    let mut args = vec!["--diagnostics-wait", "600000", "--lsp-open", "notes.txt"];
    args.extend(["--lsp", &hanging, "--lsp", &echo]);
    args.extend(PROBE);
    let mut server = serve_ide(&sandbox, &args);
    let (lockfile, content) = wait_for_lockfile(&sandbox, &mut server);
    let port = common::lockfile_port(&lockfile);
    let mut client = common::ws::connect(port, content["authToken"].as_str().unwrap()).await;
    let host = server.child.id();
    let mut diagnostics = async || client.call("getDiagnostics", json!({})).await;

    // Both servers publish; the hanging one then stops answering.
    let start = Instant::now();
    let (first, healthy) = loop {
        let list = diagnostics().await;
        let found = echoes(&list);
        let hung = found.iter().find(|(_, m)| m.ends_with(", hanging"));
        let fine = found.iter().find(|(_, m)| !m.ends_with(", hanging"));
        if let (Some(hung), Some(fine)) = (hung, fine) {
            break (hung.0, fine.0);
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no diagnostics from both servers: {list:#}\nstderr:\n{}",
            server.stderr()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };

    // The probe finds it hung: logged with its stderr, killed, and a new
    // process started in its place.
    until("the hung server is replaced", &server, || {
        is_dead(first) && hanging_children(host).iter().any(|pid| *pid != first)
    })
    .await;
    let log = server.stderr();
    assert!(log.contains("language server stopped answering"), "{log}");
    assert!(
        log.contains(&format!("lsp-echo {first}: hanging")),
        "the stderr tail is logged: {log}"
    );
    // Its diagnostics are gone; the healthy server's stay, and it was not
    // touched.
    let list = diagnostics().await;
    let found = echoes(&list);
    assert!(found.iter().all(|(pid, _)| *pid != first), "{list:#}");
    assert!(found.iter().any(|(pid, _)| *pid == healthy), "{list:#}");
    assert!(children(host).contains(&healthy));

    // A change while a new process hangs (it published, then stopped): the
    // query waits for both servers' fresh diagnostics, and the hung one's
    // wait ends when it is found hung.
    let start = Instant::now();
    let current = loop {
        let running = hanging_children(host);
        let published = echoes(&diagnostics().await);
        if let Some(&(pid, _)) = published.iter().find(|(pid, _)| running.contains(pid)) {
            break pid;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no new process published; stderr:\n{}",
            server.stderr()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    common::write_seen(&server, &path, "two\n");
    let list = diagnostics().await;
    let found = echoes(&list);
    assert!(
        found
            .iter()
            .all(|(pid, _)| *pid != first && *pid != current),
        "hung: {first}, {current}: {list:#}\nstderr:\n{}",
        server.stderr()
    );
    // The healthy server's answer to the change (a save can be two
    // changes: any version after the first).
    assert!(
        found
            .iter()
            .any(|(pid, m)| *pid == healthy && !m.ends_with("version 1")),
        "the healthy server's fresh answer: {list:#}"
    );
    // The wait ended as the hung process was dropped, just before its kill.
    until("the second hung process is killed", &server, || {
        is_dead(current) && server.stderr().matches("stopped answering").count() >= 2
    })
    .await;
    assert!(children(host).contains(&healthy));

    // The host still answers, and takes every server down on SIGTERM.
    let tools = client.request("tools/list", json!({})).await;
    assert!(!common::tool_names(&tools).is_empty());
    let servers = children(host);
    let status = server.terminate(common::ANSWER);
    assert!(status.success() || status.code().is_none(), "{status}");
    until("the servers end with the host", &server, || {
        servers.iter().all(|pid| is_dead(*pid))
    })
    .await;
}

/// Waits until `done`, at most [`DEADLINE`].
async fn until(what: &str, server: &Running, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < DEADLINE,
            "timed out: {what}; stderr:\n{}",
            server.stderr()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The C and Python files of the live tools' test.
const LIVE_FILES: [(&str, &str); 6] = [
    ("add.h", "int add(int a, int b);\n"),
    (
        "add.c",
        "#include \"add.h\"\n\nint add(int a, int b) { return a + b; }\n",
    ),
    (
        "main.c",
        "#include \"add.h\"\n\nint main(void) {\n  return add(1, 2);\n}\n",
    ),
    (
        "bad.c",
        "#include \"add.h\"\n\nint main(void) {\n  return add(1, 2)\n}\n",
    ),
    ("util.py", "def greet(name):\n    return \"hi \" + name\n"),
    ("app.py", "from util import greet\n\ngreet(\"a\")\n"),
];

/// `tools/call` of `name`: the whole result (`isError` and all). Asked
/// again, as an agent would, while the server does not answer within the
/// host's bound (10 s): a real server busy indexing on a loaded machine may
/// not, the first question after its start above all.
fn call(session: &mut StdioSession, name: &str, arguments: &Value) -> Value {
    let start = Instant::now();
    loop {
        let reply = session.request("tools/call", &json!({"name": name, "arguments": arguments}));
        let result = reply["result"].clone();
        let late = result["isError"] == true
            && result["content"][0]["text"]
                .as_str()
                .is_some_and(|text| text.starts_with("the language server did not answer within"));
        if !late {
            return result;
        }
        assert!(start.elapsed() < DEADLINE, "{name}: {result}");
    }
}

/// The answer of a call that succeeded.
fn answer(result: &Value) -> Value {
    assert_ne!(result["isError"], true, "{result}");
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

/// A location as the tools answer it.
fn location(path: &Path, line: u32, character: u32, end: u32, text: &str) -> Value {
    json!({"filePath": path, "line": line, "character": character, "endLine": line,
           "endCharacter": end, "lineText": text})
}

/// Locations in a stable order (servers list references in their own).
fn sorted(mut list: Value) -> Value {
    list.as_array_mut()
        .unwrap()
        .sort_by_key(|l| (l["filePath"].to_string(), l["line"].as_u64()));
    list
}

#[test]
fn the_live_tools_ask_the_host_s_own_clangd_and_pyright() {
    if !installed("clangd") || !installed("pyright-langserver") {
        return;
    }
    let (dir, ws) = workspace(&LIVE_FILES);
    let file = |name: &str| ws.join(name);
    let mut session = serve(
        dir.path(),
        &ws,
        &[
            "--lsp",
            "clangd",
            "--lsp",
            "pyright-langserver --stdio",
            "--lsp-open",
            "main.c",
        ],
    );
    let list = session.request("tools/list", &json!({}));
    assert_eq!(
        common::tool_names(&list["result"]),
        served_tools_with(true),
        "every live tool is listed"
    );

    // C, across files: `add`'s declaration, in the header.
    let at_add = json!({"filePath": file("main.c"), "line": 4, "character": 10});
    let definition = answer(&call(&mut session, "goToDefinition", &at_add));
    assert_eq!(
        definition,
        json!([location(&file("add.h"), 1, 5, 8, "int add(int a, int b);")])
    );
    let hover = answer(&call(&mut session, "hover", &at_add));
    let contents = hover["contents"].as_str().unwrap().to_owned();
    assert!(
        contents.starts_with("### function `add`") && contents.contains("int add(int a, int b)"),
        "{hover:#}"
    );
    assert_eq!(
        hover,
        json!({"contents": contents, "line": 4, "character": 10, "endLine": 4,
               "endCharacter": 13, "lineText": "  return add(1, 2);"})
    );
    // clangd knows the references of the files it has open (no index).
    let references = answer(&call(&mut session, "findReferences", &at_add));
    assert_eq!(
        references,
        json!([location(&file("main.c"), 4, 10, 13, "  return add(1, 2);")])
    );

    // Python, by name: the definition, the import and the call.
    let by_name = json!({"filePath": file("util.py"), "symbol": "greet"});
    let references = answer(&call(&mut session, "findReferences", &by_name));
    let greet_calls = sorted(json!([
        location(&file("util.py"), 1, 5, 10, "def greet(name):"),
        location(&file("app.py"), 1, 18, 23, "from util import greet"),
        location(&file("app.py"), 3, 1, 6, "greet(\"a\")"),
    ]));
    assert_eq!(sorted(references), greet_calls);
    let at_greet = json!({"filePath": file("util.py"), "line": 1, "character": 5});
    let references = answer(&call(&mut session, "findReferences", &at_greet));
    assert_eq!(sorted(references), greet_calls);

    // pyright has no implementations: said, naming it.
    let missing = call(&mut session, "goToImplementation", &at_greet);
    assert_eq!(
        missing,
        json!({"isError": true, "content": [{"type": "text", "text": format!(
            "the language server for {} (pyright) does not provide implementations",
            file("util.py").display()
        )}]})
    );

    // No server for the file's extension.
    let notes = file("notes.txt");
    let none = call(
        &mut session,
        "hover",
        &json!({"filePath": notes, "line": 1, "character": 1}),
    );
    assert_eq!(
        none["content"][0]["text"],
        format!(
            "no language server run by this host (`serve --lsp`) handles {}: add `--lsp` with a server for its language",
            notes.display()
        )
    );
    assert_eq!(none["isError"], true);

    rename_is_previewed(&mut session, &ws);
    fixes_of_a_file_no_server_had_open(&mut session, &ws);
    a_killed_server_s_question_is_answered(&mut session, &at_add, &definition);
}

/// A hover quotes the definition it finds (a macro's value): on a symbol
/// defined in a file the user's deny rules hide, nothing of it is
/// answered, and the answer says one result was left out; a symbol
/// defined elsewhere is hovered as ever.
#[test]
fn a_hover_quotes_nothing_of_a_hidden_definition() {
    if !installed("clangd") {
        return;
    }
    let (dir, ws) = workspace(&[
        (
            ".claude/settings.json",
            r#"{"permissions": {"deny": ["Read(./secret.h)"]}}"#,
        ),
        ("secret.h", "#define API_KEY 271828\n"),
        ("add.h", "int add(int a, int b);\n"),
        (
            "main.c",
            "#include \"add.h\"\n#include \"secret.h\"\n\nint main(void) {\n  return add(API_KEY, 2);\n}\n",
        ),
    ]);
    let mut session = serve(
        dir.path(),
        &ws,
        &["--lsp", "clangd", "--lsp-open", "main.c"],
    );
    let main_c = ws.join("main.c");
    let at_key = json!({"filePath": main_c, "line": 5, "character": 14});
    let hidden = call(&mut session, "hover", &at_key);
    assert_eq!(
        hidden,
        json!({"content": [
            {"type": "text", "text": r#"{"contents":"","definedIn":[]}"#},
            {"type": "text", "text": "1 result in files the user's deny rules hide were left out"},
        ]}),
        "{}",
        session.server.stderr()
    );
    assert!(!hidden.to_string().contains("271828"));
    let at_add = json!({"filePath": main_c, "line": 5, "character": 10});
    let shown = answer(&call(&mut session, "hover", &at_add));
    assert!(
        shown["contents"]
            .as_str()
            .is_some_and(|c| c.contains("int add(int a, int b)")),
        "{shown:#}"
    );
}

/// renamePreview: one diff per file, applied nowhere.
fn rename_is_previewed(session: &mut StdioSession, ws: &Path) {
    let args = json!({"filePath": ws.join("util.py"), "line": 1, "character": 5,
                      "newName": "welcome"});
    let mut preview = answer(&call(session, "renamePreview", &args));
    preview["changes"]
        .as_array_mut()
        .unwrap()
        .sort_by_key(|c| c["filePath"].to_string());
    assert_eq!(
        preview,
        json!({"changes": [
            {"filePath": ws.join("app.py"), "diff": "--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n-from util import greet\n+from util import welcome\n \n-greet(\"a\")\n+welcome(\"a\")\n"},
            {"filePath": ws.join("util.py"), "diff": "--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n-def greet(name):\n+def welcome(name):\n     return \"hi \" + name\n"},
        ]})
    );
    for (name, text) in LIVE_FILES {
        assert_eq!(
            std::fs::read_to_string(ws.join(name)).unwrap(),
            text,
            "{name} is untouched"
        );
    }
}

/// quickFixes of clangd's error in bad.c, which no server had open: opened
/// for the question, its diagnostics awaited.
fn fixes_of_a_file_no_server_had_open(session: &mut StdioSession, ws: &Path) {
    let bad = ws.join("bad.c");
    let fixes = answer(&call(
        session,
        "quickFixes",
        &json!({"filePath": bad, "line": 5}),
    ));
    assert_eq!(
        fixes,
        json!({
            "diagnostics": [{"message": "Expected ';' after return statement (fix available)",
                "severity": "Error", "source": "clang", "code": "expected_semi_after_stmt",
                "line": 5, "character": 1, "endLine": 5, "endCharacter": 2, "lineText": "}"}],
            "fixes": [{"title": "insert ';'", "kind": "quickfix", "isPreferred": true,
                "changes": [{"filePath": bad, "diff": "--- a/bad.c\n+++ b/bad.c\n@@ -1,5 +1,5 @@\n #include \"add.h\"\n \n int main(void) {\n-  return add(1, 2)\n+  return add(1, 2);\n }\n"}]}],
        })
    );
}

/// clangd killed: the next question gets the restarted server's answer,
/// or an error saying so, never no answer.
fn a_killed_server_s_question_is_answered(
    session: &mut StdioSession,
    at_add: &Value,
    definition: &Value,
) {
    let clangd: Vec<u32> = servers(session)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| cmdline.split(|b| *b == 0).next() == Some(b"clangd"))
        })
        .collect();
    assert_eq!(clangd.len(), 1, "{clangd:?}");
    Command::new("kill")
        .args(["-KILL", &clangd[0].to_string()])
        .status()
        .unwrap();
    let start = Instant::now();
    loop {
        let result = call(session, "goToDefinition", at_add);
        if result["isError"] != true {
            assert_eq!(&answer(&result), definition);
            break;
        }
        let message = result["content"][0]["text"].as_str().unwrap();
        assert!(
            [
                "the language server stopped before it answered (it is being restarted): ask again",
                "the language server was restarted during the question: ask again",
            ]
            .contains(&message)
                || message.ends_with("(clangd) is not running: it is starting or restarting, or failed too often (see the host's log)"),
            "{message}"
        );
        assert!(start.elapsed() < DEADLINE, "clangd is not back");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn without_lsp_the_live_tools_are_not_listed() {
    let (dir, ws) = workspace(&[("notes.txt", "one\n")]);
    let mut session = serve(dir.path(), &ws, &["--diagnostics", "none"]);
    let list = session.request("tools/list", &json!({}));
    let names = common::tool_names(&list["result"]);
    common::assert_headless_tools(&names);
    for tool in ide_mcp_tools::LSP_TOOL_NAMES {
        assert!(!names.contains(tool), "{tool}: {names:?}");
    }
}
