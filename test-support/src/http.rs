//! A raw HTTP/1.1 client of the Streamable HTTP tests: requests written by
//! hand, answers read as bytes, so that every status, header and body is
//! checked as sent.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::Path;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::net::{TcpStream, UnixStream};

/// A connection: TCP, or a Unix socket.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// One answer.
#[derive(Debug)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// Header names lowercased; repeated headers joined with ", ".
    pub headers: BTreeMap<String, String>,
    /// The body, de-chunked.
    pub body: String,
}

impl Answer {
    /// The body, parsed; panics, quoting it, when it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|err| panic!("not JSON ({err}): {:?}", self.body))
    }

    /// The value of header `name` (lowercase), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// A request being built.
pub struct Req {
    method: &'static str,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// The headers of a well-formed 2026-07-28 or session POST, minus routing.
pub fn post(token: &str, body: impl Into<Vec<u8>>) -> Req {
    Req::new("POST")
        .header("Authorization", &format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body)
}

/// A 2026-07-28 request with its headers and `_meta` filled in; `params`
/// is the text inside the params object (`"name":"echo","arguments":{}`,
/// the name first: it becomes `Mcp-Name`), or empty.
pub fn stateless(token: &str, id: u64, method: &str, params: &str) -> Req {
    let sep = if params.is_empty() { "" } else { "," };
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}{sep}"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    );
    let req = post(token, body)
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method);
    match params
        .strip_prefix(r#""name":""#)
        .and_then(|p| p.split('"').next())
    {
        Some(name) => req.header("Mcp-Name", name),
        None => req,
    }
}

impl Req {
    /// A `method` request to `/mcp`, without headers or body.
    pub fn new(method: &'static str) -> Self {
        Self {
            method,
            path: "/mcp".to_owned(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Asks for `path` instead of `/mcp`.
    pub fn path(mut self, path: &str) -> Self {
        path.clone_into(&mut self.path);
        self
    }

    /// Adds a header (after any of the same name).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Replaces every header of this name.
    pub fn set(mut self, name: &str, value: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.header(name, value)
    }

    /// Removes every header of this name.
    pub fn without(mut self, name: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    /// The body (`Content-Length` follows it).
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    fn bytes(&self, addr: impl std::fmt::Display, close: bool) -> Vec<u8> {
        let mut head = format!("{} {} HTTP/1.1\r\n", self.method, self.path);
        if !self
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("host"))
        {
            let _ = write!(head, "Host: {addr}\r\n");
        }
        for (name, value) in &self.headers {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        let _ = write!(head, "Content-Length: {}\r\n", self.body.len());
        if close {
            head.push_str("Connection: close\r\n");
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }

    /// Sends the request on a fresh connection and reads the whole answer.
    pub async fn send(self, addr: SocketAddr) -> Answer {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(&self.bytes(addr, true)).await.unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.unwrap();
        parse(&raw)
    }

    /// Sends the request on a fresh connection to the Unix socket at
    /// `socket` (`Host: localhost` unless set) and reads the whole answer.
    pub async fn send_unix(self, socket: &Path) -> Answer {
        let mut stream = UnixStream::connect(socket).await.unwrap();
        stream
            .write_all(&self.bytes("localhost", true))
            .await
            .unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.unwrap();
        parse(&raw)
    }

    /// Sends the request and leaves the connection open, unread.
    pub async fn start(self, addr: SocketAddr) -> TcpStream {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(&self.bytes(addr, false)).await.unwrap();
        stream
    }
}

fn parse(raw: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP answer: {text:?}"));
    let (status, headers) = parse_head(head);
    let body = if headers
        .get("transfer-encoding")
        .is_some_and(|t| t == "chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Answer {
        status,
        headers,
        body,
    }
}

/// The status and the headers of an answer's head (without its blank line).
fn parse_head(head: &str) -> (u16, BTreeMap<String, String>) {
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let mut headers = BTreeMap::<String, String>::new();
    for line in lines {
        let (name, value) = line.split_once(':').unwrap();
        headers
            .entry(name.to_ascii_lowercase())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(value.trim());
            })
            .or_insert_with(|| value.trim().to_owned());
    }
    (status, headers)
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n").unwrap();
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
}

/// An event stream being read as it comes (a `GET /mcp`, or a POST
/// answered `text/event-stream`): the answer's head, then its events.
pub struct Events {
    stream: Box<dyn Io>,
    /// What was read and not yet de-chunked.
    raw: Vec<u8>,
    /// The de-chunked body not yet split into events.
    body: String,
    ended: bool,
    /// The status code.
    pub status: u16,
    /// Header names lowercased; repeated headers joined with ", ".
    pub headers: BTreeMap<String, String>,
}

/// How long a read of an event stream waits for the server: generous.
const EVENT_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

impl Events {
    /// Sends `req` and reads the answer's head.
    pub async fn open(req: Req, addr: SocketAddr) -> Self {
        Self::read_head(Box::new(req.start(addr).await)).await
    }

    /// Sends `req` to the Unix socket at `socket` (`Host: localhost`
    /// unless set) and reads the answer's head.
    pub async fn open_unix(req: Req, socket: &Path) -> Self {
        let mut stream = UnixStream::connect(socket).await.unwrap();
        stream
            .write_all(&req.bytes("localhost", false))
            .await
            .unwrap();
        Self::read_head(Box::new(stream)).await
    }

    async fn read_head(stream: Box<dyn Io>) -> Self {
        let mut events = Self {
            stream,
            raw: Vec::new(),
            body: String::new(),
            ended: false,
            status: 0,
            headers: BTreeMap::new(),
        };
        let head_end = loop {
            if let Some(at) = events.raw.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            assert!(events.read().await, "closed before the answer's head");
        };
        let head: Vec<u8> = events.raw.drain(..head_end).collect();
        let head = String::from_utf8_lossy(&head[..head_end - 4]).into_owned();
        (events.status, events.headers) = parse_head(&head);
        events
    }

    /// Reads more; `false` when the server closed the connection.
    async fn read(&mut self) -> bool {
        let mut buf = [0; 8192];
        let n = tokio::time::timeout(EVENT_WAIT, self.stream.read(&mut buf))
            .await
            .expect("the event stream sent nothing within 30 s")
            .unwrap_or(0);
        self.raw.extend_from_slice(&buf[..n]);
        n > 0
    }

    /// Moves the complete chunks read into the body; `true` at the last one.
    fn dechunk(&mut self) -> bool {
        loop {
            let Some(line) = self.raw.windows(2).position(|w| w == b"\r\n") else {
                return false;
            };
            let size = std::str::from_utf8(&self.raw[..line]).unwrap();
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            if self.raw.len() < line + 2 + size + 2 {
                return false;
            }
            let chunk = &self.raw[line + 2..line + 2 + size];
            self.body.push_str(std::str::from_utf8(chunk).unwrap());
            self.raw.drain(..line + 2 + size + 2);
            if size == 0 {
                return true;
            }
        }
    }

    /// The next event's `data` (the JSON-RPC message), or `None` when the
    /// stream ended (its last chunk, or the connection closed).
    pub async fn next(&mut self) -> Option<String> {
        loop {
            if let Some(at) = self.body.find("\n\n") {
                let event: String = self.body.drain(..at + 2).collect();
                let data = event
                    .lines()
                    .filter_map(|line| line.strip_prefix("data: "))
                    .collect::<Vec<_>>()
                    .join("\n");
                return Some(data);
            }
            if self.ended {
                return None;
            }
            self.ended = self.dechunk();
            if !self.ended && !self.body.contains("\n\n") && !self.read().await {
                self.ended = true;
            }
        }
    }

    /// The next event's data as JSON; panics when the stream ended.
    pub async fn next_json(&mut self) -> serde_json::Value {
        let data = self.next().await.expect("the event stream ended");
        serde_json::from_str(&data).unwrap_or_else(|err| panic!("not JSON ({err}): {data:?}"))
    }
}
