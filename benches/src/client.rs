//! A minimal MCP client over WebSocket or stdio that keeps a fixed number of
//! requests in flight and checks every response it gets.

use std::process::Stdio;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{Bytes, Message, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Where the server is.
#[derive(Clone, Debug)]
pub enum Target {
    /// `ws://127.0.0.1:<port>/` with the IDE auth token.
    Ws {
        /// The port.
        port: u16,
        /// The `x-claude-code-ide-authorization` token.
        token: String,
    },
    /// A child process speaking newline-delimited JSON-RPC on its stdio.
    Stdio {
        /// The program and its arguments.
        command: Vec<String>,
    },
}

/// A connection that sends and receives one JSON-RPC message at a time.
#[allow(clippy::large_enum_variant)] // one per run; boxing buys nothing
pub enum Connection {
    /// Over WebSocket.
    Ws(WebSocketStream<MaybeTlsStream<TcpStream>>),
    /// Over a child's pipes.
    Stdio {
        /// The child, killed on drop.
        child: Child,
        /// Its stdin.
        stdin: BufWriter<ChildStdin>,
        /// Its stdout.
        stdout: BufReader<ChildStdout>,
        /// The line buffer.
        line: String,
    },
}

/// A failure of the server or the transport, as the driver saw it.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

impl Connection {
    /// Connects and performs the MCP handshake (`initialize`, `notifications/initialized`).
    pub async fn open(target: &Target) -> Result<Self, Error> {
        let mut conn = match target {
            Target::Ws { port, token } => {
                let mut request = format!("ws://127.0.0.1:{port}/").into_client_request()?;
                request.headers_mut().insert(
                    "x-claude-code-ide-authorization",
                    HeaderValue::from_str(token)?,
                );
                request
                    .headers_mut()
                    .insert("sec-websocket-protocol", HeaderValue::from_static("mcp"));
                let (ws, _) = tokio_tungstenite::connect_async(request).await?;
                if let MaybeTlsStream::Plain(tcp) = ws.get_ref() {
                    tcp.set_nodelay(true)?;
                }
                Self::Ws(ws)
            }
            Target::Stdio { command } => {
                let (program, args) = command.split_first().ok_or("empty --stdio command")?;
                let mut child = Command::new(program)
                    .args(args)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .kill_on_drop(true)
                    .spawn()?;
                let stdin = BufWriter::new(child.stdin.take().ok_or("no stdin")?);
                let stdout =
                    BufReader::with_capacity(1 << 20, child.stdout.take().ok_or("no stdout")?);
                Self::Stdio {
                    child,
                    stdin,
                    stdout,
                    line: String::new(),
                }
            }
        };
        conn.send(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ide-mcp-loadgen","version":"0"}}}"#
                .to_owned(),
        )
        .await?;
        conn.flush().await?;
        let reply = conn.recv().await?;
        check_response(&reply, 0, false)?;
        conn.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned())
            .await?;
        conn.flush().await?;
        Ok(conn)
    }

    /// Queues one message (not yet flushed).
    pub async fn send(&mut self, text: String) -> Result<(), Error> {
        match self {
            Self::Ws(ws) => ws.feed(Message::Text(Utf8Bytes::from(text))).await?,
            Self::Stdio { stdin, .. } => {
                stdin.write_all(text.as_bytes()).await?;
                stdin.write_all(b"\n").await?;
            }
        }
        Ok(())
    }

    /// Sends what was queued.
    pub async fn flush(&mut self) -> Result<(), Error> {
        match self {
            Self::Ws(ws) => ws.flush().await?,
            Self::Stdio { stdin, .. } => stdin.flush().await?,
        }
        Ok(())
    }

    /// The next JSON-RPC message from the server.
    pub async fn recv(&mut self) -> Result<Bytes, Error> {
        match self {
            Self::Ws(ws) => loop {
                match ws
                    .next()
                    .await
                    .ok_or("the server closed the connection")??
                {
                    Message::Text(text) => return Ok(Bytes::from(text)),
                    Message::Binary(_) => return Err("unexpected binary frame".into()),
                    Message::Close(frame) => {
                        return Err(format!("the server closed: {frame:?}").into());
                    }
                    _ => {}
                }
            },
            Self::Stdio { stdout, line, .. } => {
                line.clear();
                if stdout.read_line(line).await? == 0 {
                    return Err("the server closed its stdout".into());
                }
                Ok(Bytes::from(std::mem::take(line)))
            }
        }
    }

    /// Closes the connection (and ends a stdio child).
    pub async fn close(self) {
        match self {
            Self::Ws(mut ws) => {
                let _ = ws.close(None).await;
            }
            Self::Stdio {
                mut child, stdin, ..
            } => {
                drop(stdin);
                let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
                let _ = child.kill().await;
            }
        }
    }
}

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    result: Option<CallResult>,
    #[serde(default)]
    error: Option<IgnoredAny>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct CallResult {
    #[serde(default, rename = "isError")]
    is_error: bool,
    #[serde(flatten)]
    _rest: IgnoredAny,
}

/// Parses a whole response, checks it answers `id` without an error, and
/// (for `tools/call`) without `isError`. Returns the id.
pub fn check_response(bytes: &[u8], id: u64, tool_call: bool) -> Result<u64, Error> {
    let response: Response = serde_json::from_slice(bytes)?;
    if response.method.is_some() {
        return Err("unexpected notification".into());
    }
    if response.error.is_some() {
        return Err(format!("error response: {}", String::from_utf8_lossy(bytes)).into());
    }
    let got = response.id.ok_or("response without a numeric id")?;
    if id != u64::MAX && got != id {
        return Err(format!("expected id {id}, got {got}").into());
    }
    let result = response.result.ok_or("response without result")?;
    if tool_call && result.is_error {
        let shown: String = String::from_utf8_lossy(bytes).chars().take(300).collect();
        return Err(format!("tool error: {shown}").into());
    }
    Ok(got)
}

/// What one load run measured.
#[derive(Clone, Debug)]
pub struct Report {
    /// Requests answered.
    pub requests: u64,
    /// Wall time of the measured part.
    pub elapsed: Duration,
    /// Latencies, sorted.
    pub latencies: Vec<Duration>,
    /// Bytes of responses received.
    pub bytes: u64,
}

impl Report {
    /// The report of `requests` answered in `elapsed` with these latencies
    /// (sorted here) and `bytes` of responses.
    pub fn new(requests: u64, elapsed: Duration, mut latencies: Vec<Duration>, bytes: u64) -> Self {
        latencies.sort_unstable();
        Self {
            requests,
            elapsed,
            latencies,
            bytes,
        }
    }

    /// Requests per second.
    pub fn rps(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }

    /// The latency at quantile `q` (0..=1).
    pub fn quantile(&self, q: f64) -> Duration {
        if self.latencies.is_empty() {
            return Duration::ZERO;
        }
        let i = ((self.latencies.len() - 1) as f64 * q).round() as usize;
        self.latencies[i]
    }
}

/// A load to send: what [`run_load`] and
/// [`run_http_load`](crate::http_client::run_http_load) take.
#[derive(Clone, Copy, Debug)]
pub struct Load<'a> {
    /// The request's method.
    pub method: &'a str,
    /// The request's params, as JSON text.
    pub params: &'a str,
    /// How many requests are in flight at once.
    pub concurrency: usize,
    /// How many requests go before the measured ones, unmeasured.
    pub warmup: u64,
    /// How many requests are measured.
    pub requests: u64,
}

impl Load<'_> {
    /// Whether the requests are `tools/call`s (each answer is checked as a tool's result).
    pub fn is_tool_call(&self) -> bool {
        self.method == "tools/call"
    }
}

/// Sends `load.requests` copies of its request (after `load.warmup`
/// unmeasured ones), keeping `load.concurrency` in flight, and checks every
/// response.
pub async fn run_load(conn: &mut Connection, load: &Load<'_>) -> Result<Report, Error> {
    let (warmup, requests) = (load.warmup, load.requests);
    let tool_call = load.is_tool_call();
    let total = warmup + requests;
    let first_id = 1_u64;
    let mut sent_at: Vec<Instant> = Vec::with_capacity(total as usize);
    let mut answered = vec![false; total as usize];
    let mut latencies = Vec::with_capacity(requests as usize);
    let mut next = 0_u64;
    let mut received = 0_u64;
    let mut bytes = 0_u64;
    let mut start = Instant::now();
    let (method, params) = (load.method, load.params);
    let request =
        |id: u64| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);

    while next < total && (next as usize) < load.concurrency {
        sent_at.push(Instant::now());
        conn.send(request(first_id + next)).await?;
        next += 1;
    }
    conn.flush().await?;
    while received < total {
        let reply = conn.recv().await?;
        let now = Instant::now();
        let id = check_response(&reply, u64::MAX, tool_call)?;
        let index =
            id.checked_sub(first_id)
                .filter(|i| *i < next)
                .ok_or_else(|| format!("answer to an id never sent: {id}"))? as usize;
        if std::mem::replace(&mut answered[index], true) {
            return Err(format!("id {id} answered twice").into());
        }
        received += 1;
        if index as u64 >= warmup {
            latencies.push(now - sent_at[index]);
            bytes += reply.len() as u64;
        }
        if received == warmup {
            start = Instant::now();
        }
        if next < total {
            sent_at.push(Instant::now());
            conn.send(request(first_id + next)).await?;
            next += 1;
            conn.flush().await?;
        }
    }
    Ok(Report::new(requests, start.elapsed(), latencies, bytes))
}
