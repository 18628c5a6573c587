//! The live LSP tools through `ide-mcp bridge` against what the `claude`
//! CLI's own LSP tool has to do instead, side by side in one run on the
//! same generated workspace, for pyright (a Python project) and clangd (a
//! C project):
//!
//! - **first answer**: an editor stand-in (a scripted LSP client:
//!   `initialize`, `didOpen` of one file, waiting until its server is
//!   ready) runs the real server through `ide-mcp lsp-proxy`; `ide-mcp
//!   bridge` is started in the workspace and asked `findReferences`. Against
//!   it: a fresh server started on the same workspace, initialized, the
//!   same file opened, `textDocument/references` asked until the answer is
//!   complete (every reference the generator wrote);
//! - **memory**: the resident memory (`VmRSS`, and its peak `VmHWM`, from
//!   `/proc`) of the editor's server with our processes (proxy, IDE host,
//!   bridge) beside it, against the editor's server and the second one;
//! - **per-call overhead**: `hover` through the bridge (bridge, IDE host,
//!   proxy, the editor's server) against `textDocument/hover` on the
//!   editor's wire (through the proxy's forwarding, to the same server)
//!   and on the second server's own pipes, interleaved call by call.
//!
//! Linux only (`/proc`). Needs `pyright-langserver` and `clangd`.
//!
//! ```text
//! cargo build --release -p ide-mcp -p ide-mcp-benches
//! target/release/live-lsp --ide-mcp target/release/ide-mcp
//! ```

// Statistics turn durations and sizes into floats and ranks back; all
// positive and far below 2^52.
#![allow(clippy::cast_precision_loss, clippy::cast_sign_loss)]

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use clap::Parser;
use ide_mcp_benches::projects::{self, Project, Symbol};
use ide_mcp_benches::scripted::{LspClient, McpStdio};
use serde_json::{Value, json};

#[derive(Parser, Debug)]
#[command(about = "findReferences through ide-mcp bridge against a fresh language server")]
struct Cli {
    /// The `ide-mcp` binary.
    #[arg(long)]
    ide_mcp: PathBuf,
    /// Python packages, of `--modules` modules each.
    #[arg(long, default_value_t = 40)]
    packages: usize,
    /// Modules per Python package.
    #[arg(long, default_value_t = 50)]
    modules: usize,
    /// C modules (a source and a header each).
    #[arg(long, default_value_t = 300)]
    c_modules: usize,
    /// Timed hovers per way.
    #[arg(long, default_value_t = 500)]
    hovers: usize,
    /// One language only: `python` or `c`.
    #[arg(long)]
    only: Option<String>,
}

/// How long a server may take for anything (a cold one on a busy machine).
const LIMIT: Duration = Duration::from_mins(10);

/// A directory removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A language: its server's command line and how an editor knows it is
/// ready.
struct Language {
    name: &'static str,
    id: &'static str,
    server: &'static [&'static str],
    /// Ready: pyright has published the open file's diagnostics; clangd has
    /// ended its background indexing.
    ready: fn(&Value, &str) -> bool,
}

const PYTHON: Language = Language {
    name: "python",
    id: "python",
    server: &["pyright-langserver", "--stdio"],
    ready: |message, uri| {
        message["method"] == "textDocument/publishDiagnostics" && message["params"]["uri"] == uri
    },
};

const C: Language = Language {
    name: "c",
    id: "c",
    server: &["clangd", "--log=error"],
    ready: |message, _| {
        message["method"] == "$/progress"
            && message["params"]["token"] == "backgroundIndexProgress"
            && message["params"]["value"]["kind"] == "end"
    },
};

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// What an editor sends first: `initialize` (answered), `initialized`,
/// `didOpen` of `open`.
fn open_workspace(client: &mut LspClient, root: &Path, open: &Path, id: &str) -> io::Result<()> {
    let capabilities = json!({
        "window": {"workDoneProgress": true},
        "workspace": {"configuration": true, "workspaceFolders": true},
        "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]},
            "references": {}, "publishDiagnostics": {}, "synchronization": {}},
    });
    client.request(
        "initialize",
        &json!({"processId": std::process::id(), "rootUri": uri(root),
            "workspaceFolders": [{"uri": uri(root), "name": "bench"}],
            "capabilities": capabilities, "clientInfo": {"name": "live-lsp-bench"}}),
        LIMIT,
    )?;
    client.notify("initialized", &json!({}))?;
    let text = std::fs::read_to_string(open)?;
    client.notify(
        "textDocument/didOpen",
        &json!({"textDocument": {"uri": uri(open), "languageId": id, "version": 1, "text": text}}),
    )
}

/// The processes' environment: the run's own configuration and runtime
/// directories.
fn environment(command: &mut Command, dir: &Path, root: &Path) {
    command
        .current_dir(root)
        .env("CLAUDE_CONFIG_DIR", dir.join("config"))
        .env("XDG_RUNTIME_DIR", dir.join("run"))
        .env_remove("CLAUDE_CODE_SSE_PORT")
        .env("RUST_LOG", "warn");
}

/// The editor's server through `ide-mcp lsp-proxy`, ready.
fn start_editor(
    cli: &Cli,
    language: &Language,
    project: &Project,
    dir: &Path,
) -> io::Result<(LspClient, Duration)> {
    let start = Instant::now();
    let mut command = Command::new(&cli.ide_mcp);
    command
        .args(["lsp-proxy", "--linger", "0", "--"])
        .args(language.server);
    environment(&mut command, dir, &project.root);
    let mut editor = LspClient::spawn(command)?;
    open_workspace(&mut editor, &project.root, &project.open, language.id)?;
    let open = uri(&project.open);
    editor.wait_notification(LIMIT, |message| (language.ready)(message, &open))?;
    Ok((editor, start.elapsed()))
}

/// The number of locations in a `findReferences` answer (the tool's JSON
/// text, or an LSP response).
fn locations(answer: &Value) -> usize {
    answer.as_array().map_or(0, Vec::len)
}

/// One timed `findReferences` through the bridge: its time and how many
/// references it found (or the tool's error).
fn bridge_references(bridge: &mut McpStdio, symbol: &Symbol) -> (Duration, Result<usize, String>) {
    let arguments = json!({"filePath": symbol.file, "line": symbol.line + 1,
        "character": symbol.character + 1});
    let start = Instant::now();
    let answer = bridge.call("findReferences", &arguments, LIMIT);
    let took = start.elapsed();
    let found = answer
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()))
        .map(|value| locations(&value));
    (took, found)
}

/// One timed `textDocument/references` on the editor's wire (the same
/// server the bridge asks, through the proxy's forwarding only).
fn wire_references(editor: &mut LspClient, symbol: &Symbol) -> io::Result<(Duration, usize)> {
    let params = json!({"textDocument": {"uri": uri(&symbol.file)},
        "position": {"line": symbol.line, "character": symbol.character},
        "context": {"includeDeclaration": true}});
    let start = Instant::now();
    let answer = editor.request("textDocument/references", &params, LIMIT)?;
    Ok((start.elapsed(), locations(&answer["result"])))
}

/// What a fresh server costs until the complete answer: from its start
/// to the first answer (and its size) and to the first complete one.
struct Cold {
    client: LspClient,
    first: (Duration, usize),
    complete: Duration,
    asked: usize,
}

/// Starts a fresh server in `root` (with `dir`'s environment), opens the
/// file, asks `references` of `symbol` until the answer is complete.
fn cold_references(
    language: &Language,
    project: &Project,
    symbol: &Symbol,
    dir: &Path,
) -> io::Result<Cold> {
    let start = Instant::now();
    let mut command = Command::new(language.server[0]);
    command.args(&language.server[1..]);
    environment(&mut command, dir, &project.root);
    let mut client = LspClient::spawn(command)?;
    open_workspace(&mut client, &project.root, &symbol.file, language.id)?;
    let params = json!({"textDocument": {"uri": uri(&symbol.file)},
        "position": {"line": symbol.line, "character": symbol.character},
        "context": {"includeDeclaration": true}});
    let mut first = None;
    let mut asked = 0;
    loop {
        let answer = client.request("textDocument/references", &params, LIMIT)?;
        asked += 1;
        let found = locations(&answer["result"]);
        if first.is_none() && found > 0 {
            first = Some((start.elapsed(), found));
        }
        if found >= symbol.references {
            let complete = start.elapsed();
            return Ok(Cold {
                client,
                first: first.unwrap_or((complete, found)),
                complete,
                asked,
            });
        }
        if start.elapsed() > LIMIT {
            return Err(io::Error::other(format!(
                "{found} of {} references",
                symbol.references
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The pids of `pid` and its descendants.
fn tree(pid: u32) -> Vec<u32> {
    let mut all = vec![pid];
    let mut at = 0;
    while at < all.len() {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", all[at]))
            .into_iter()
            .flatten();
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            all.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
        at += 1;
    }
    all
}

/// `VmRSS` and `VmHWM` of `pids`, summed, in MiB.
fn memory(pids: &[u32]) -> (f64, f64) {
    let field = |status: &str, name: &str| -> f64 {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1024.0
    };
    pids.iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .fold((0.0, 0.0), |(rss, hwm), status| {
            (
                rss + field(&status, "VmRSS:"),
                hwm + field(&status, "VmHWM:"),
            )
        })
}

/// The time `pids` (all their threads) spent on a CPU and waiting for
/// one (`/proc/<pid>/task/<tid>/schedstat`), in ms.
fn schedule(pids: &[u32]) -> (f64, f64) {
    let mut total = (0.0, 0.0);
    for pid in pids {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten();
        for task in tasks.flatten() {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            let mut fields = stat
                .split_whitespace()
                .map(|f| f.parse::<f64>().unwrap_or(0.0));
            total.0 += fields.next().unwrap_or(0.0) / 1e6;
            total.1 += fields.next().unwrap_or(0.0) / 1e6;
        }
    }
    total
}

/// The IDE hosts' pids, from their lock files in the private directory.
fn host_pids(dir: &Path) -> Vec<u32> {
    std::fs::read_dir(dir.join("run/ide-mcp"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.path().extension().is_some_and(|e| e == "lock"))
        .filter_map(|entry| {
            std::fs::read_to_string(entry.path())
                .ok()?
                .trim()
                .parse()
                .ok()
        })
        .collect()
}

/// The `p`-quantile of sorted durations, in µs.
fn quantile(sorted: &[Duration], p: f64) -> f64 {
    let at = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[at].as_secs_f64() * 1e6
}

/// `hovers` rounds of one hover each way, interleaved: through the
/// bridge, on the editor's wire, on the second server's pipes. The
/// sorted times of each way.
fn hovers(
    rounds: usize,
    bridge: &mut McpStdio,
    editor: &mut LspClient,
    second: &mut LspClient,
    symbol: &Symbol,
) -> io::Result<[Vec<Duration>; 3]> {
    let arguments = json!({"filePath": symbol.file, "line": symbol.line + 1,
        "character": symbol.character + 1});
    let params = json!({"textDocument": {"uri": uri(&symbol.file)},
        "position": {"line": symbol.line, "character": symbol.character}});
    let mut times: [Vec<Duration>; 3] = Default::default();
    // The first tenth warms up.
    for round in 0..rounds + rounds / 10 {
        let start = Instant::now();
        let text = bridge.call("hover", &arguments, LIMIT)?;
        let through_bridge = start.elapsed();
        let start = Instant::now();
        let on_wire = editor.request("textDocument/hover", &params, LIMIT)?;
        let editor_wire = start.elapsed();
        let start = Instant::now();
        let direct = second.request("textDocument/hover", &params, LIMIT)?;
        let second_direct = start.elapsed();
        if text.is_empty() || on_wire["result"].is_null() || direct["result"].is_null() {
            return Err(io::Error::other(format!(
                "an empty hover: {text:?} {on_wire} {direct}"
            )));
        }
        if round >= rounds / 10 {
            for (way, took) in [through_bridge, editor_wire, second_direct]
                .into_iter()
                .enumerate()
            {
                times[way].push(took);
            }
        }
    }
    for way in &mut times {
        way.sort();
    }
    Ok(times)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn generate(cli: &Cli, language: &Language, root: &Path) -> io::Result<Project> {
    if language.name == "python" {
        projects::python(root, cli.packages, cli.modules)
    } else {
        projects::c(root, cli.c_modules)
    }
}

fn seconds(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn found(result: &Result<usize, String>, expected: usize) -> String {
    match result {
        Ok(n) if *n == expected => format!("{n} (complete)"),
        Ok(n) => format!("{n} of {expected}"),
        Err(e) => format!("error: {e}"),
    }
}

/// One line of the first-answer table: what was asked, how long it took,
/// what it found.
struct Row(String, Duration, String);

/// The warm side: the editor and its server, ready; the bridge, started
/// and asked; their rows.
struct Warm {
    editor: LspClient,
    bridge: McpStdio,
    /// The editor ready; the bridge started and listed.
    ready: (Duration, Duration),
    /// The bridge's three answers: the session's first, another
    /// symbol, the first again.
    took: [Duration; 3],
    /// What our processes (proxy, host, bridge) did during the three: ms
    /// on a CPU, ms waiting for one.
    sched: (f64, f64),
    rows: Vec<Row>,
}

/// Starts the editor and the bridge, asks the bridge `findReferences` of
/// both symbols and the editor's wire the same.
fn warm_side(cli: &Cli, language: &Language, project: &Project, dir: &Path) -> io::Result<Warm> {
    let (mut editor, editor_ready) = start_editor(cli, language, project, dir)?;
    eprintln!("{}: editor ready in {editor_ready:?}", language.name);
    let start = Instant::now();
    let mut command = Command::new(&cli.ide_mcp);
    command.arg("bridge");
    environment(&mut command, dir, &project.root);
    let mut bridge = McpStdio::start(command)?;
    bridge.request("tools/list", &json!({}), LIMIT)?;
    let listed = start.elapsed();
    let (wide, other) = (&project.widely_used, &project.other);
    let mut rows = Vec::new();
    let mut took = [Duration::ZERO; 3];
    let ours: Vec<u32> = [editor.pid(), bridge.pid()]
        .into_iter()
        .chain(host_pids(dir))
        .collect();
    let before = schedule(&ours);
    for (i, (what, symbol)) in [
        (
            "bridge: `findReferences`, the session's first (editor ready)",
            wide,
        ),
        ("bridge: `findReferences` of another symbol, after", other),
        ("bridge: `findReferences` of the first symbol again", wide),
    ]
    .into_iter()
    .enumerate()
    {
        let (time, result) = bridge_references(&mut bridge, symbol);
        took[i] = time;
        rows.push(Row(
            what.to_owned(),
            time,
            found(&result, symbol.references),
        ));
    }
    let after = schedule(&ours);
    let sched = (after.0 - before.0, after.1 - before.1);
    for (what, symbol) in [
        (
            "the editor's wire, same server: `references` of the first symbol, after",
            wide,
        ),
        (
            "the editor's wire, same server: `references` of the other symbol, after",
            other,
        ),
    ] {
        let (time, n) = wire_references(&mut editor, symbol)?;
        rows.push(Row(what.to_owned(), time, found(&Ok(n), symbol.references)));
    }
    eprintln!("{}: bridge answered in {:?}", language.name, took[0]);
    Ok(Warm {
        editor,
        bridge,
        ready: (editor_ready, listed),
        took,
        sched,
        rows,
    })
}

/// The memory table: the editor's server, ours (proxy, hosts, bridge),
/// the second server; each (`VmRSS`, `VmHWM`).
fn memory_table(one: (f64, f64), ours: [(f64, f64); 3], two: (f64, f64)) -> String {
    let sum = ours
        .iter()
        .fold((0.0, 0.0), |(a, b), (c, d)| (a + c, b + d));
    let mut out =
        String::from("| resident memory, MiB | now (VmRSS) | peak (VmHWM) |\n|---|---|---|\n");
    for (what, (rss, hwm)) in [
        ("the editor's server", one),
        ("ours: proxy", ours[0]),
        ("ours: IDE host", ours[1]),
        ("ours: bridge", ours[2]),
        ("a second server (what the CLI's own tool starts)", two),
        ("**one server + ours**", (one.0 + sum.0, one.1 + sum.1)),
        ("**two servers**", (one.0 + two.0, one.1 + two.1)),
    ] {
        let _ = writeln!(out, "| {what} | {rss:.0} | {hwm:.0} |");
    }
    out
}

/// The hover table and the overhead line.
fn hover_table(rounds: usize, times: &[Vec<Duration>; 3]) -> String {
    let mut out =
        format!("| `hover`, µs ({rounds} each, interleaved) | p50 | p99 |\n|---|---|---|\n");
    for (way, sorted) in [
        "through the bridge (bridge, IDE host, proxy, the editor's server)",
        "the editor's wire (through the proxy's forwarding, the same server)",
        "the second server, on its own pipes",
    ]
    .iter()
    .zip(times)
    {
        let _ = writeln!(
            out,
            "| {way} | {:.0} | {:.0} |",
            quantile(sorted, 0.5),
            quantile(sorted, 0.99)
        );
    }
    let _ = writeln!(
        out,
        "\nadded by bridge + host over the editor's wire: p50 {:.0} µs, p99 {:.0} µs\n",
        quantile(&times[0], 0.5) - quantile(&times[1], 0.5),
        quantile(&times[0], 0.99) - quantile(&times[1], 0.99),
    );
    out
}

/// One language, start to end; its report.
fn run(cli: &Cli, language: &Language) -> io::Result<String> {
    let dir = TempDir(std::env::temp_dir().join(format!(
        "ide-mcp-live-lsp-{}-{}",
        language.name,
        std::process::id()
    )));
    let project = generate(cli, language, &dir.0.join("ws"))?;
    let (wide, other) = (&project.widely_used, &project.other);
    let mut out = format!(
        "## {} ({}): {} files; `{}` has {} references, `{}` {}\n\nload average at the start: {}\n\n",
        language.name,
        language.server[0],
        project.files,
        wide.name,
        wide.references,
        other.name,
        other.references,
        load()
    );
    let mut warm = warm_side(cli, language, &project, &dir.0)?;
    let hosts = host_pids(&dir.0);
    let ours = [
        memory(&[warm.editor.pid()]),
        memory(&hosts),
        memory(&[warm.bridge.pid()]),
    ];
    let one = memory(&tree(warm.editor.pid())[1..]);
    let cold = cold_references(language, &project, wide, &dir.0)?;
    eprintln!(
        "{}: the fresh server answered in {:?}",
        language.name, cold.complete
    );
    let two = memory(&tree(cold.client.pid()));
    let mut rows = std::mem::take(&mut warm.rows);
    rows.push(Row(
        "fresh server: start to the first non-empty answer".into(),
        cold.first.0,
        format!("{} of {}", cold.first.1, wide.references),
    ));
    rows.push(Row(
        "fresh server: start to the first complete answer".into(),
        cold.complete,
        format!("complete ({} asked)", cold.asked),
    ));
    let mut unindexed = String::new();
    if language.name == "c" {
        // clangd keeps its index in the workspace (`.cache/clangd`): the
        // second server above found the editor's. A copy never indexed:
        let copy = generate(cli, language, &dir.0.join("ws-copy"))?;
        let fresh = cold_references(language, &copy, &copy.widely_used, &dir.0)?;
        rows.push(Row(
            "fresh server, a copy never indexed: to the first complete answer".into(),
            fresh.complete,
            format!("complete ({} asked)", fresh.asked),
        ));
        unindexed = format!(
            "; against a copy never indexed: first {:.1}×",
            ratio(fresh.complete, warm.took[0])
        );
    }
    references_report(&mut out, &warm, &rows, cold.complete, &unindexed);
    out.push_str(&memory_table(one, ours, two));
    let mut second = cold.client;
    let times = hovers(
        cli.hovers,
        &mut warm.bridge,
        &mut warm.editor,
        &mut second,
        wide,
    )?;
    out.push('\n');
    out.push_str(&hover_table(cli.hovers, &times));
    let _ = writeln!(out, "load average at the end: {}\n", load());
    Ok(out)
}

/// The `findReferences` part of a language's report: readiness, the first
/// answers' times, scheduling, and how much sooner the bridge answered
/// than a fresh server (`cold`, its complete answer).
fn references_report(out: &mut String, warm: &Warm, rows: &[Row], cold: Duration, unindexed: &str) {
    let _ = writeln!(
        out,
        "editor stand-in ready (proxy + server started, initialized, file open, server ready): {}; bridge started and listed: {}\n",
        seconds(warm.ready.0),
        seconds(warm.ready.1)
    );
    out.push_str("| first `findReferences` answer | time | references |\n|---|---|---|\n");
    for Row(what, took, found) in rows {
        let _ = writeln!(
            out,
            "| {what} | {:.1} ms | {found} |",
            took.as_secs_f64() * 1e3
        );
    }
    let _ = writeln!(
        out,
        "\nduring the bridge's three answers, proxy + IDE host + bridge were on a CPU for {:.1} ms and waited for one {:.1} ms",
        warm.sched.0, warm.sched.1
    );
    let _ = writeln!(
        out,
        "\nsooner through the bridge (fresh server's complete answer / bridge's): first {:.1}×, another symbol {:.1}×, again {:.1}×{unindexed}\n",
        ratio(cold, warm.took[0]),
        ratio(cold, warm.took[1]),
        ratio(cold, warm.took[2]),
    );
}

fn ratio(cold: Duration, warm: Duration) -> f64 {
    cold.as_secs_f64() / warm.as_secs_f64()
}

fn main() -> io::Result<()> {
    let cli = Cli::parse();
    let mut report = String::new();
    for language in [PYTHON, C] {
        if cli
            .only
            .as_deref()
            .is_some_and(|only| only != language.name)
        {
            continue;
        }
        report.push_str(&run(&cli, &language)?);
    }
    #[allow(clippy::print_stdout)]
    {
        print!("{report}");
    }
    Ok(())
}
