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
    // file event, well within the ~20 ms after which the CLI asks.
    let text = std::fs::read_to_string(&broken).unwrap();
    std::fs::write(&broken, text.replace("missing_value + value", "value")).unwrap();
    let marked = Instant::now();
    while !engine.is_checking() {
        assert!(
            marked.elapsed() < Duration::from_secs(2),
            "the edit was not noticed"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(
        engine.settle_future().is_some(),
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

    // The engine logs it and publishes an empty set.
    let mut config = EngineConfig::new(dir.path());
    config.check = options;
    config.watch = false;
    let engine = CargoDiagnostics::start(config);
    let snapshot = wait_until(&engine, "the failed check", |s| s.generation() >= 1).await;
    assert_eq!(snapshot.count(), 0);
    assert!(!engine.is_checking());
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
    // A check that cannot finish soon: cargo blocked on a lock file would be
    // slow to set up, so use a program that never answers instead.
    let dir = tempfile::tempdir().unwrap();
    let script = slow_cargo(dir.path());

    let mut config = EngineConfig::new(dir.path());
    config.check.cargo = script.into();
    config.wait = Duration::from_millis(200);
    config.watch = false;
    let engine = CargoDiagnostics::start(config);
    let settled = engine.settle_future().expect("the first check is running");
    let start = Instant::now();
    settled.await;
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_millis(190) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    assert_eq!(engine.generation(), 0, "no complete check yet");
    assert!(engine.is_checking());
}

/// A `cargo` that never answers (`exec`, so killing it leaves no orphan).
fn slow_cargo(dir: &Path) -> PathBuf {
    let script = dir.join("slow-cargo");
    std::fs::write(&script, "#!/bin/sh\nexec sleep 30\n").unwrap();
    let mut permissions = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script, permissions).unwrap();
    script
}

#[tokio::test]
async fn combined_settle_waits_for_the_longest_bound_not_the_sum() {
    let dir = tempfile::tempdir().unwrap();
    let script = slow_cargo(dir.path());
    let engine = |wait_ms| {
        let mut config = EngineConfig::new(dir.path());
        config.check.cargo = script.clone().into();
        config.wait = Duration::from_millis(wait_ms);
        config.watch = false;
        Arc::new(CargoDiagnostics::start(config))
    };
    let combined = CombinedDiagnostics::new(vec![engine(300), engine(300), engine(300)]);
    let start = Instant::now();
    DiagnosticsQuery::settle(&combined)
        .expect("checks are running")
        .await;
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_millis(290) && waited < Duration::from_millis(850),
        "{waited:?}"
    );
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
    let combined = CombinedDiagnostics::new(engines);
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
