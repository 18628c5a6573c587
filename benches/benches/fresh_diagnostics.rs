//! Fresh diagnostics after an edit: the time from a file write to a
//! `getDiagnostics {}` answer that shows it, for cargo and for each
//! language server (`serve --lsp`), on a one-file workspace; edits alternate
//! between an error and its fix. For the servers, also the host's own share:
//! from the server's publish arriving to the answer written.
//!
//! `cargo bench -p ide-mcp-benches --bench fresh_diagnostics`
//! (pyright and clangd from `tests/lsp/install.sh`; a missing one is skipped)

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use ide_mcp::diagnostics::sources::CargoMode;
use ide_mcp::headless::{Headless, HeadlessOptions};
use ide_mcp_lsp::client::LspDiagnostics;
use ide_mcp_runtime::IntoToolResult as _;
use ide_mcp_test_support::on_path as installed;
use ide_mcp_tools::diagnostics::get_diagnostics;

struct Case {
    name: &'static str,
    /// The `--lsp` command; `None` for cargo.
    server: Option<&'static str>,
    file: &'static str,
    good: &'static str,
    bad: &'static str,
    /// A word of the error's message.
    error: &'static str,
}

const CASES: [Case; 3] = [
    Case {
        name: "cargo",
        server: None,
        file: "src/lib.rs",
        good: "pub fn f() -> u32 {\n    1\n}\n",
        bad: "pub fn f() -> u32 {\n    missing\n}\n",
        error: "missing",
    },
    Case {
        name: "pyright",
        server: Some("pyright-langserver --stdio"),
        file: "app.py",
        good: "def f(x: int) -> int:\n    return x\n",
        bad: "def f(x: int) -> str:\n    return x\n",
        error: "reportReturnType",
    },
    Case {
        name: "clangd",
        server: Some("clangd"),
        file: "main.c",
        good: "int main(void) {\n  return 0;\n}\n",
        bad: "int main(void) {\n  return missing;\n}\n",
        error: "missing",
    },
];

/// The answer's bytes, as the MCP response would carry them.
async fn answer(headless: &Headless) -> Vec<u8> {
    let mut out = Vec::new();
    get_diagnostics(&headless.context, None)
        .await
        .write_tool_result(&mut ide_mcp_runtime::ResultOut::new(&mut out));
    out
}

fn contains(bytes: &[u8], word: &str) -> bool {
    bytes.windows(word.len()).any(|w| w == word.as_bytes())
}

struct Bench {
    headless: Headless,
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Bench {
    async fn new(case: &Case) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("ide-mcp-bench-")
            .tempdir()
            .unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let path = ws.join(case.file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, case.good).unwrap();
        let mut options = HeadlessOptions {
            workspaces: vec![ws.clone()],
            ..HeadlessOptions::default()
        };
        options.sources.wait = Duration::from_secs(30);
        if let Some(command) = case.server {
            options.sources.cargo = CargoMode::Off;
            options.sources.lsp = vec![command.split(' ').map(str::to_owned).collect()];
            options.lsp_open = vec![case.file.to_owned()];
        } else {
            std::fs::write(
                ws.join("Cargo.toml"),
                "[package]\nname = \"bench\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            )
            .unwrap();
            options.sources.cargo = CargoMode::Always;
            options.sources.cargo_target_dir = Some(dir.path().join("target"));
        }
        let headless = Headless::new(&options).unwrap();
        // The first analysis (a first cargo build) is not measured.
        answer(&headless).await;
        Self {
            headless,
            path,
            _dir: dir,
        }
    }

    fn server(&self) -> Option<&Arc<LspDiagnostics>> {
        self.headless.lsp.servers.first()
    }

    /// One edit: (write → fresh answer, publish → answer).
    async fn edit(&self, case: &Case, bad: bool) -> (Duration, Duration) {
        let text = if bad { case.bad } else { case.good };
        let start = Instant::now();
        std::fs::write(&self.path, text).unwrap();
        loop {
            let out = answer(&self.headless).await;
            let done = Instant::now();
            if contains(&out, case.error) == bad {
                let share = self
                    .server()
                    .and_then(|server| server.last_publish())
                    .map_or(Duration::ZERO, |published| {
                        done.saturating_duration_since(published)
                    });
                return (done - start, share);
            }
            // Stale (the watcher had not seen the write yet): ask again, as
            // the client would.
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("fresh diagnostics");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_millis(1));
    for case in &CASES {
        let program = case
            .server
            .map_or("cargo", |s| s.split(' ').next().unwrap());
        if !installed(program) {
            eprintln!("{}: `{program}` is not installed; skipped", case.name);
            continue;
        }
        let bench = runtime.block_on(Bench::new(case));
        let mut bad = false;
        group.bench_function(format!("{}/write to answer", case.name), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    bad = !bad;
                    total += runtime.block_on(bench.edit(case, bad)).0;
                }
                total
            });
        });
        if case.server.is_some() {
            group.bench_function(format!("{}/publish to answer", case.name), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        bad = !bad;
                        total += runtime.block_on(bench.edit(case, bad)).1;
                    }
                    total
                });
            });
        }
        runtime.block_on(bench.headless.shutdown());
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
