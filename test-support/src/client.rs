//! The WebSocket MCP client: connect, authenticate, exchange messages.

use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::error::ProtocolError;
use tokio_tungstenite::tungstenite::http::{HeaderValue, Request};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A WebSocket client connection.
pub type Client = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long any single wait may take before the test fails: the bound of
/// a hang, not of a slow answer on a loaded machine.
pub const WAIT: Duration = Duration::from_mins(1);

/// The `initialize` request Claude Code sends (protocol 2025-11-25).
pub const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{}},"clientInfo":{"name":"claude-code","version":"2.1.0"}}}"#;

/// `notifications/initialized`.
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The upgrade request of the Claude Code CLI: `ws://127.0.0.1:<port>/`
/// with the auth token header.
pub fn upgrade_request(port: u16, token: &str) -> Request<()> {
    let mut request = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .expect("a valid URL");
    request.headers_mut().insert(
        "X-Claude-Code-Ide-Authorization",
        HeaderValue::from_str(token).expect("a valid header value"),
    );
    request
}

/// Connects as the CLI does, to `port` with `token`; panics unless the
/// upgrade succeeds within [`WAIT`].
pub async fn connect(port: u16, token: &str) -> Client {
    connect_with(upgrade_request(port, token)).await
}

/// Connects with a prepared upgrade request; panics unless the upgrade
/// succeeds within [`WAIT`].
pub async fn connect_with(request: Request<()>) -> Client {
    tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(request))
        .await
        .expect("the upgrade within the bound")
        .expect("the upgrade succeeds")
        .0
}

/// Sends one text message.
pub async fn send(client: &mut Client, text: &str) {
    client
        .send(Message::text(text))
        .await
        .expect("the message is sent");
}

/// The next text message within `limit`; `None` on a timeout or when the
/// connection ends. Pings and pongs are skipped.
pub async fn recv_within(client: &mut Client, limit: Duration) -> Option<String> {
    loop {
        let message = tokio::time::timeout(limit, client.next()).await.ok()??;
        match message.expect("a message") {
            Message::Text(text) => return Some(text.as_str().to_owned()),
            Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("unexpected message {other:?}"),
        }
    }
}

/// The next text message; panics on a close, an error or a timeout.
pub async fn recv(client: &mut Client) -> String {
    recv_within(client, WAIT)
        .await
        .expect("an answer within the bound, on an open connection")
}

/// Sends `text` and returns the next text message.
pub async fn ask(client: &mut Client, text: &str) -> String {
    send(client, text).await;
    recv(client).await
}

/// The close code the server closes with; `None` for a close without a frame.
pub async fn close_code(client: &mut Client) -> Option<CloseCode> {
    loop {
        match tokio::time::timeout(WAIT, client.next())
            .await
            .expect("the close within the bound")
        {
            Some(Ok(Message::Close(frame))) => return frame.map(|f| f.code),
            Some(Ok(_)) => {}
            // Closed without a close frame: the peer process is gone.
            Some(Err(
                WsError::ConnectionClosed
                | WsError::AlreadyClosed
                | WsError::Io(_)
                | WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake),
            ))
            | None => return None,
            Some(Err(err)) => panic!("no close frame: {err}"),
        }
    }
}

/// Sends [`INIT`], checks the negotiated version (2025-11-25), then
/// [`INITIALIZED`]; the `initialize` answer.
pub async fn handshake(client: &mut Client) -> Value {
    let answer: Value = serde_json::from_str(&ask(client, INIT).await).expect("JSON");
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-11-25",
        "{answer}"
    );
    send(client, INITIALIZED).await;
    answer
}

/// Reads `stream` until the peer closes it (or a read fails), for `limit`
/// at most in all: the bytes that came, and whether it closed in time.
pub async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (Vec<u8>, bool) {
    let mut read = Vec::new();
    let reading = async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => read.extend_from_slice(&buf[..n]),
            }
        }
    };
    let closed = tokio::time::timeout(limit, reading).await.is_ok();
    (read, closed)
}

/// A JSON-RPC client over one connection: numbers its requests and keeps
/// the notifications it reads past while waiting for an answer.
pub struct McpClient {
    /// The connection.
    pub ws: Client,
    next_id: u64,
    /// Every notification read past so far, oldest first.
    pub notifications: Vec<Value>,
    /// How long one answer may take.
    pub answer_within: Duration,
}

impl McpClient {
    /// A client over `ws`; answers are awaited for [`WAIT`].
    pub fn new(ws: Client) -> Self {
        Self {
            ws,
            next_id: 1,
            notifications: Vec::new(),
            answer_within: WAIT,
        }
    }

    /// The [`handshake`] on this connection.
    pub async fn initialize(&mut self) -> Value {
        handshake(&mut self.ws).await
    }

    /// Sends a notification without params.
    pub async fn notify(&mut self, method: &str) {
        let message = json!({"jsonrpc": "2.0", "method": method});
        send(&mut self.ws, &message.to_string()).await;
    }

    /// Sends a request and returns its `result`; panics on an error answer.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        send(&mut self.ws, &message.to_string()).await;
        loop {
            let message = self
                .next_message(self.answer_within)
                .await
                .unwrap_or_else(|| panic!("no answer to {method}"));
            if message["id"] == json!(id) {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
            self.notifications.push(message);
        }
    }

    /// Calls a tool and parses the JSON text of its result; panics on an
    /// `isError` result.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        tool_answer(&result)
    }

    /// The next text message within `limit`, parsed; `None` on a timeout,
    /// a close or a failed connection. Other frames are skipped.
    pub async fn next_message(&mut self, limit: Duration) -> Option<Value> {
        loop {
            match tokio::time::timeout(limit, self.ws.next()).await.ok()?? {
                Ok(Message::Text(text)) => return Some(serde_json::from_str(&text).expect("JSON")),
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }
}

/// The JSON text of a `CallToolResult`, parsed: what [`McpClient::call`]
/// returns. Panics on an `isError` result.
pub fn tool_answer(result: &Value) -> Value {
    assert_ne!(result["isError"], json!(true), "{result}");
    serde_json::from_str(result["content"][0]["text"].as_str().expect("text")).expect("JSON text")
}
