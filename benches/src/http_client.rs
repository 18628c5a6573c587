//! The load generator's Streamable HTTP client: C keep-alive connections,
//! each with one request in flight (HTTP/1.1 has no multiplexing), requests
//! written by hand and every response read by its `Content-Length`, checked
//! for status 200 and parsed and checked as the other transports' are.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;

use crate::client::{Error, Load, Report, check_response};

/// A Streamable HTTP server on 127.0.0.1.
#[derive(Clone, Debug)]
pub struct HttpTarget {
    /// The port (the endpoint is `/mcp`).
    pub port: u16,
    /// The bearer token.
    pub token: String,
    /// 2026-07-28 requests (no session, `_meta` and routing headers) rather
    /// than a 2025-11-25 session opened by `initialize`.
    pub stateless: bool,
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ide-mcp-loadgen","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

/// Everything of a request but its id.
struct Template {
    head: String,
    /// The body before and after the id.
    before_id: String,
    after_id: String,
}

impl Template {
    fn new(target: &HttpTarget, session: Option<&str>, method: &str, params: &str) -> Self {
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
            target.port, target.token
        );
        let params = if target.stateless {
            let _ = write!(
                head,
                "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"
            );
            if let Some(name) = params
                .split(r#""name":""#)
                .nth(1)
                .and_then(|r| r.split('"').next())
            {
                let _ = write!(head, "Mcp-Name: {name}\r\n");
            }
            let rest = params.trim_start().strip_prefix('{').unwrap_or("}");
            let sep = if rest.trim_start().starts_with('}') {
                ""
            } else {
                ","
            };
            format!("{{{META}{sep}{rest}")
        } else {
            params.to_owned()
        };
        if let Some(session) = session {
            let _ = write!(
                head,
                "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
            );
        }
        Self {
            head,
            before_id: r#"{"jsonrpc":"2.0","id":"#.to_owned(),
            after_id: format!(r#","method":"{method}","params":{params}}}"#),
        }
    }

    fn request(&self, id: u64) -> Vec<u8> {
        let body = format!("{}{id}{}", self.before_id, self.after_id);
        format!("{}Content-Length: {}\r\n\r\n{body}", self.head, body.len()).into_bytes()
    }
}

/// One keep-alive connection.
struct Conn {
    stream: BufReader<TcpStream>,
    line: String,
}

impl Conn {
    async fn open(port: u16) -> Result<Self, Error> {
        let stream = TcpStream::connect(("127.0.0.1", port)).await?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream: BufReader::new(stream),
            line: String::new(),
        })
    }

    /// Sends `request` and returns the response's status, session id and body.
    async fn exchange(&mut self, request: &[u8]) -> Result<(u16, Option<String>, Vec<u8>), Error> {
        self.stream.get_mut().write_all(request).await?;
        let mut status = 0;
        let mut length = 0;
        let mut session = None;
        loop {
            self.line.clear();
            if self.stream.read_line(&mut self.line).await? == 0 {
                return Err("the server closed the connection".into());
            }
            let line = self.line.trim_end();
            if line.is_empty() {
                break;
            }
            if status == 0 {
                status = line
                    .split(' ')
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .ok_or("no status line")?;
            } else if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse()?;
                } else if name.eq_ignore_ascii_case("mcp-session-id") {
                    session = Some(value.trim().to_owned());
                }
            }
        }
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body).await?;
        Ok((status, session, body))
    }
}

/// Opens a 2025-11-25 session: `initialize`, then `notifications/initialized`.
async fn open_session(target: &HttpTarget, conn: &mut Conn) -> Result<String, Error> {
    let init = Template::new(
        target,
        None,
        "initialize",
        r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ide-mcp-loadgen","version":"0"}}"#,
    );
    let (status, session, body) = conn.exchange(&init.request(0)).await?;
    if status != 200 {
        return Err(format!(
            "initialize: HTTP {status}: {}",
            String::from_utf8_lossy(&body)
        )
        .into());
    }
    let session = session.ok_or("initialize answered without Mcp-Session-Id")?;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let head = Template::new(target, Some(&session), "", "{}").head;
    let request = format!("{head}Content-Length: {}\r\n\r\n{note}", note.len());
    conn.exchange(request.as_bytes()).await?;
    Ok(session)
}

/// Sends `load.requests` copies of its request (after `load.warmup`
/// unmeasured ones) over `load.concurrency` keep-alive connections, one
/// request in flight on each, and checks every response.
pub async fn run_http_load(target: &HttpTarget, load: &Load<'_>) -> Result<Report, Error> {
    let mut conns = Vec::with_capacity(load.concurrency);
    for _ in 0..load.concurrency.max(1) {
        conns.push(Conn::open(target.port).await?);
    }
    let session = if target.stateless {
        None
    } else {
        Some(open_session(target, &mut conns[0]).await?)
    };
    let template = Arc::new(Template::new(
        target,
        session.as_deref(),
        load.method,
        load.params,
    ));
    let tool_call = load.is_tool_call();
    let (conns, _, _) = phase(conns, &template, tool_call, 1, load.warmup).await?;
    let start = Instant::now();
    let (_, latencies, bytes) =
        phase(conns, &template, tool_call, 1 + load.warmup, load.requests).await?;
    Ok(Report::new(
        load.requests,
        start.elapsed(),
        latencies,
        bytes,
    ))
}

type Phase = (Vec<Conn>, Vec<Duration>, u64);

/// Sends ids `first..first + count` over all connections until each is answered.
async fn phase(
    conns: Vec<Conn>,
    template: &Arc<Template>,
    tool_call: bool,
    first: u64,
    count: u64,
) -> Result<Phase, Error> {
    let next = Arc::new(AtomicU64::new(first));
    let end = first + count;
    let mut tasks = tokio::task::JoinSet::new();
    for mut conn in conns {
        let (next, template) = (Arc::clone(&next), Arc::clone(template));
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            let mut bytes = 0;
            loop {
                let id = next.fetch_add(1, Ordering::Relaxed);
                if id >= end {
                    return Ok::<_, Error>((conn, latencies, bytes));
                }
                let request = template.request(id);
                let sent = Instant::now();
                let (status, _, body) = conn.exchange(&request).await?;
                latencies.push(sent.elapsed());
                if status != 200 {
                    return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&body)).into());
                }
                check_response(&body, id, tool_call)?;
                bytes += body.len() as u64;
            }
        });
    }
    let mut all = (Vec::new(), Vec::new(), 0);
    while let Some(done) = tasks.join_next().await {
        let (conn, latencies, bytes) = done??;
        all.0.push(conn);
        all.1.extend(latencies);
        all.2 += bytes;
    }
    Ok(all)
}
