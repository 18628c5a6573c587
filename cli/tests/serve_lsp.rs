//! `ide-mcp serve --lsp` with real language servers (pyright from npm,
//! clangd from Debian; `tests/lsp/install.sh` installs them): an error
//! written to disk is in the next `getDiagnostics {}` (which waits, within
//! `--diagnostics-wait`, for the server's fresh publish), fixed it is gone,
//! a killed server is restarted with its diagnostics back, SIGTERM of the
//! host takes its servers down; cargo and pyright together in one answer.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::stdio::{StdioSession, messages_from};
use common::{DEADLINE, bin, children, installed, is_dead};

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
/// 20 ms later; the pause here is longer only so that the kernel's file
/// event reaches the host on a machine loaded by parallel tests: what is
/// asserted is that one query (no polling) gets the fresh diagnostics.
fn save(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::thread::sleep(Duration::from_millis(300));
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
    let mut session = serve(dir.path(), &ws, &args);
    let clean = session.diagnostics_until("the first analysis", DEADLINE, |list| {
        messages_from(list, source).is_empty()
    });
    assert!(messages_from(&clean, source).is_empty(), "{clean:#}");

    // An error on disk: the very next query has it.
    save(&path, bad);
    let list = session.diagnostics();
    let found = messages_from(&list, source);
    assert!(
        found.iter().any(|m| m.contains(error)),
        "{found:?} in {list:#}\nstderr:\n{}",
        session.server.stderr()
    );

    // Fixed on disk: gone at the next query.
    save(&path, good);
    let list = session.diagnostics();
    assert!(messages_from(&list, source).is_empty(), "{list:#}");

    // The server killed: restarted, and the error (written back) is served.
    save(&path, bad);
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

    // SIGTERM of the host: it exits and takes its server with it.
    let status = session.server.terminate(Duration::from_secs(20));
    assert!(status.success() || status.code().is_none(), "{status}");
    let start = Instant::now();
    while !is_dead(after[0]) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the server outlived the host"
        );
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
