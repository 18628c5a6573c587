//! `ide-mcp lsp-record` (hidden): the recorder of the replay fixtures
//! (`tests/fixtures/helix/`, README "Development"). It runs a command and
//! passes every byte between its caller and it unchanged, as a pipe would,
//! while it appends each message, at the moment it passes, as one JSON line
//! to a log that several recorders (and the person recording, with step
//! markers) may share:
//!
//! ```text
//! {"stream":"clangd","wire":"editor","from":"editor","body":{"jsonrpc":"2.0",…}}
//! ```
//!
//! Put in front of `ide-mcp lsp-proxy` it records the editor's wire (`from`
//! `editor` or `proxy`); as the proxy's server command, in front of the
//! server, the server's wire (`from` `proxy` or `server`). A line is written
//! before its message is passed on, so the log's order never puts an answer
//! before what caused it. The body is the exact text of the message when it
//! is one line of JSON (the editors and servers write compact JSON); else it
//! is kept as the string `text`. A header other than `Content-Length: N` is
//! kept as `header`, bytes that are no message as `unframed`.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};

use clap::{Args, ValueEnum};
use ide_mcp_lsp::framing::{Frame, SyncMessageReader};
use ide_mcp_lsp::sync::lock;
use serde_json::value::RawValue;

/// `ide-mcp lsp-record`.
#[derive(Debug, Args)]
pub struct LspRecordArgs {
    /// Append one JSON line per message to this file.
    #[arg(long, value_name = "FILE")]
    pub log: PathBuf,
    /// The stream's name in each line (the server's: `clangd`).
    #[arg(long, value_name = "NAME")]
    pub stream: String,
    /// The proxy's wire recorded: its stdin comes from the editor and the
    /// command is the proxy (`editor`), or its stdin comes from the proxy
    /// and the command is the server (`server`).
    #[arg(long, value_enum)]
    pub wire: Wire,
    /// The command and its arguments, after `--`.
    #[arg(required = true, last = true, value_name = "COMMAND [ARGS]...")]
    pub command: Vec<OsString>,
}

/// Which side of the proxy a recorder sits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Wire {
    /// Between the editor and the proxy.
    Editor,
    /// Between the proxy and the server.
    Server,
}

impl Wire {
    fn name(self) -> &'static str {
        match self {
            Self::Editor => "editor",
            Self::Server => "server",
        }
    }

    /// Who writes what the recorder reads on its stdin, and who writes
    /// the command's output.
    fn senders(self) -> (&'static str, &'static str) {
        match self {
            Self::Editor => ("editor", "proxy"),
            Self::Server => ("proxy", "server"),
        }
    }
}

/// The shared log: one line per message, written whole.
struct Log {
    file: Mutex<File>,
    prefix: String,
}

impl Log {
    fn open(args: &LspRecordArgs) -> io::Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&args.log)?;
        let prefix = format!(
            r#"{{"stream":{},"wire":"{}","#,
            serde_json::to_string(&args.stream)?,
            args.wire.name()
        );
        Ok(Self {
            file: Mutex::new(file),
            prefix,
        })
    }

    fn record(&self, from: &str, frame: &Frame) -> io::Result<()> {
        let line = format!("{}\"from\":\"{from}\",{}}}\n", self.prefix, describe(frame));
        // One `write` of an `O_APPEND` file: lines of several recorders
        // never interleave.
        let mut file = lock(&self.file);
        file.write_all(line.as_bytes())
    }
}

/// A frame's fields after `from`.
fn describe(frame: &Frame) -> String {
    let message = match frame {
        Frame::Message(message) => message,
        Frame::Unframed(bytes) => return format!(r#""unframed":{}"#, quoted(bytes)),
    };
    let body = message.body();
    let canonical = format!("Content-Length: {}\r\n\r\n", body.len());
    let header = if message.headers() == canonical.as_bytes() {
        String::new()
    } else {
        format!(r#""header":{},"#, quoted(message.headers()))
    };
    let one_line = !body.contains(&b'\n') && !body.contains(&b'\r');
    match serde_json::from_slice::<&RawValue>(body) {
        Ok(raw) if one_line && raw.get().len() == body.len() => {
            format!(r#"{header}"body":{}"#, raw.get())
        }
        _ => format!(r#"{header}"text":{}"#, quoted(body)),
    }
}

/// `bytes` as a JSON string.
fn quoted(bytes: &[u8]) -> String {
    serde_json::Value::from(String::from_utf8_lossy(bytes)).to_string()
}

/// Copies frames from `from` to `to`, recording each first; `to` is
/// dropped (closed) at the end of `from`.
fn pass(log: &Log, sender: &str, from: impl io::Read, mut to: impl Write) -> io::Result<()> {
    let mut reader = SyncMessageReader::new(from);
    while let Some(frame) = reader.next_frame()? {
        log.record(sender, &frame)?;
        to.write_all(frame.as_bytes())?;
        to.flush()?;
    }
    Ok(())
}

/// Runs the command, passing and recording both directions until its
/// output ends; returns its status (a signal `n` as `128 + n`).
pub fn run(args: &LspRecordArgs) -> io::Result<ExitCode> {
    let log = Arc::new(Log::open(args)?);
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| io::Error::other("no command"))?;
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let (input, output) = args.wire.senders();
    if let Some(to_child) = child.stdin.take() {
        // Ends with the caller's input, closing the command's. It may never
        // end (an editor keeps it open): the command's end is the
        // recorder's, and this thread does not outlive `main`.
        let log = Arc::clone(&log);
        std::thread::spawn(move || pass(&log, input, io::stdin().lock(), to_child));
    }
    if let Some(from_child) = child.stdout.take() {
        pass(&log, output, from_child, io::stdout().lock())?;
    }
    let status = child.wait()?;
    let code = status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(1);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}
