//! A JSON-RPC client over the IDE WebSocket, as the CLI connects.

use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::http::{HeaderValue, Request};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::ANSWER;

pub(crate) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub(crate) fn ws_request(port: u16, token: &str) -> Request<()> {
    let mut request = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "X-Claude-Code-IDE-Authorization",
        HeaderValue::from_str(token).unwrap(),
    );
    request
}

/// A JSON-RPC client over the WebSocket that keeps the notifications it
/// reads past.
pub(crate) struct WsClient {
    pub(crate) ws: Ws,
    pub(crate) next_id: u64,
    pub(crate) notifications: Vec<Value>,
}

impl WsClient {
    pub(crate) async fn next_message(&mut self, limit: Duration) -> Option<Value> {
        loop {
            let message = tokio::time::timeout(limit, self.ws.next()).await.ok()??;
            if let Message::Text(text) = message.unwrap() {
                return Some(serde_json::from_str(&text).unwrap());
            }
        }
    }

    pub(crate) async fn notify(&mut self, method: &str) {
        let message = json!({"jsonrpc": "2.0", "method": method});
        self.ws
            .send(Message::text(message.to_string()))
            .await
            .unwrap();
    }

    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.ws
            .send(Message::text(message.to_string()))
            .await
            .unwrap();
        loop {
            let message = self
                .next_message(ANSWER)
                .await
                .unwrap_or_else(|| panic!("no answer to {method}"));
            if message["id"] == json!(id) {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
            self.notifications.push(message);
        }
    }

    /// Calls a tool and parses the JSON text of its result.
    pub(crate) async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert_ne!(result["isError"], json!(true), "{result}");
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
    }
}

/// Connects with `token` and runs the MCP handshake.
pub(crate) async fn connect(port: u16, token: &str) -> WsClient {
    let (ws, _) = tokio_tungstenite::connect_async(ws_request(port, token))
        .await
        .unwrap();
    let mut client = WsClient {
        ws,
        next_id: 0,
        notifications: Vec::new(),
    };
    client
        .request("initialize", super::initialize_params())
        .await;
    client.notify("notifications/initialized").await;
    client
}
