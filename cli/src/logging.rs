//! Logging for the processes that must never disturb an editor
//! (`lsp-proxy`, `host`): to a file or stderr, through a thread.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd as _;
use std::path::Path;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use ide_mcp_lsp::sync::lock;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// How many log lines may wait for a slow log destination before new ones
/// are dropped.
const LOG_BACKLOG: usize = 1024;

/// Starts logging to `log` (appended) or stderr, through a thread: a log line
/// never blocks the proxy (lines are dropped when the destination does
/// not keep up) and a failed write (the editor gone, its stderr a broken
/// pipe) silences logging instead of panicking. Dropping the returned
/// guard waits briefly for the lines already logged to be written.
pub fn init(log: Option<&Path>) -> io::Result<LogFlush> {
    let out = match log {
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
                    *lock(&signal.0) = true;
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
        let done = lock(done);
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
