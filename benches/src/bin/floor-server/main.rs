//! The speed of light for the end-to-end benchmark: a server that does no
//! work. At start it asks the real runtime, in-process and over the same
//! synthetic state as `bench-server`, for the response to each call it will
//! see; then it answers every request with those bytes, splicing in only the
//! id. Same flags and transports as `bench-server`.
//!
//! It runs on a current-thread runtime: one thread reads, answers what is
//! ready and writes, with no hand-off between threads, so that per request
//! it makes one `read`, one `write` and at most one `epoll_wait` (counted
//! in BENCHMARKS.md) and nothing else: the limit, not a server that pays
//! the multi-thread scheduler's wake-ups as ours does.

mod http;

use std::collections::HashMap;
use std::sync::LazyLock;

use clap::Parser;
use futures_util::{FutureExt as _, SinkExt as _, StreamExt as _};
use ide_mcp_benches::synth::{self, ServerArgs};
use ide_mcp_runtime::session::Session;
use memchr::memmem::Finder;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, BufWriter};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::{Bytes, Message};

#[derive(Parser, Debug)]
#[command(about = "Answer MCP requests with pre-built bytes (the benchmark's floor)")]
struct Cli {
    #[command(flatten)]
    server: ServerArgs,
}

/// A prepared answer: the bytes before and after the id.
struct Answer {
    head: Vec<u8>,
    tail: Vec<u8>,
}

/// Answers keyed by `method` + the raw `params` text of the request; the
/// last one used is checked first (a run repeats one request), with one
/// comparison of bytes and no hashing.
struct Floor {
    session: Session,
    /// Key → index in `answers`.
    index: HashMap<Vec<u8>, usize>,
    answers: Vec<(Vec<u8>, Answer)>,
    last: Option<usize>,
}

impl Floor {
    fn new(session: Session) -> Self {
        Self {
            session,
            index: HashMap::new(),
            answers: Vec::new(),
            last: None,
        }
    }
}

/// The searches the floor makes, each built once (building a searcher
/// costs more than running it over a small request).
static ID: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(br#""id":"#));
static METHOD: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(br#""method":"#));

impl Floor {
    /// The id and the key of a request, found by scanning (no parsing).
    fn split(request: &[u8]) -> Option<(&[u8], &[u8])> {
        let at = ID.find(request)? + 5;
        let end = at
            + request[at..]
                .iter()
                .position(|b| *b == b',' || *b == b'}')?;
        let key_at = METHOD.find(request)?;
        Some((&request[at..end], &request[key_at..]))
    }

    /// Builds the answer to `request` (of shape `key`) with the real runtime
    /// and keeps it; its index, or `None` for a notification.
    fn prepare(&mut self, request: &[u8], key: &[u8]) -> Option<usize> {
        let mut real = Vec::new();
        if !self.session.handle(request, &mut real) {
            return None;
        }
        let at = ID.find(&real).expect("responses carry the id") + 5;
        let end = at
            + real[at..]
                .iter()
                .position(|b| *b == b',')
                .expect("id is followed by a comma");
        let answer = Answer {
            head: real[..at].to_vec(),
            tail: real[end..].to_vec(),
        };
        self.answers.push((key.to_vec(), answer));
        self.index.insert(key.to_vec(), self.answers.len() - 1);
        Some(self.answers.len() - 1)
    }

    /// Appends the answer to `request`; builds it with the real runtime the
    /// first time a request of this shape is seen.
    fn answer(&mut self, request: &[u8], out: &mut Vec<u8>) -> bool {
        let Some((id, key)) = Self::split(request) else {
            return false;
        };
        let known = self
            .last
            .filter(|&last| self.answers[last].0 == key)
            .or_else(|| self.index.get(key).copied());
        // A notification has no answer.
        let Some(found) = known.or_else(|| self.prepare(request, key)) else {
            return false;
        };
        self.last = Some(found);
        let answer = &self.answers[found].1;
        out.extend_from_slice(&answer.head);
        out.extend_from_slice(id);
        out.extend_from_slice(&answer.tail);
        true
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let (_ws, cx) = synth::workspace(cli.server.size());
        let server = synth::server(cx)?;
        let floor = || Floor::new(Session::new(server.clone()));
        if let Some(port) = cli.server.ws {
            let token = cli.server.token.clone().unwrap_or_default();
            let listener = TcpListener::bind(("127.0.0.1", port)).await?;
            loop {
                let (stream, _) = listener.accept().await?;
                stream.set_nodelay(true)?;
                tokio::spawn(serve_ws(stream, token.clone(), floor()));
            }
        } else if let Some(port) = cli.server.http {
            http::serve(
                server.clone(),
                port,
                cli.server.token.clone().unwrap_or_default(),
            )
            .await?;
        } else if cli.server.stdio {
            serve_stdio(floor()).await?;
        } else {
            return Err("give --stdio, --ws PORT --token T or --http PORT --token T".into());
        }
        Ok(())
    })
}

async fn serve_ws(stream: tokio::net::TcpStream, token: String, mut floor: Floor) {
    #[allow(clippy::result_large_err)] // tungstenite's callback signature
    let check = |request: &Request, mut response: Response| {
        let ok = request
            .headers()
            .get("x-claude-code-ide-authorization")
            .is_some_and(|v| v.as_bytes() == token.as_bytes());
        if !ok {
            let mut err = ErrorResponse::new(None);
            *err.status_mut() = StatusCode::UNAUTHORIZED;
            return Err(err);
        }
        if request.headers().get("sec-websocket-protocol").is_some() {
            response.headers_mut().insert(
                "sec-websocket-protocol",
                "mcp".parse().expect("valid header"),
            );
        }
        Ok(response)
    };
    let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(stream, check).await else {
        return;
    };
    let mut out = Vec::new();
    while let Some(Ok(message)) = ws.next().await {
        let mut batch = Some(message);
        while let Some(message) = batch.take() {
            if let Message::Text(text) = message {
                out.clear();
                if floor.answer(text.as_bytes(), &mut out) {
                    // A text frame sent as is, as the runtime sends them.
                    let frame = Frame::message(
                        Bytes::copy_from_slice(&out),
                        OpCode::Data(Data::Text),
                        true,
                    );
                    if ws.feed(Message::Frame(frame)).await.is_err() {
                        return;
                    }
                }
            }
            // Answer everything already received before one flush.
            if let Some(Some(Ok(next))) = ws.next().now_or_never() {
                batch = Some(next);
            }
        }
        if ws.flush().await.is_err() {
            return;
        }
    }
}

async fn serve_stdio(mut floor: Floor) -> std::io::Result<()> {
    // The same pipes, non-blocking and enlarged, as the runtime's stdio.
    let (input, output) = ide_mcp_runtime::transport::stdio::stdio();
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut output = BufWriter::with_capacity(1 << 20, output);
    let mut line = Vec::new();
    let mut out = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        out.clear();
        if floor.answer(&line, &mut out) {
            out.push(b'\n');
            output.write_all(&out).await?;
        }
        if input.buffer().is_empty() {
            output.flush().await?;
        }
    }
    output.flush().await
}
