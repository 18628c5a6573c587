use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lsp_types::{Position, Range};

use super::*;
use crate::memory::MemoryDiagnostics;
use crate::ports::SettleFuture;
use crate::test_util::text_of;

fn diag(line: u32, message: &str, severity: Option<DiagnosticSeverity>) -> Diagnostic {
    Diagnostic {
        severity,
        ..Diagnostic::new_simple(
            Range::new(Position::new(line, 4), Position::new(line, 7)),
            message.into(),
        )
    }
}

fn file(path: &str, diagnostics: Vec<Diagnostic>) -> FileDiagnostics {
    FileDiagnostics {
        path: Arc::from(Path::new(path)),
        diagnostics: diagnostics.into(),
    }
}

#[test]
fn all_files_in_the_cli_shape() {
    let mut e0425 = diag(
        2,
        "cannot find value `foo` in this scope",
        Some(DiagnosticSeverity::ERROR),
    );
    e0425.source = Some("rustc".into());
    e0425.code = Some(NumberOrString::String("E0425".into()));
    let mut numbered = diag(0, "unused \"x\"", Some(DiagnosticSeverity::WARNING));
    numbered.code = Some(NumberOrString::Number(6133));
    let files = [
        file("/abs/src/main.rs", vec![e0425]),
        file("/abs/empty.rs", vec![]),
        file(
            "/abs/a b#1%.ts",
            vec![
                numbered,
                diag(1, "i", Some(DiagnosticSeverity::INFORMATION)),
                diag(1, "h", Some(DiagnosticSeverity::HINT)),
                diag(1, "none", None),
                diag(
                    1,
                    "odd",
                    Some(serde_json::from_str::<DiagnosticSeverity>("9").unwrap()),
                ),
            ],
        ),
    ];
    let json = serde_json::to_string(&all_diagnostics_result(&files)).unwrap();
    let range = |line| {
        format!(
            r#"{{"start":{{"line":{line},"character":4}},"end":{{"line":{line},"character":7}}}}"#
        )
    };
    let expected = format!(
        concat!(
            r#"[{{"uri":"file:///abs/src/main.rs","diagnostics":[{{"message":"cannot find value `foo` in this scope","severity":"Error","range":{r2},"source":"rustc","code":"E0425"}}]}},"#,
            r#"{{"uri":"file:///abs/a b#1%.ts","diagnostics":["#,
            r#"{{"message":"unused \"x\"","severity":"Warning","range":{r0},"code":"6133"}},"#,
            r#"{{"message":"i","severity":"Info","range":{r1}}},"#,
            r#"{{"message":"h","severity":"Hint","range":{r1}}},"#,
            r#"{{"message":"none","severity":"Error","range":{r1}}},"#,
            r#"{{"message":"odd","severity":"Error","range":{r1}}}]}}]"#
        ),
        r0 = range(0),
        r1 = range(1),
        r2 = range(2)
    );
    assert_eq!(json, expected);
}

#[test]
fn the_copilot_dialect_names_the_path_and_says_information() {
    let files = [file(
        "/ws/a b.rs",
        vec![diag(1, "note", Some(DiagnosticSeverity::INFORMATION))],
    )];
    let range = r#"{"start":{"line":1,"character":4},"end":{"line":1,"character":7}}"#;
    assert_eq!(
        serde_json::to_string(&all_diagnostics_result(&files).in_dialect(Dialect::Copilot))
            .unwrap(),
        format!(
            r#"[{{"uri":"file:///ws/a b.rs","filePath":"/ws/a b.rs","diagnostics":[{{"message":"note","severity":"Information","range":{range}}}]}}]"#
        )
    );
    // The `uri` asked for is echoed; `filePath` is the path it names.
    assert_eq!(
        serde_json::to_string(
            &file_diagnostics_result("file:///ws/a%20b.rs", &[]).in_dialect(Dialect::Copilot)
        )
        .unwrap(),
        r#"[{"uri":"file:///ws/a%20b.rs","filePath":"/ws/a b.rs","diagnostics":[]}]"#
    );
}

#[test]
fn nothing_anywhere_is_an_empty_list() {
    assert_eq!(
        serde_json::to_string(&all_diagnostics_result(&[])).unwrap(),
        "[]"
    );
    let only_empty = [file("/abs/a.rs", vec![])];
    assert_eq!(
        serde_json::to_string(&all_diagnostics_result(&only_empty)).unwrap(),
        "[]"
    );
}

#[test]
fn one_file_echoes_its_uri() {
    let d = [diag(0, "m", Some(DiagnosticSeverity::ERROR))];
    assert_eq!(
        serde_json::to_string(&file_diagnostics_result("file:///abs/a%20b.rs", &d)).unwrap(),
        r#"[{"uri":"file:///abs/a%20b.rs","diagnostics":[{"message":"m","severity":"Error","range":{"start":{"line":0,"character":4},"end":{"line":0,"character":7}}}]}]"#
    );
    assert_eq!(
        serde_json::to_string(&file_diagnostics_result("untitled:1", &[])).unwrap(),
        r#"[{"uri":"untitled:1","diagnostics":[]}]"#
    );
}

fn store_with_one_error() -> Arc<MemoryDiagnostics> {
    let store = Arc::new(MemoryDiagnostics::new());
    store.set(
        Path::new("/ws/a b.rs"),
        vec![diag(0, "bad", Some(DiagnosticSeverity::ERROR))],
    );
    store
}

const A_B_ERROR: &str = r#""diagnostics":[{"message":"bad","severity":"Error","range":{"start":{"line":0,"character":4},"end":{"line":0,"character":7}}}]"#;

#[tokio::test]
async fn the_tool_reads_the_port() {
    let store = store_with_one_error();
    let cx = EditorPorts::builder().diagnostics(store.clone()).build();

    let all = text_of(get_diagnostics(&cx, None).await);
    assert_eq!(
        all,
        format!(r#"[{{"uri":"file:///ws/a b.rs",{A_B_ERROR}}}]"#)
    );

    // Raw and percent-encoded URIs and plain paths all find the file; the
    // argument is echoed exactly.
    for uri in [
        "file:///ws/a b.rs",
        "file:///ws/a%20b.rs",
        "/ws/a b.rs",
        "file:///ws/x/../a b.rs",
    ] {
        let one = text_of(get_diagnostics(&cx, Some(uri.into())).await);
        assert_eq!(one, format!(r#"[{{"uri":"{uri}",{A_B_ERROR}}}]"#));
    }

    // Unknown, absent or unparsable files: an empty list, never an error.
    for uri in [
        "file:///ws/nope.rs",
        "relative.rs",
        "",
        "untitled:Untitled-1",
    ] {
        let one = text_of(get_diagnostics(&cx, Some(uri.into())).await);
        assert_eq!(one, format!(r#"[{{"uri":"{uri}","diagnostics":[]}}]"#));
    }
}

#[tokio::test]
async fn without_the_port_the_results_are_empty() {
    let cx = EditorPorts::empty();
    assert_eq!(text_of(get_diagnostics(&cx, None).await), "[]");
    assert_eq!(
        text_of(get_diagnostics(&cx, Some("file:///ws/a.rs".into())).await),
        r#"[{"uri":"file:///ws/a.rs","diagnostics":[]}]"#
    );
}

#[tokio::test]
async fn unchanged_data_is_served_from_the_cached_bytes() {
    let store = store_with_one_error();
    let cx = EditorPorts::builder().diagnostics(store.clone()).build();
    let first = all_diagnostics_prepared(&cx, &*store);
    let second = all_diagnostics_prepared(&cx, &*store);
    assert_eq!(
        first.as_bytes().as_ptr(),
        second.as_bytes().as_ptr(),
        "the same bytes"
    );

    store.set(Path::new("/ws/c.rs"), vec![diag(3, "new", None)]);
    let third = all_diagnostics_prepared(&cx, &*store);
    assert_ne!(first, third);
    assert!(text_of(third).contains(r#""uri":"file:///ws/c.rs""#));
    // Clones of the context share the cache.
    let clone = cx.clone();
    let fourth = all_diagnostics_prepared(&clone, &*store);
    assert_eq!(text_of(get_diagnostics(&cx, None).await), text_of(fourth));
}

#[tokio::test]
async fn one_file_is_served_from_cached_bytes_while_nothing_changes() {
    let store = store_with_one_error();
    let cx = EditorPorts::builder().diagnostics(store.clone()).build();
    let uri = "file:///ws/a%20b.rs";
    let first = file_diagnostics_prepared(&cx, &*store, uri);
    let second = file_diagnostics_prepared(&cx, &*store, uri);
    assert_eq!(
        first.as_bytes().as_ptr(),
        second.as_bytes().as_ptr(),
        "the same bytes"
    );
    assert_eq!(
        text_of(second),
        format!(r#"[{{"uri":"{uri}",{A_B_ERROR}}}]"#)
    );
    // Another spelling of the same file is echoed as given, not served the
    // cached one's bytes.
    let raw = text_of(get_diagnostics(&cx, Some("/ws/a b.rs".into())).await);
    assert_eq!(raw, format!(r#"[{{"uri":"/ws/a b.rs",{A_B_ERROR}}}]"#));
    // New data: built again.
    store.set(Path::new("/ws/a b.rs"), vec![]);
    assert_eq!(
        text_of(get_diagnostics(&cx, Some(uri.into())).await),
        format!(r#"[{{"uri":"{uri}","diagnostics":[]}}]"#)
    );
}

/// A port whose checker never finishes, counting `settle` calls.
#[derive(Default)]
struct Busy {
    settles: AtomicUsize,
}

impl DiagnosticsQuery for Busy {
    fn all(&self) -> Vec<FileDiagnostics> {
        Vec::new()
    }
    fn for_file(&self, _: &Path) -> Option<Arc<[Diagnostic]>> {
        None
    }
    fn generation(&self) -> u64 {
        0
    }
    fn settle(&self) -> Option<SettleFuture> {
        self.settles.fetch_add(1, Ordering::Relaxed);
        Some(Box::pin(std::future::pending()))
    }
}

#[tokio::test(start_paused = true)]
async fn only_the_full_list_waits_for_a_running_check() {
    let busy = Arc::new(Busy::default());
    let cx = EditorPorts::builder().diagnostics(busy.clone()).build();
    let one = tokio::time::timeout(
        Duration::from_millis(1),
        get_diagnostics(&cx, Some("/ws/a.rs".into())),
    )
    .await;
    assert!(one.is_ok(), "with `uri`, the answer is immediate");
    assert_eq!(busy.settles.load(Ordering::Relaxed), 0);
    let all = tokio::time::timeout(Duration::from_secs(5), get_diagnostics(&cx, None)).await;
    assert!(all.is_err(), "without `uri`, the running check is awaited");
    assert_eq!(busy.settles.load(Ordering::Relaxed), 1);
}

#[tokio::test(start_paused = true)]
async fn a_check_that_ends_lets_the_full_list_through() {
    let store = Arc::new(MemoryDiagnostics::new());
    let cx = EditorPorts::builder().diagnostics(store.clone()).build();
    let check = store.begin_check();
    let checker = {
        let store = store.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            store.set(Path::new("/ws/a.rs"), vec![diag(0, "late", None)]);
            drop(check);
        })
    };
    let all = text_of(get_diagnostics(&cx, None).await);
    assert!(all.contains(r#""message":"late""#), "{all}");
    checker.await.unwrap();
}
