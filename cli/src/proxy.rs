//! `ide-mcp lsp-proxy`: its arguments and its logging, which must never
//! disturb the editor (see `ide_mcp_lsp::proxy`).

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd as _;
use std::path::PathBuf;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use clap::{Args, ValueEnum};
use ide_mcp_lsp::proxy::{Observation, ProxyOptions};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// How many log lines may wait for a slow log destination before new ones
/// are dropped.
const LOG_BACKLOG: usize = 1024;

/// Where the proxy's observer runs (`--observe`, hidden).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ObserveArg {
    /// On the forwarding threads.
    Inline,
    /// On a thread of its own.
    HandOff,
    /// Nowhere: forward only.
    Off,
}

/// `ide-mcp lsp-proxy`.
#[derive(Debug, Args)]
pub struct LspProxyArgs {
    /// The IDE name in the lockfile, shown by the CLI's `/ide` (default: the
    /// editor's name from `initialize`).
    #[arg(long, value_name = "NAME")]
    pub ide_name: Option<String>,
    /// A workspace folder (repeatable; default: the editor's, from
    /// `initialize`).
    #[arg(long = "workspace", value_name = "DIR")]
    pub workspaces: Vec<PathBuf>,
    /// Write logs to this file instead of stderr.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Where the observer runs: `hand-off` (a thread of its own, the
    /// default), `inline` (on the forwarding threads), or `off` (forward
    /// only, no IDE): for the benchmarks.
    #[arg(long, hide = true, value_enum, default_value_t = ObserveArg::HandOff)]
    pub observe: ObserveArg,
    /// The language server and its arguments, after `--`.
    #[arg(required = true, last = true, value_name = "SERVER [ARGS]...")]
    pub server: Vec<OsString>,
}

impl LspProxyArgs {
    /// The proxy's options.
    pub fn options(&self) -> ProxyOptions {
        let (server, args) = self
            .server
            .split_first()
            .map(|(server, args)| (server.clone(), args.to_vec()))
            .unwrap_or_default();
        ProxyOptions {
            server,
            args,
            ide_name: self.ide_name.clone(),
            workspaces: self
                .workspaces
                .iter()
                .map(|dir| std::path::absolute(dir).unwrap_or_else(|_| dir.clone()))
                .collect(),
            config_dir: None,
            observation: match self.observe {
                ObserveArg::Inline => Observation::Inline,
                ObserveArg::HandOff => Observation::HandOff,
                ObserveArg::Off => Observation::Off,
            },
        }
    }

    /// Starts logging to `--log FILE` or stderr, through a thread: a log line
    /// never blocks the proxy (lines are dropped when the destination does
    /// not keep up) and a failed write (the editor gone, its stderr a broken
    /// pipe) silences logging instead of panicking. Dropping the returned
    /// guard waits briefly for the lines already logged to be written.
    pub fn init_logging(&self) -> io::Result<LogFlush> {
        let out = match &self.log {
            Some(path) => OpenOptions::new().create(true).append(true).open(path)?,
            None => File::from(io::stderr().as_fd().try_clone_to_owned()?),
        };
        let (lines, receiver) = sync_channel::<Vec<u8>>(LOG_BACKLOG);
        let flushed = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = Arc::clone(&flushed);
        std::thread::Builder::new()
            .name("lsp-proxy-log".into())
            .spawn(move || {
                let mut out = out;
                let mut broken = false;
                for line in &receiver {
                    if line.is_empty() {
                        // A flush request: everything before it is written.
                        *signal.0.lock().unwrap_or_else(PoisonError::into_inner) = true;
                        signal.1.notify_all();
                    } else if !broken {
                        broken = out.write_all(&line).is_err();
                    }
                }
            })?;
        tracing_subscriber::fmt()
            .with_env_filter(
                EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
            )
            .with_writer(LogWriter {
                lines: lines.clone(),
            })
            .with_ansi(false)
            .log_internal_errors(false)
            .init();
        Ok(LogFlush { lines, flushed })
    }
}

/// How long the proxy waits for its last log lines when it ends.
const LOG_FLUSH: Duration = Duration::from_millis(200);

/// Writes out the pending log lines when dropped (waiting a bounded time
/// for a slow destination).
#[derive(Debug)]
pub struct LogFlush {
    lines: SyncSender<Vec<u8>>,
    flushed: Arc<(Mutex<bool>, Condvar)>,
}

impl Drop for LogFlush {
    fn drop(&mut self) {
        if self.lines.try_send(Vec::new()).is_err() {
            return;
        }
        let (done, signal) = &*self.flushed;
        let done = done.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = signal.wait_timeout_while(done, LOG_FLUSH, |done| !*done);
    }
}

/// Hands each log line to the logging thread.
#[derive(Clone, Debug)]
struct LogWriter {
    lines: SyncSender<Vec<u8>>,
}

/// One log event's bytes, sent when the event is written.
#[derive(Debug)]
pub struct LogLine {
    buffer: Vec<u8>,
    lines: SyncSender<Vec<u8>>,
}

impl Write for LogLine {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        let line = std::mem::take(&mut self.buffer);
        if !line.is_empty() {
            // Full or gone: the line is dropped.
            let _ = self.lines.try_send(line);
        }
    }
}

impl<'a> MakeWriter<'a> for LogWriter {
    type Writer = LogLine;

    fn make_writer(&'a self) -> Self::Writer {
        LogLine {
            buffer: Vec::new(),
            lines: self.lines.clone(),
        }
    }
}
