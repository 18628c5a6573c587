//! Cargo diagnostics on the committed fixture workspace
//! (`tests/fixtures/diag-crate`), checked in a temporary copy with its own
//! target directory.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ide_mcp::diagnostics::{
    CargoDiagnostics, CheckError, CheckOptions, CombinedDiagnostics, DiagnosticsSnapshot,
    EngineConfig, run_check,
};
use ide_mcp_tools::DiagnosticsQuery;
use lsp_types::{DiagnosticSeverity, NumberOrString, Position, Range};

/// Generous: the first check compiles the fixture from nothing, on a machine
/// shared with other builds.
const CHECK_DEADLINE: Duration = Duration::from_mins(3);

fn fixture_copy() -> (tempfile::TempDir, PathBuf, EngineConfig) {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().canonicalize().unwrap().join("ws");
    common::copy_dir(&common::fixture(), &workspace);
    let mut config = EngineConfig::new(&workspace);
    config.check.target_dir = Some(dir.path().join("target"));
    (dir, workspace, config)
}

/// Waits, query by query as a client would, until `done` holds.
async fn wait_until(
    engine: &CargoDiagnostics,
    what: &str,
    done: impl Fn(&DiagnosticsSnapshot) -> bool,
) -> std::sync::Arc<DiagnosticsSnapshot> {
    let start = Instant::now();
    loop {
        if let Some(settled) = engine.settle_future() {
            settled.await;
        }
        let snapshot = engine.snapshot();
        if done(&snapshot) {
            return snapshot;
        }
        assert!(
            start.elapsed() < CHECK_DEADLINE,
            "timed out waiting for {what}; last snapshot: {snapshot:#?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn range(start: (u32, u32), end: (u32, u32)) -> Range {
    Range::new(Position::new(start.0, start.1), Position::new(end.0, end.1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_error_and_warning_then_the_error_fixed_on_disk() {
    let (_dir, workspace, config) = fixture_copy();
    let broken = workspace.join("broken/src/lib.rs");
    let warns = workspace.join("warns/src/lib.rs");
    let engine = CargoDiagnostics::start(config);
    assert!(engine.is_checking(), "the first check starts at once");

    let snapshot = wait_until(&engine, "the first check", |s| s.generation() >= 1).await;
    assert_eq!(snapshot.files().len(), 2, "{snapshot:#?}");

    let errors = snapshot.file(&broken);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let error = &errors[0];
    // Line 6: `    let pair = ("héllo 🦀", missing_value + value);` — the crab
    // is one char but two UTF-16 units.
    assert_eq!(error.range, range((5, 28), (5, 41)));
    assert_eq!(error.severity, Some(DiagnosticSeverity::ERROR));
    assert_eq!(error.code, Some(NumberOrString::String("E0425".into())));
    assert_eq!(error.source.as_deref(), Some("rustc"));
    assert!(
        error
            .message
            .starts_with("cannot find value `missing_value` in this scope"),
        "{}",
        error.message
    );

    let warnings = snapshot.file(&warns);
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    let warning = &warnings[0];
    assert_eq!(warning.range, range((4, 8), (4, 14)));
    assert_eq!(warning.severity, Some(DiagnosticSeverity::WARNING));
    assert_eq!(
        warning.code,
        Some(NumberOrString::String("unused_variables".into()))
    );
    assert!(warning.message.starts_with("unused variable: `ünused`"));

    // Fix the error on disk. The watcher marks the engine busy on the first
    // file event (how soon is a matter for a benchmark, not this test).
    let text = std::fs::read_to_string(&broken).unwrap();
    std::fs::write(&broken, text.replace("missing_value + value", "value")).unwrap();
    let marked = Instant::now();
    // A loaded machine may poll only after the check has ended: the new
    // generation then shows the edit was noticed.
    while !engine.is_checking() && engine.generation() == snapshot.generation() {
        assert!(marked.elapsed() < HANG, "the edit was not noticed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(
        engine.settle_future().is_some() || engine.generation() > snapshot.generation(),
        "a query now waits for the check"
    );

    let fixed = wait_until(&engine, "the error to go", |s| s.file(&broken).is_empty()).await;
    assert!(fixed.generation() > snapshot.generation());
    assert_eq!(fixed.file(&warns), warnings, "the warning stays");
}

#[tokio::test]
async fn a_broken_manifest_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package\nname = ").unwrap();
    let options = CheckOptions {
        target_dir: Some(dir.path().join("target")),
        ..CheckOptions::default()
    };
    let error = run_check(dir.path(), &options).await.unwrap_err();
    assert!(matches!(error, CheckError::Failed { .. }), "{error:?}");
    assert!(error.to_string().contains("Cargo.toml"), "{error}");

    // The engine serves cargo's message as a diagnostic on the manifest,
    // where cargo points.
    let mut config = EngineConfig::new(dir.path());
    config.check = options;
    config.watch = false;
    let engine = CargoDiagnostics::start(config);
    let snapshot = wait_until(&engine, "the failed check", |s| s.generation() >= 1).await;
    assert!(!engine.is_checking());
    let manifest = dir.path().canonicalize().unwrap().join("Cargo.toml");
    let errors = snapshot.file(&manifest);
    assert_eq!(errors.len(), 1, "{snapshot:#?}");
    assert_eq!(errors[0].range, range((0, 8), (0, 9)));
    assert_eq!(errors[0].message, "unclosed table, expected `]`");
    assert_eq!(errors[0].source.as_deref(), Some("cargo"));
    assert_eq!(errors[0].severity, Some(DiagnosticSeverity::ERROR));
}

#[tokio::test]
async fn a_missing_cargo_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let options = CheckOptions {
        cargo: dir.path().join("no-such-cargo").into(),
        target_dir: None,
    };
    let error = run_check(dir.path(), &options).await.unwrap_err();
    assert!(matches!(error, CheckError::Spawn { .. }), "{error:?}");
}

#[tokio::test]
async fn settle_is_bounded_by_the_configured_wait() {
    // A check that cannot finish until the test lets it: the fake `cargo`
    // waits for a file the test writes only once the settle has answered,
    // so the answer provably came while the checker was still running.
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("release");
    let script = held_cargo(dir.path(), &release);

    let mut config = EngineConfig::new(dir.path());
    config.check.cargo = script.into();
    config.wait = Duration::from_millis(200);
    config.watch = false;
    let engine = CargoDiagnostics::start(config);
    let settled = engine.settle_future().expect("the first check is running");
    let start = Instant::now();
    tokio::time::timeout(HANG, settled)
        .await
        .expect("the settle answers while the check is held");
    // A lower bound holds on any machine: it waited for the check first.
    assert!(start.elapsed() >= Duration::from_millis(190));
    assert_eq!(engine.generation(), 0, "no complete check yet");
    assert!(engine.is_checking());

    // Let the held check end: it was the one the settle gave up on.
    std::fs::write(&release, "").unwrap();
    wait_until(&engine, "the held check to end", |s| s.generation() >= 1).await;
    assert!(!engine.is_checking());
}

/// Only a hang breaks it: an answer that is merely slow on a loaded
/// machine still passes.
const HANG: Duration = Duration::from_mins(1);

/// A `cargo` that fails once `release` exists, and never answers before
/// (it gives up when the test's directory is gone, so no loop outlives
/// the test).
fn held_cargo(dir: &Path, release: &Path) -> PathBuf {
    let script = dir.join("held-cargo");
    ide_mcp_test_support::write_script(
        &script,
        &format!(
            "#!/bin/sh\nwhile [ -d '{dir}' ] && [ ! -e '{release}' ]; do sleep 0.05; done\n\
             echo 'error: released' >&2\nexit 1\n",
            dir = dir.display(),
            release = release.display(),
        ),
    );
    script
}

/// A `cargo` that never answers (`exec`, so killing it leaves no orphan).
fn slow_cargo(dir: &Path) -> PathBuf {
    let script = dir.join("slow-cargo");
    ide_mcp_test_support::write_script(&script, "#!/bin/sh\nexec sleep 30\n");
    script
}

// The bounds are exact on tokio's paused clock, which advances only when
// every task waits: three bounds of 100, 200 and 300 ms end at 300 ms
// awaited together (600 ms were they awaited one after the other), on a
// loaded machine as on an idle one.
#[tokio::test(start_paused = true)]
async fn combined_settle_waits_for_the_longest_bound_not_the_sum() {
    let dir = tempfile::tempdir().unwrap();
    let script = slow_cargo(dir.path());
    let engine = |wait_ms| {
        let mut config = EngineConfig::new(dir.path());
        config.check.cargo = script.clone().into();
        config.wait = Duration::from_millis(wait_ms);
        config.watch = false;
        Arc::new(CargoDiagnostics::start(config)) as Arc<dyn DiagnosticsQuery>
    };
    let combined = CombinedDiagnostics::new([engine(300), engine(100), engine(200)]);
    let start = tokio::time::Instant::now();
    DiagnosticsQuery::settle(&combined)
        .expect("checks are running")
        .await;
    assert_eq!(start.elapsed(), Duration::from_millis(300));
    assert_eq!(DiagnosticsQuery::generation(&combined), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_folders_of_one_cargo_workspace_report_each_file_once() {
    let (dir, workspace, _) = fixture_copy();
    // `cargo check --workspace` in a member checks the whole fixture workspace.
    let engines: Vec<Arc<CargoDiagnostics>> = ["broken", "warns"]
        .iter()
        .map(|member| {
            let mut config = EngineConfig::new(workspace.join(member));
            config.check.target_dir = Some(dir.path().join("target"));
            config.watch = false;
            Arc::new(CargoDiagnostics::start(config))
        })
        .collect();
    for engine in &engines {
        engine.first_check().await;
    }
    let combined =
        CombinedDiagnostics::new(engines.into_iter().map(|e| e as Arc<dyn DiagnosticsQuery>));
    let files: Vec<PathBuf> = combined
        .all()
        .iter()
        .map(|file| file.path.to_path_buf())
        .collect();
    assert_eq!(
        files,
        [
            workspace.join("broken/src/lib.rs"),
            workspace.join("warns/src/lib.rs")
        ]
    );
    let errors = combined
        .for_file(&workspace.join("broken/src/lib.rs"))
        .unwrap();
    assert_eq!(errors[0].code, Some(NumberOrString::String("E0425".into())));
    assert!(
        combined
            .for_file(&workspace.join("warns/Cargo.toml"))
            .is_none()
    );
}

/// A `cargo` that fails at once and counts its runs in `runs`.
fn counting_cargo(dir: &Path) -> (PathBuf, PathBuf) {
    let runs = dir.join("runs");
    let script = dir.join("counting-cargo");
    ide_mcp_test_support::write_script(
        &script,
        &format!(
            "#!/bin/sh\necho run >> '{}'\necho 'error: fake cargo' >&2\nexit 1\n",
            runs.display()
        ),
    );
    (script, runs)
}

fn run_count(runs: &Path) -> usize {
    std::fs::read_to_string(runs).map_or(0, |text| text.lines().count())
}

#[tokio::test]
async fn a_lazy_engine_runs_cargo_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (script, runs) = counting_cargo(dir.path());
    let mut config = EngineConfig::new(dir.path());
    config.check.cargo = script.into();
    config.watch = false;
    config.lazy = true;
    let engine = CargoDiagnostics::start(config);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(run_count(&runs), 0, "nothing asked yet");
    DiagnosticsQuery::settle(&engine)
        .expect("asking starts the check")
        .await;
    assert!(run_count(&runs) >= 1);
    // cargo's failure is served, on the manifest.
    let manifest = dir.path().canonicalize().unwrap().join("Cargo.toml");
    assert_eq!(engine.snapshot().file(&manifest)[0].message, "fake cargo");
}

#[tokio::test]
async fn a_change_to_an_ignored_file_starts_no_check() {
    let dir = tempfile::tempdir().unwrap();
    // The fake cargo lives beside the watched tree, not in it.
    let (script, runs) = counting_cargo(dir.path());
    let root = dir.path().canonicalize().unwrap().join("ws");
    for sub in ["src", "target/debug", ".git", "node_modules/pkg", "gen"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    std::fs::write(root.join(".gitignore"), "gen/\n*.log\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "").unwrap();
    let mut config = EngineConfig::new(&root);
    config.check.cargo = script.into();
    config.debounce = Duration::from_millis(50);
    let engine = CargoDiagnostics::start(config);
    wait_until(&engine, "the first check", |s| s.generation() >= 1).await;
    let first = run_count(&runs);

    for ignored in [
        "target/debug/out.rmeta",
        ".git/index",
        "node_modules/pkg/index.js",
        "gen/schema.rs",
        "src/trace.log",
        "src/.lib.rs.swp",
        "src/lib.rs~",
        "src/4913",
    ] {
        std::fs::write(root.join(ignored), "x").unwrap();
    }
    std::fs::create_dir(root.join("target/new")).unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !engine.is_checking(),
        "an ignored change marked the engine busy"
    );
    assert_eq!(run_count(&runs), first, "an ignored change started cargo");

    // A source change does start one, in a directory created after start too.
    std::fs::create_dir(root.join("src/new")).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    wait_until(&engine, "the directory's check", |_| true).await;
    let before = run_count(&runs);
    std::fs::write(root.join("src/new/mod.rs"), "x").unwrap();
    let start = Instant::now();
    while run_count(&runs) == before {
        assert!(start.elapsed() < HANG, "the change was not noticed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn columns_match_the_files_utf16_columns_with_multi_byte_and_astral_text() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"cols\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    // Each undefined name follows text of a different width: 2-byte é,
    // 3-byte CJK, 4-byte astral (two UTF-16 units each), combining marks.
    let source = "pub fn f() -> usize {\n    let _a = \"é\"; let _b = undefined_one;\n    let _c = \"漢字\"; let _d = undefined_two;\n    let _e = \"🦀𝄞\"; let _f = undefined_three;\n    let _g = \"e\u{301}🦀\"; undefined_four\n}\n";
    std::fs::write(root.join("src/lib.rs"), source).unwrap();
    let options = CheckOptions {
        target_dir: Some(root.join("target")),
        ..CheckOptions::default()
    };
    let report = run_check(&root, &options).await.unwrap();
    let errors = &report.files[&root.join("src/lib.rs")];
    assert_eq!(errors.len(), 4, "{errors:#?}");
    for error in errors {
        let name = error.message.split('`').nth(1).unwrap();
        let (line, text) = source
            .lines()
            .enumerate()
            .find(|(_, text)| text.contains(name))
            .unwrap();
        let byte = text.find(name).unwrap();
        let start = text[..byte].encode_utf16().count() as u32;
        let end = start + name.encode_utf16().count() as u32;
        assert_eq!(
            error.range,
            range((line as u32, start), (line as u32, end)),
            "{name}"
        );
    }
}
