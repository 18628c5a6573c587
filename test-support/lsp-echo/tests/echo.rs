//! `lsp-echo` over its pipes: a request is answered with its params, a
//! scripted method with its answer or error (those with a needle first),
//! notifications with nothing, and `exit` ends it. (Also what makes
//! `cargo test --workspace` build the binary the other crates' tests run.)

use std::io::Write as _;
use std::process::{Command, Stdio};

use ide_mcp_lsp::framing::{Frame, SyncMessageReader};
use ide_mcp_test_support::lsp::frame;

/// The bodies of the framed messages in `bytes`, in order.
fn bodies(bytes: &[u8]) -> Vec<String> {
    let mut reader = SyncMessageReader::new(bytes);
    let mut out = Vec::new();
    while let Some(frame) = reader.next_frame().unwrap() {
        let Frame::Message(message) = frame else {
            panic!("bytes that are no message: {frame:?}");
        };
        out.push(String::from_utf8(message.body().to_vec()).unwrap());
    }
    out
}

/// Runs `lsp-echo` with `args` on `input`, to its end; its output's bodies.
fn run(args: &[&str], input: &[&str]) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lsp-echo"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for body in input {
        stdin.write_all(&frame(body)).unwrap();
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    bodies(&output.stdout)
}

#[test]
fn requests_are_answered_with_their_params_until_exit() {
    let out = run(
        &[],
        &[
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,2]}}"#,
            r#"{"jsonrpc":"2.0","method":"n","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"p"}"#,
            r#"{"jsonrpc":"2.0","method":"exit"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"after-exit","params":1}"#,
        ],
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":[1,2]}}"#,
            r#"{"jsonrpc":"2.0","id":"x","result":null}"#,
        ]
    );
}

#[test]
fn scripted_answers_errors_and_silences() {
    let out = run(
        &[
            "--answer",
            "m=[1]",
            "--answer",
            r#"m|"line":3}=[3]"#,
            "--error",
            r#"e={"code":-32801,"message":"gone"}"#,
            "--silent",
            "s",
        ],
        &[
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"line":2}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"m","params":{"line":3}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"e","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"s","params":{}}"#,
        ],
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"result":[1]}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":[3]}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32801,"message":"gone"}}"#,
        ]
    );
}
