//! What a person sees while a cargo check keeps them waiting: a wait for
//! another cargo's lock is logged at once, and `ide-mcp call getDiagnostics`
//! on a terminal draws a progress line on stderr. A stand-in `cargo` (first
//! on `PATH`) holds the check for two seconds, as a real lock would.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn fake_cargo(dir: &Path, ws: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("cargo");
    let ws = ws.display();
    ide_mcp_test_support::write_script(
        &script,
        &format!(
            "#!/bin/sh\ncase \"$1\" in\n\
             metadata) echo '{{\"packages\":[],\"workspace_members\":[],\"resolve\":null,\
             \"workspace_root\":\"{ws}\",\"target_directory\":\"{ws}/target\",\"version\":1}}' ;;\n\
             check) echo '    Blocking waiting for file lock on build directory' >&2\n\
             sleep 2\n\
             echo '{{\"reason\":\"build-finished\",\"success\":true}}' ;;\n\
             esac\n"
        ),
    );
    bin
}

fn setup() -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let bin = fake_cargo(dir.path(), &ws);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (dir, ws, path)
}

#[test]
fn a_wait_for_the_build_lock_is_logged() {
    let (_dir, ws, path) = setup();
    let output = Command::new(common::bin())
        .args([
            "call",
            "getDiagnostics",
            "--diagnostics",
            "cargo",
            "--workspace",
        ])
        .arg(&ws)
        .env("PATH", path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("waiting for another cargo's lock on the build directory"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`--cargo-target-dir` gives the check its own"),
        "{stderr}"
    );
}

#[test]
fn call_draws_a_progress_line_on_a_terminal() {
    let (_dir, ws, path) = setup();
    // `script` gives the command a terminal and copies what it shows.
    let command = format!(
        "{} call getDiagnostics --diagnostics cargo --workspace {}",
        common::bin(),
        ws.display()
    );
    let output = Command::new("script")
        .args(["-qefc", &command, "/dev/null"])
        .env("PATH", path)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{shown}");
    let line = format!(
        "\r\x1b[2Kcargo check {}: 0 (waiting for another cargo's build-directory lock)",
        ws.display()
    );
    assert!(shown.contains(&line), "{shown:?}");
    // The line is cleared before the result is printed.
    let cleared = shown.rfind("\r\x1b[2K").unwrap();
    assert!(shown[cleared..].contains("\"content\""), "{shown:?}");
}
