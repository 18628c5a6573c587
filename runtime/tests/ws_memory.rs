//! The WebSocket wire over an in-memory stream (`tokio::io::duplex`): the
//! upgrade, its refusals, frames and shutdown, with no socket.

mod common;

use std::time::Duration;

use common::{INIT, INIT_RESULT, INITIALIZED, call, server, text_result};
use futures_util::{SinkExt as _, StreamExt as _};
use ide_mcp_runtime::transport::ws::stream::Upgrader;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

const TOKEN: &str = "0123456789abcdef0123456789abcdef";
const PORT: u16 = 4242;

/// A server on one end of a duplex; the other end for the client.
fn serve_memory(stop: Option<watch::Receiver<bool>>) -> (DuplexStream, JoinHandle<()>) {
    let (client, server_end) = tokio::io::duplex(64 * 1024);
    let server = server();
    let task = tokio::spawn(async move {
        let upgrader = Upgrader::new(TOKEN.to_owned(), PORT);
        server
            .serve_ws_stream(server_end, &upgrader, stop)
            .await
            .unwrap();
    });
    (client, task)
}

async fn upgraded(io: DuplexStream) -> WebSocketStream<DuplexStream> {
    let mut request = format!("ws://127.0.0.1:{PORT}/")
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("x-claude-code-ide-authorization", TOKEN.parse().unwrap());
    request
        .headers_mut()
        .insert("sec-websocket-protocol", "mcp".parse().unwrap());
    let (ws, response) = tokio_tungstenite::client_async(request, io).await.unwrap();
    assert_eq!(response.headers()["sec-websocket-protocol"], "mcp");
    ws
}

async fn ask(ws: &mut WebSocketStream<DuplexStream>, text: &str) -> String {
    ws.send(Message::text(text)).await.unwrap();
    let answer = tokio::time::timeout(Duration::from_mins(1), ws.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    answer.into_text().unwrap().as_str().to_owned()
}

#[tokio::test]
async fn a_session_over_a_duplex_and_a_clean_shutdown() {
    let (stop_tx, stop) = watch::channel(false);
    let (io, task) = serve_memory(Some(stop));
    let mut ws = upgraded(io).await;
    assert_eq!(ask(&mut ws, INIT).await, INIT_RESULT);
    ws.send(Message::text(INITIALIZED)).await.unwrap();
    assert_eq!(
        ask(&mut ws, &call(1, "echo", r#"{"text":"in memory"}"#)).await,
        text_result(1, r#""in memory""#)
    );
    stop_tx.send_replace(true);
    match ws.next().await {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(frame.code, CloseCode::Away),
        other => panic!("expected a close frame, got {other:?}"),
    }
    drop(ws);
    task.await.unwrap();
}

#[tokio::test]
async fn refusals_over_a_duplex_are_complete_responses() {
    for (request, status) in [
        (
            "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".to_owned(),
            "426",
        ),
        (
            format!(
                "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
                 Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
                 X-Claude-Code-Ide-Authorization: {}\r\n\r\n",
                "f".repeat(32)
            ),
            "401",
        ),
        (
            "GET / HTTP/1.1\r\nHost: localhost:1\r\n\r\n".to_owned(),
            "403",
        ),
    ] {
        let (mut io, task) = serve_memory(None);
        io.write_all(request.as_bytes()).await.unwrap();
        // Our side is done: the server stops draining input at once.
        io.shutdown().await.unwrap();
        let mut response = String::new();
        io.read_to_string(&mut response).await.unwrap();
        assert!(
            response.starts_with(&format!("HTTP/1.1 {status} ")),
            "{response}"
        );
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("\r\nContent-Length: {}\r\n", body.len())));
        task.await.unwrap();
    }
}

#[tokio::test]
async fn a_binary_frame_closes_with_1003() {
    let (io, task) = serve_memory(None);
    let mut ws = upgraded(io).await;
    ws.send(Message::binary(b"{}".to_vec())).await.unwrap();
    match ws.next().await {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(frame.code, CloseCode::Unsupported),
        other => panic!("expected a close frame, got {other:?}"),
    }
    drop(ws);
    task.await.unwrap();
}
