//! Newline-delimited JSON-RPC over a byte stream: stdin/stdout for
//! `claude mcp add`, the MCP Inspector and other stdio clients.
//!
//! stdout is the wire: everything else (logs, panic messages) goes to stderr.

use std::io;
use std::time::Duration;

use tokio::io::{
    AsyncBufRead, AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader,
};

use crate::connection;
use crate::server::Server;
use crate::transport::wire::MAX_MESSAGE_BYTES;
use crate::transport::wire::{Limits, Outbox, Recv, Wire};

/// How long a write may wait on a client that does not read stdout.
const STDIO_WRITE_TIMEOUT: Duration = Duration::from_mins(1);

struct Lines<R, W> {
    reader: R,
    writer: W,
    line: Vec<u8>,
    /// The line holds a message handed to the session; clear it on the next read.
    taken: bool,
    /// Skipping the rest of a line over the limit.
    discarding: bool,
}

impl<R, W> Wire for Lines<R, W>
where
    R: AsyncBufRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    const TERMINATOR: Option<u8> = Some(b'\n');
    const DRAIN_ON_EOF: bool = true;

    async fn recv(&mut self) -> Recv {
        if self.taken {
            self.line.clear();
            self.taken = false;
        }
        // Cancel-safe: the partial line is kept in `self`, and `fill_buf` loses nothing.
        loop {
            let buf = match self.reader.fill_buf().await {
                Ok(buf) => buf,
                Err(err) => return Recv::Failed(err),
            };
            if buf.is_empty() {
                // EOF; a last line without its newline still counts.
                if self.discarding || self.line.trim_ascii().is_empty() {
                    return Recv::Closed;
                }
                self.taken = true;
                return Recv::Message;
            }
            let (chunk, used, end) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], i + 1, true),
                None => (buf, buf.len(), false),
            };
            if !self.discarding && self.line.len() + chunk.len() > MAX_MESSAGE_BYTES {
                self.discarding = true;
                self.line = Vec::new();
            }
            if !self.discarding {
                self.line.extend_from_slice(chunk);
            }
            self.reader.consume(used);
            if !end {
                continue;
            }
            if std::mem::take(&mut self.discarding) {
                return Recv::Refused(
                    crate::jsonrpc::INVALID_REQUEST,
                    format!("message longer than the limit of {MAX_MESSAGE_BYTES} bytes; ignored"),
                );
            }
            if self.line.trim_ascii().is_empty() {
                self.line.clear();
                continue;
            }
            self.taken = true;
            return Recv::Message;
        }
    }

    fn message(&self) -> &[u8] {
        &self.line
    }

    async fn send(&mut self, out: &Outbox) -> io::Result<()> {
        // One write and one flush for everything ready: the buffer already
        // holds each message followed by its newline.
        self.writer.write_all(out.bytes()).await?;
        self.writer.flush().await
    }

    async fn close(&mut self) {
        let _ = self.writer.shutdown().await;
    }
}

impl Server {
    /// Serves one MCP client speaking newline-delimited JSON-RPC over `reader`
    /// and `writer` (any byte streams: pipes, `tokio::io::duplex`, sockets).
    /// Returns at the end of input, once the calls still running have been
    /// answered, or with the I/O error that ended the connection.
    pub async fn serve_lines<R, W>(&self, reader: R, writer: W) -> io::Result<()>
    where
        R: AsyncRead + Unpin + Send,
        W: AsyncWrite + Unpin + Send,
    {
        let wire = Lines {
            reader: BufReader::with_capacity(64 * 1024, reader),
            writer,
            line: Vec::new(),
            taken: false,
            discarding: false,
        };
        let limits = Limits::with_write_timeout(STDIO_WRITE_TIMEOUT);
        connection::run(self.clone(), wire, limits, None).await
    }

    /// Serves one MCP client on this process's stdin and stdout until stdin
    /// ends. Logs must go to stderr: stdout is the wire.
    pub async fn serve_stdio(&self) -> io::Result<()> {
        let (input, output) = stdio();
        self.serve_lines(input, output).await
    }
}

/// The size stdout's pipe is enlarged to: a multi-megabyte answer then
/// crosses in 16 wake-ups of the reader instead of 256 (Linux's default pipe
/// holds 64 KiB).
pub const STDOUT_PIPE_BYTES: usize = 1 << 20;

/// This process's stdin and stdout as async streams.
///
/// When they are pipes, the case for every MCP client that spawns its
/// server, they are read and written as non-blocking pipes on tokio's reactor,
/// and stdout's pipe is enlarged to [`STDOUT_PIPE_BYTES`]. Otherwise (a
/// terminal, a file) tokio's `stdin()`/`stdout()` are used, which hand every
/// read and write to a blocking thread.
pub fn stdio() -> (StdioInput, StdioOutput) {
    (StdioInput::open(), StdioOutput::open())
}

/// stdin, as [`stdio`] opens it.
#[derive(Debug)]
pub enum StdioInput {
    /// A pipe on the reactor.
    #[cfg(unix)]
    Pipe(tokio::net::unix::pipe::Receiver),
    /// tokio's blocking-thread stdin.
    Std(tokio::io::Stdin),
}

/// stdout, as [`stdio`] opens it.
#[derive(Debug)]
pub enum StdioOutput {
    /// A pipe on the reactor.
    #[cfg(unix)]
    Pipe(tokio::net::unix::pipe::Sender),
    /// tokio's blocking-thread stdout.
    Std(tokio::io::Stdout),
}

impl StdioInput {
    fn open() -> Self {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd as _;
            let pipe = std::io::stdin()
                .as_fd()
                .try_clone_to_owned()
                .and_then(tokio::net::unix::pipe::Receiver::from_owned_fd);
            if let Ok(pipe) = pipe {
                return Self::Pipe(pipe);
            }
        }
        Self::Std(tokio::io::stdin())
    }
}

impl StdioOutput {
    fn open() -> Self {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd as _;
            if let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() {
                // Best effort: a pipe keeps its size when the system refuses
                // (and on systems other than Linux, which cannot resize one).
                #[cfg(any(target_os = "linux", target_os = "android"))]
                if rustix::pipe::fcntl_setpipe_size(&fd, STDOUT_PIPE_BYTES).is_err() {
                    tracing::debug!("stdout's pipe could not be enlarged");
                }
                if let Ok(pipe) = tokio::net::unix::pipe::Sender::from_owned_fd(fd) {
                    return Self::Pipe(pipe);
                }
            }
        }
        Self::Std(tokio::io::stdout())
    }
}

impl AsyncRead for StdioInput {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Self::Pipe(pipe) => std::pin::Pin::new(pipe).poll_read(cx, buf),
            Self::Std(std) => std::pin::Pin::new(std).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for StdioOutput {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        match self.get_mut() {
            #[cfg(unix)]
            Self::Pipe(pipe) => std::pin::Pin::new(pipe).poll_write(cx, buf),
            Self::Std(std) => std::pin::Pin::new(std).poll_write(cx, buf),
        }
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Self::Pipe(pipe) => std::pin::Pin::new(pipe).poll_flush(cx),
            Self::Std(std) => std::pin::Pin::new(std).poll_flush(cx),
        }
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Self::Pipe(pipe) => std::pin::Pin::new(pipe).poll_shutdown(cx),
            Self::Std(std) => std::pin::Pin::new(std).poll_shutdown(cx),
        }
    }
}
