//! What `ide-mcp lsp-proxy` adds between an editor and its language server:
//! the same editor-side driver talks to the echo language server
//! (`lsp-echo`, of test-support/lsp-echo) directly, through the proxy forwarding only, and
//! through the proxy observing everything on a thread of its own (as users
//! run it) or inline, runs interleaved so that they share the machine's
//! noise.
//!
//! - latency: per keystroke, one `didChange` (one character) and one
//!   `hover` written together, timed until the hover's answer;
//! - the same latency with a review of Claude's edit pending on the
//!   document typed in (an MCP client holds an `openDiff` call open on
//!   the proxy's IDE host);
//! - pass-through: `--opens` `didOpen`s of `--open-mb` MB, each with one
//!   request written after it, timed from its first byte until the
//!   request's answer; the first of each process is cold (its buffers'
//!   memory is mapped on the way), the others warm.
//!
//! ```text
//! cargo build --release -p ide-mcp -p ide-mcp-lsp-echo -p ide-mcp-benches
//! target/release/lsp-proxy --server target/release/ide-mcp --echo target/release/lsp-echo --requests 20000 --open-mb 50 --runs 3 --opens 4
//! ```

// Statistics turn counts into floats; the values are far below 2^52.
#![allow(clippy::cast_precision_loss)]

use std::io::{self, Write as _};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use ide_mcp_benches::client::Report;
use ide_mcp_lsp::framing::{Frame, SyncMessageReader};
use ide_mcp_test_support::lsp::message;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "Latency and pass-through of `ide-mcp lsp-proxy`")]
struct Cli {
    /// The `ide-mcp` binary.
    #[arg(long)]
    server: PathBuf,
    /// The echo language server (`lsp-echo`, of the `ide-mcp-lsp-echo`
    /// crate).
    #[arg(long)]
    echo: PathBuf,
    /// Timed keystrokes per run.
    #[arg(long, default_value_t = 20_000)]
    requests: usize,
    /// The size of the large `didOpen`, in MB.
    #[arg(long, default_value_t = 50)]
    open_mb: usize,
    /// Runs of each way.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Large `didOpen`s per process in each run: the first is cold, the
    /// others warm.
    #[arg(long, default_value_t = 4)]
    opens: usize,
}

/// How the driver reaches the echo server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    Direct,
    ForwardOnly,
    Inline,
    HandOff,
    /// The default, with a review of Claude's edit pending on the document
    /// being typed in (keystrokes only).
    Reviewing,
}

impl Way {
    const ALL: [Self; 5] = [
        Self::Direct,
        Self::ForwardOnly,
        Self::Inline,
        Self::HandOff,
        Self::Reviewing,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::ForwardOnly => "proxy, forward only",
            Self::Inline => "proxy, observing inline",
            Self::HandOff => "proxy, observing on a thread (default)",
            Self::Reviewing => "proxy, default, a review pending",
        }
    }
}

/// A language server process with the driver's ends of its pipes.
struct Peer {
    child: Child,
    stdin: ChildStdin,
    reader: SyncMessageReader<std::process::ChildStdout>,
    config: TempDir,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A directory removed on drop (benches avoid a tempfile dependency).
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Peer {
    fn start(cli: &Cli, way: Way, tag: usize) -> io::Result<Self> {
        let config = TempDir(
            std::env::temp_dir().join(format!("ide-mcp-lsp-bench-{}-{tag}", std::process::id())),
        );
        std::fs::create_dir_all(&config.0)?;
        let mut command = Command::new(if way == Way::Direct {
            &cli.echo
        } else {
            &cli.server
        });
        let observe = match way {
            Way::Direct => None,
            Way::ForwardOnly => Some("--observe=off"),
            Way::Inline => Some("--observe=inline"),
            Way::HandOff | Way::Reviewing => Some("--observe=hand-off"),
        };
        if let Some(observe) = observe {
            // The IDE host it starts ends with it.
            command
                .args(["lsp-proxy", observe, "--linger", "0", "--"])
                .arg(&cli.echo);
        }
        let mut child = command
            .env("CLAUDE_CONFIG_DIR", &config.0)
            .env("XDG_RUNTIME_DIR", config.0.join("run"))
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped");
        let reader = SyncMessageReader::new(child.stdout.take().expect("piped"));
        let mut peer = Self {
            child,
            stdin,
            reader,
            config,
        };
        let root = peer.config.0.join("ws");
        peer.stdin.write_all(&message(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"processId": std::process::id(), "rootUri": format!("file://{}", root.display()),
                       "capabilities": {}, "clientInfo": {"name": "bench"}}})))?;
        peer.answer()?;
        peer.stdin.write_all(&message(
            &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        ))?;
        Ok(peer)
    }

    /// Reads until the proxy publishes Claude's hunks to the editor.
    fn until_review_shown(&mut self) -> io::Result<()> {
        loop {
            match self.reader.next_frame()? {
                Some(Frame::Message(message))
                    if memchr::memmem::find(message.body(), b"Claude Code").is_some() =>
                {
                    return Ok(());
                }
                Some(_) => {}
                None => return Err(io::ErrorKind::UnexpectedEof.into()),
            }
        }
    }

    /// Reads until a response; returns its size.
    fn answer(&mut self) -> io::Result<usize> {
        loop {
            match self.reader.next_frame()? {
                Some(Frame::Message(message))
                    if message.body().starts_with(br#"{"jsonrpc":"2.0","id""#) =>
                {
                    return Ok(message.as_bytes().len());
                }
                Some(_) => {}
                None => return Err(io::ErrorKind::UnexpectedEof.into()),
            }
        }
    }
}

/// One keystroke: a one-character `didChange` and a `hover`, written at once.
fn keystroke(uri: &str, version: usize, id: usize) -> Vec<u8> {
    let line = (version % 40) as u32;
    let mut bytes = message(
        &json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{"range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 4}}, "text": "x"}]}}),
    );
    bytes.extend_from_slice(&message(
        &json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover",
        "params": {"textDocument": {"uri": uri}, "position": {"line": line, "character": 5}}}),
    ));
    bytes
}

/// Round trips of `requests` keystrokes; with `review`, while Claude's
/// proposal for the document is under review.
fn latencies(peer: &mut Peer, requests: usize, review: bool) -> io::Result<Vec<Duration>> {
    let path = peer.config.0.join("ws").join("main.c");
    let uri = format!("file://{}", path.display());
    let text = "int x;\n".repeat(40);
    peer.stdin.write_all(&message(
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "c", "version": 1, "text": text}}}),
    ))?;
    let _reviewing = if review {
        let mut proposal = text.replace("int x;\n", "int y;\n");
        proposal.truncate(7 * 3);
        proposal.push_str(&text[7 * 3..7 * 30]);
        proposal.push_str("long z;\n");
        proposal.push_str(&text[7 * 30..]);
        let reviewing = review::start(&peer.config.0, &path, &proposal)?;
        // Shown: the editor gets the hunks.
        peer.until_review_shown()?;
        Some(reviewing)
    } else {
        None
    };
    let mut times = Vec::with_capacity(requests);
    for n in 0..requests + requests / 10 {
        let bytes = keystroke(&uri, n + 2, n + 1);
        let start = Instant::now();
        peer.stdin.write_all(&bytes)?;
        peer.answer()?;
        // The first tenth warms up.
        if n >= requests / 10 {
            times.push(start.elapsed());
        }
    }
    Ok(times)
}

/// For each of `opens` `megabytes` MB `didOpen`s (of different documents)
/// in one process, its rate in GB/s: bytes over the seconds from its first
/// byte to the answer of the request written after it. The first is the
/// cold one (every process on the way maps its buffers' memory); the rest
/// show the steady state of a long-running editor session.
fn pass_through(peer: Peer, megabytes: usize, opens: usize) -> io::Result<Vec<f64>> {
    let mut peer = peer;
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
    let text = line.repeat(megabytes * 1_000_000 / line.len());
    let mut rates = Vec::with_capacity(opens);
    for open in 0..opens {
        let uri = format!(
            "file://{}/big{open}.txt",
            peer.config.0.join("ws").display()
        );
        let mut bytes = message(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": text}}}));
        bytes.extend_from_slice(&message(
            &json!({"jsonrpc": "2.0", "id": 999_999, "method": "test/after", "params": []}),
        ));
        let size = bytes.len();
        let mut stdin = peer.stdin.try_clone_writer()?;
        let start = Instant::now();
        let writer = std::thread::spawn(move || stdin.write_all(&bytes));
        peer.answer()?;
        let seconds = start.elapsed().as_secs_f64();
        writer.join().expect("writer")?;
        rates.push(size as f64 / seconds / 1e9);
    }
    Ok(rates)
}

/// `ChildStdin` cannot be cloned; a duplicate of its descriptor can.
trait TryCloneWriter {
    fn try_clone_writer(&self) -> io::Result<std::fs::File>;
}

impl TryCloneWriter for ChildStdin {
    fn try_clone_writer(&self) -> io::Result<std::fs::File> {
        use std::os::fd::AsFd as _;
        Ok(std::fs::File::from(self.as_fd().try_clone_to_owned()?))
    }
}

fn main() -> io::Result<()> {
    let cli = Cli::parse();
    let mut all: Vec<(Way, Vec<Duration>)> =
        Way::ALL.iter().map(|&way| (way, Vec::new())).collect();
    // Per way: the cold rates (each run's first open), the warm ones.
    let mut rates: Vec<(Way, Vec<f64>, Vec<f64>)> = Way::ALL
        .iter()
        .map(|&way| (way, Vec::new(), Vec::new()))
        .collect();
    let mut tag = 0;
    for run in 0..cli.runs {
        for (index, &way) in Way::ALL.iter().enumerate() {
            tag += 1;
            let mut peer = Peer::start(&cli, way, tag)?;
            all[index]
                .1
                .extend(latencies(&mut peer, cli.requests, way == Way::Reviewing)?);
            tag += 1;
            if way == Way::Reviewing {
                // Pass-through is the default way's.
                eprintln!("run {run}: {} done", way.name());
                continue;
            }
            let peer = Peer::start(&cli, way, tag)?;
            let each = pass_through(peer, cli.open_mb, cli.opens.max(1))?;
            rates[index].1.push(each[0]);
            rates[index].2.extend(&each[1..]);
            eprintln!("run {run}: {} done", way.name());
        }
    }
    let mut lines = latency_table(&cli, all);
    lines.push(String::new());
    lines.extend(pass_through_table(&cli, &rates));
    #[allow(clippy::print_stdout)]
    {
        println!("{}", lines.join("\n"));
    }
    Ok(())
}

/// The keystroke round trips of each way, and what each adds to direct's.
fn latency_table(cli: &Cli, all: Vec<(Way, Vec<Duration>)>) -> Vec<String> {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let mut lines = vec![
        format!(
            "keystroke round trip (didChange + hover), µs, {} runs × {} requests",
            cli.runs, cli.requests
        ),
        "| way | p50 | p99 | p50 added | p99 added |".to_owned(),
        "|---|---|---|---|---|".to_owned(),
    ];
    let mut direct = (0.0, 0.0);
    for (way, latencies) in all {
        let elapsed = latencies.iter().sum();
        let report = Report::new(latencies.len() as u64, elapsed, latencies, 0);
        let (p50, p99) = (us(report.quantile(0.5)), us(report.quantile(0.99)));
        if way == Way::Direct {
            direct = (p50, p99);
        }
        lines.push(format!(
            "| {} | {p50:.1} | {p99:.1} | {:.1} | {:.1} |",
            way.name(),
            p50 - direct.0,
            p99 - direct.1
        ));
    }
    lines
}

/// The pass-through rates of each way that forwards a `didOpen`: cold
/// (each run's first) and warm (the rest), against direct's warm median.
fn pass_through_table(cli: &Cli, rates: &[(Way, Vec<f64>, Vec<f64>)]) -> Vec<String> {
    let mut lines = Vec::new();
    lines.push(format!(
        "pass-through of a {} MB didOpen, GB/s: the first of each process (cold), then the {} after it (warm)",
        cli.open_mb,
        cli.opens.max(1) - 1
    ));
    lines.push(
        "| way | cold, best | cold, each run | warm, median | warm, best | direct's warm median = 1 |"
            .to_owned(),
    );
    lines.push("|---|---|---|---|---|---|".to_owned());
    let median = |rates: &[f64]| {
        let mut sorted = rates.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let direct_warm = median(&rates[0].2);
    for (way, cold, warm) in rates.iter().filter(|(_, cold, _)| !cold.is_empty()) {
        let best = |rates: &[f64]| rates.iter().copied().fold(0.0, f64::max);
        let each: Vec<String> = cold.iter().map(|rate| format!("{rate:.2}")).collect();
        lines.push(format!(
            "| {} | {:.2} | {} | {:.2} | {:.2} | {:.2} |",
            way.name(),
            best(cold),
            each.join(", "),
            median(warm),
            best(warm),
            median(warm) / direct_warm
        ));
    }
    lines
}

/// Claude's proposal under review: an MCP client of the proxy's IDE host
/// calls `openDiff` and holds the call open, as the CLI does while the user
/// decides.
mod review {
    use std::io;
    use std::path::Path;
    use std::time::{Duration, Instant};

    use futures_util::SinkExt as _;
    use serde_json::json;
    use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest as _};

    /// Ends the call when dropped.
    pub(crate) struct Reviewing {
        _stop: tokio::sync::oneshot::Sender<()>,
    }

    /// Waits for the host's lockfile under `config`, connects, and calls
    /// `openDiff` for `path` with `proposal`.
    pub(crate) fn start(config: &Path, path: &Path, proposal: &str) -> io::Result<Reviewing> {
        let lockfile = wait_lockfile(&config.join("ide"))?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let port: u16 = lockfile
            .0
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| io::Error::other("not a <port>.lock"))?;
        let token = lockfile.1["authToken"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "openDiff", "arguments": {
            "old_file_path": path, "new_file_path": path, "new_file_contents": proposal, "tab_name": "bench"}}});
        let (ready, is_ready) = std::sync::mpsc::channel();
        let client = async move {
            let mut request = format!("ws://127.0.0.1:{port}/")
                .into_client_request()
                .expect("request");
            request.headers_mut().insert(
                "x-claude-code-ide-authorization",
                token.parse().expect("header"),
            );
            let Ok((mut ws, _)) = tokio_tungstenite::connect_async(request).await else {
                let _ = ready.send(false);
                return;
            };
            let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}});
            for message in [
                init,
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                call,
            ] {
                if ws.send(Message::text(message.to_string())).await.is_err() {
                    let _ = ready.send(false);
                    return;
                }
            }
            let _ = ready.send(true);
            // Held open until the run ends.
            let _ = stopped.await;
        };
        std::thread::spawn(move || {
            if let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                runtime.block_on(client);
            }
        });
        if is_ready.recv_timeout(Duration::from_secs(10)) != Ok(true) {
            return Err(io::Error::other("cannot call openDiff on the IDE"));
        }
        Ok(Reviewing { _stop: stop })
    }

    fn wait_lockfile(dir: &Path) -> io::Result<(std::path::PathBuf, serde_json::Value)> {
        let start = Instant::now();
        loop {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                // Only `<port>.lock`: not a file on its way to that name.
                if path.extension().is_none_or(|e| e != "lock") {
                    continue;
                }
                if let Some(content) = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|text| serde_json::from_str(&text).ok())
                {
                    return Ok((path, content));
                }
            }
            if start.elapsed() > Duration::from_secs(10) {
                return Err(io::Error::other("no IDE lockfile"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
