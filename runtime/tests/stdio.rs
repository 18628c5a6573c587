//! Newline-delimited JSON-RPC over byte streams (`serve_lines`, as `serve_stdio` uses it).

mod common;

use common::{INIT, INIT_RESULT, INITIALIZED, call, server, text_result};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

#[tokio::test]
async fn lines_in_lines_out_and_eof_ends_cleanly() {
    let (client, server_end) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    let serving =
        tokio::spawn(async move { server().serve_lines(server_read, server_write).await });
    let (client_read, mut client_write) = tokio::io::split(client);
    let input = format!(
        "{INIT}\r\n\n{INITIALIZED}\n{}\n{{bad\n{}\n{}",
        call(1, "sleep", r#"{"ms":50,"tag":"late"}"#),
        call(2, "echo", r#"{"text":"a\nb"}"#),
        // The last line has no newline: it still counts at EOF.
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    );
    client_write.write_all(input.as_bytes()).await.unwrap();
    client_write.shutdown().await.unwrap();
    let mut lines = BufReader::new(client_read).lines();
    let mut answers = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        answers.push(line);
    }
    assert_eq!(
        answers,
        [
            INIT_RESULT.to_owned(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"invalid JSON: key must be a string at line 1 column 2"}}"#.to_owned(),
            text_result(2, r#""a\nb""#),
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#.to_owned(),
            text_result(1, r#""late""#),
        ]
    );
    serving.await.unwrap().unwrap();
}

#[tokio::test]
async fn an_overlong_line_is_refused_and_the_next_one_served() {
    let (client, server_end) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_end);
    let serving =
        tokio::spawn(async move { server().serve_lines(server_read, server_write).await });
    let (client_read, mut client_write) = tokio::io::split(client);
    let writer = tokio::spawn(async move {
        client_write.write_all(INIT.as_bytes()).await.unwrap();
        client_write.write_all(b"\n\"").await.unwrap();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..17 {
            client_write.write_all(&chunk).await.unwrap();
        }
        client_write
            .write_all(b"\"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
            .await
            .unwrap();
        client_write.shutdown().await.unwrap();
    });
    let mut lines = BufReader::new(client_read).lines();
    let mut answers = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        answers.push(line);
    }
    writer.await.unwrap();
    assert_eq!(
        answers,
        [
            INIT_RESULT,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message longer than the limit of 16777216 bytes; ignored"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        ]
    );
    serving.await.unwrap().unwrap();
}
