//! `lsp-echo`: a trivial language server, the peer of the proxy's
//! transparency tests and benchmarks (not part of the `ide-mcp` binary:
//! `cargo test --workspace` builds it, or `cargo build -p ide-mcp-lsp-echo`;
//! the tests find it with `ide_mcp_test_support::lsp_echo()`). It answers
//! every request with its own `params` as the result, ignores
//! notifications, ends at `exit` or end of input, and can record every byte it receives and play bytes
//! (a recorded server session) before answering anything. Messages over
//! 1 MiB are not read, only recorded, their bodies passed through in chunks
//! of a reused buffer: taken for notifications.
//!
//! With `--replay` it is a recorded server instead (the replay tests of
//! `tests/fixtures/helix/`): it writes what the server wrote and reads what
//! it read, in the recorded order, then ends.
//!
//! With `--diagnose` it is also the fake server of `serve --lsp`'s
//! lifecycle tests: it publishes a warning naming its pid for each document
//! opened or changed, and with `--hang` it stops answering after its first
//! publish while it runs on, as a server that hangs after start-up.
//!
//! `--answer METHOD=JSON` answers METHOD's requests with a fixed result
//! (`initialize` too: the capabilities of the live LSP tools' tests),
//! `--error METHOD=JSON` with a fixed error, and `--silent METHOD` never
//! answers them; `METHOD|NEEDLE=JSON` answers only the requests whose
//! params hold NEEDLE (`textDocument/references|"line":3}=[…]`), before
//! the answers without one. `--publish JSON` publishes these diagnostics
//! for each document opened or changed.

use std::fs::File;
use std::io::{self, Read as _, Write};
use std::path::PathBuf;

use std::process::ExitCode;

use clap::Parser;
use ide_mcp_lsp::framing::{Frame, Message, SyncMessageReader};
use serde_json::value::RawValue;

/// `lsp-echo`.
#[derive(Debug, Parser)]
#[command(about = "A fake language server: echoes requests, or plays scripted answers")]
struct LspEchoArgs {
    /// Append every byte received on stdin to this file.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Write this file's bytes to stdout first, unchanged.
    #[arg(long, value_name = "FILE")]
    play: Option<PathBuf>,
    /// Serve `serve --lsp`: answer `initialize` with full text sync and
    /// publish, for each document opened or changed, one warning (source
    /// `lsp-echo`) whose message is `pid PID, version N` (`, hanging` added
    /// with `--hang`).
    #[arg(long)]
    diagnose: bool,
    /// After the first publish, stop answering: say so on stderr, then read
    /// and drop everything (`exit` too) until the end of input.
    #[arg(long, requires = "diagnose")]
    hang: bool,
    /// Answer requests of METHOD with this JSON result instead of their
    /// params (`initialize` included): the fake answers of the live LSP
    /// tools' tests. Repeatable.
    /// `METHOD|NEEDLE=JSON` answers only the requests whose params (as
    /// sent) contain NEEDLE.
    #[arg(long, value_name = "METHOD[|NEEDLE]=JSON", value_parser = method_answer)]
    answer: Vec<(String, String)>,
    /// Answer requests of METHOD with this JSON-RPC error object (`{"code",
    /// "message"}`), as `--answer` does (NEEDLE included). Repeatable.
    #[arg(long, value_name = "METHOD[|NEEDLE]=JSON", value_parser = method_answer)]
    error: Vec<(String, String)>,
    /// For each document opened or changed, publish these diagnostics (a
    /// JSON array) for it, at its version.
    #[arg(long, value_name = "JSON", conflicts_with = "diagnose")]
    publish: Option<String>,
    /// Never answer requests of METHOD (a server that takes too long).
    /// Repeatable.
    #[arg(long, value_name = "METHOD")]
    silent: Vec<String>,
    /// Play a recorded server: a file of `ide-mcp lsp-record` lines of one
    /// stream's server wire, in order. Each line `from` the server is
    /// written (its `body` framed anew), each other line waits for the next
    /// message received; a message other than the recorded one is said on
    /// stderr. At the end of the file, the server ends.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["play", "diagnose"])]
    replay: Option<PathBuf>,
}

/// `METHOD=JSON`, the JSON checked.
fn method_answer(arg: &str) -> Result<(String, String), String> {
    let (method, json) = arg
        .split_once('=')
        .ok_or_else(|| format!("expected METHOD=JSON, got {arg:?}"))?;
    serde_json::from_str::<serde_json::Value>(json).map_err(|e| format!("{method}: {e}"))?;
    Ok((method.to_owned(), json.to_owned()))
}

/// The fixed reply of `--answer` or `--error` for a request of `method`
/// with `params`: those with a NEEDLE the params hold first, then those
/// without; `"result":…` or `"error":…`.
fn scripted(args: &LspEchoArgs, method: &str, params: &str) -> Option<String> {
    let rules = args
        .answer
        .iter()
        .map(|(key, json)| (key, format!(r#""result":{json}"#)))
        .chain(
            args.error
                .iter()
                .map(|(key, json)| (key, format!(r#""error":{json}"#))),
        );
    let mut plain = None;
    for (key, reply) in rules {
        match key.split_once('|') {
            Some((m, needle)) if m == method && params.contains(needle) => return Some(reply),
            None if key == method && plain.is_none() => plain = Some(reply),
            _ => {}
        }
    }
    plain
}

/// Messages larger than this are not read (see [`run`]).
const LARGE: usize = 1 << 20;

#[derive(serde::Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a str>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

fn main() -> ExitCode {
    match run(&LspEchoArgs::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// Runs the echo server on stdin and stdout until `exit` or end of input.
fn run(args: &LspEchoArgs) -> io::Result<()> {
    let mut out = io::stdout().lock();
    if let Some(play) = &args.play {
        let mut bytes = Vec::new();
        File::open(play)?.read_to_end(&mut bytes)?;
        out.write_all(&bytes)?;
        out.flush()?;
    }
    let mut record = args.record.as_ref().map(File::create).transpose()?;
    if let Some(script) = &args.replay {
        let reader = SyncMessageReader::new(io::stdin().lock());
        return replay(&std::fs::read_to_string(script)?, reader, &mut out, record);
    }
    // A large message (a `didOpen` of the pass-through benchmark) is not
    // gathered: its body comes as unframed chunks of one reused buffer, so
    // that the echo, not the proxy, is never the bottleneck, cold or warm.
    let mut reader = SyncMessageReader::with_max_content_length(io::stdin().lock(), LARGE as u64);
    let mut hung = false;
    while let Some(frame) = reader.next_frame()? {
        if let Some(record) = &mut record {
            record.write_all(frame.as_bytes())?;
        }
        let Frame::Message(message) = frame else {
            continue;
        };
        if hung {
            continue;
        }
        let Ok(request) = serde_json::from_slice::<Request<'_>>(message.body()) else {
            continue;
        };
        match (request.id, request.method) {
            (_, Some("exit")) => break,
            (Some(_), Some(method)) if args.silent.iter().any(|m| m == method) => {}
            (Some(id), Some(method))
                if let Some(reply) =
                    scripted(args, method, request.params.map_or("", RawValue::get)) =>
            {
                let body = format!(r#"{{"jsonrpc":"2.0","id":{},{reply}}}"#, id.get());
                out.write_all(Message::from_body(body).as_bytes())?;
                out.flush()?;
            }
            (Some(id), Some("initialize")) if args.diagnose => {
                let result =
                    r#"{"capabilities":{"textDocumentSync":1},"serverInfo":{"name":"lsp-echo"}}"#;
                let body = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, id.get());
                out.write_all(Message::from_body(body).as_bytes())?;
                out.flush()?;
            }
            (None, Some("textDocument/didOpen" | "textDocument/didChange"))
                if let Some(diagnostics) = &args.publish =>
            {
                let published = request.params.and_then(|p| publish_these(p, diagnostics));
                if let Some(body) = published {
                    out.write_all(Message::from_body(body).as_bytes())?;
                    out.flush()?;
                }
            }
            (None, Some("textDocument/didOpen" | "textDocument/didChange")) if args.diagnose => {
                if let Some(body) = request.params.and_then(|p| publish(p, args.hang)) {
                    out.write_all(Message::from_body(body).as_bytes())?;
                    out.flush()?;
                    if args.hang {
                        writeln!(io::stderr(), "lsp-echo {}: hanging", std::process::id())?;
                        hung = true;
                    }
                }
            }
            (Some(id), Some(_)) => {
                let result = request.params.map_or("null", RawValue::get);
                let body = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, id.get());
                out.write_all(Message::from_body(body).as_bytes())?;
                out.flush()?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// One line of a `--replay` script (other fields, and lines without
/// `from`, such as step markers, are ignored).
#[derive(serde::Deserialize)]
struct Scripted {
    from: Option<String>,
    body: Option<Box<RawValue>>,
    text: Option<String>,
}

/// Plays `script` (see [`LspEchoArgs::replay`]).
fn replay(
    script: &str,
    mut reader: SyncMessageReader<impl io::Read>,
    out: &mut impl Write,
    mut record: Option<File>,
) -> io::Result<()> {
    let mut received = 0;
    for (number, line) in script.lines().enumerate().map(|(n, l)| (n + 1, l)) {
        let scripted: Scripted = serde_json::from_str(line)
            .map_err(|e| io::Error::other(format!("line {number}: {e}")))?;
        let Some(from) = scripted.from else { continue };
        let body = match (&scripted.body, scripted.text) {
            (Some(body), _) => body.get().to_owned(),
            (None, Some(text)) => text,
            (None, None) => continue,
        };
        if from == "server" {
            out.write_all(Message::from_body(body).as_bytes())?;
            out.flush()?;
            continue;
        }
        let Some(frame) = reader.next_frame()? else {
            eprintln!("lsp-echo: input ended before line {number}");
            return Ok(());
        };
        received += 1;
        if let Some(record) = &mut record {
            record.write_all(frame.as_bytes())?;
        }
        let got = match &frame {
            Frame::Message(message) => message.body(),
            Frame::Unframed(bytes) => bytes,
        };
        if got != body.as_bytes() {
            eprintln!(
                "lsp-echo: message {received} is not line {number}'s: {}",
                String::from_utf8_lossy(got)
            );
        }
    }
    Ok(())
}

/// The `publishDiagnostics` of `--publish` for a `didOpen` or `didChange`.
fn publish_these(params: &RawValue, diagnostics: &str) -> Option<String> {
    let params: serde_json::Value = serde_json::from_str(params.get()).ok()?;
    let document = params.get("textDocument")?;
    let diagnostics: serde_json::Value = serde_json::from_str(diagnostics).ok()?;
    let publish = serde_json::json!({
        "jsonrpc": "2.0",
        "method": "textDocument/publishDiagnostics",
        "params": {"uri": document.get("uri")?, "version": document.get("version"), "diagnostics": diagnostics},
    });
    Some(publish.to_string())
}

/// The `publishDiagnostics` of `--diagnose` for a `didOpen` or `didChange`.
fn publish(params: &RawValue, hang: bool) -> Option<String> {
    let params: serde_json::Value = serde_json::from_str(params.get()).ok()?;
    let document = params.get("textDocument")?;
    let version = document.get("version").and_then(serde_json::Value::as_i64);
    let message = format!(
        "pid {}, version {}{}",
        std::process::id(),
        version.unwrap_or_default(),
        if hang { ", hanging" } else { "" }
    );
    let publish = serde_json::json!({
        "jsonrpc": "2.0",
        "method": "textDocument/publishDiagnostics",
        "params": {
            "uri": document.get("uri")?,
            "version": version,
            "diagnostics": [{
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                "severity": 2,
                "source": "lsp-echo",
                "message": message,
            }],
        },
    });
    Some(publish.to_string())
}
