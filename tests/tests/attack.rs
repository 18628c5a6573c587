//! The attack suite: what a web page, another local user or a guessing
//! client can do to the IDE WebSocket (and, with duplicated headers, to the
//! Streamable HTTP transport and to the faces of Gemini CLI and the Copilot
//! CLI built on it: `attack/gate_table.rs`), through a real listener and
//! raw bytes.
//!
//! `runtime/tests/ws.rs` already checks the basic refusals through a
//! WebSocket client; this suite sends hand-written HTTP so that it can also
//! try what a client library would never send (duplicate headers, no `Host`,
//! the token in odd places), asserts that a refused request never gets a
//! single MCP byte, and checks the lockfile, the token and the bound address
//! across many starts.

#[path = "attack/gate_table.rs"]
mod gate_table;
mod support;

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ide_mcp_runtime::lockfile::LockfileContent;
use ide_mcp_runtime::{HttpOptions, WsOptions};
use support::{INIT, WAIT, raw_exchange, read_server, serve};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// A WebSocket upgrade request to `port` with these extra header lines (each
/// ending in `\r\n`), and `Host: 127.0.0.1:<port>` unless `host` says otherwise.
fn upgrade(port: u16, host: Option<&str>, extra: &str) -> Vec<u8> {
    let host = match host {
        Some("") => String::new(),
        Some(h) => format!("Host: {h}\r\n"),
        None => format!("Host: 127.0.0.1:{port}\r\n"),
    };
    format!(
        "GET / HTTP/1.1\r\n{host}Upgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
    )
    .into_bytes()
}

fn auth(token: &str) -> String {
    format!("X-Claude-Code-Ide-Authorization: {token}\r\n")
}

/// Asserts that the server answered `request` with `status`, closed the
/// connection, and sent nothing but that HTTP response: no upgrade, no MCP.
/// Returns the status line and the body.
async fn assert_refused(port: u16, request: &[u8], status: u16, case: &str) -> (String, String) {
    let (response, closed) = raw_exchange(port, request).await;
    let text = String::from_utf8_lossy(&response);
    assert!(
        closed,
        "{case}: the server keeps the connection open: {text:?}"
    );
    assert!(
        text.starts_with(&format!("HTTP/1.1 {status} ")),
        "{case}: expected {status}, got {text:?}"
    );
    let (head, body) = text.split_once("\r\n\r\n").expect("a complete response");
    assert!(
        !head.to_ascii_lowercase().contains("sec-websocket-accept"),
        "{case}: {head}"
    );
    assert!(!body.contains("jsonrpc"), "{case}: {body:?}");
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .expect("a Content-Length");
    assert_eq!(body.len(), length, "{case}: nothing after the body");
    let status_line = head.lines().next().unwrap_or_default();
    (status_line.to_owned(), body.to_owned())
}

/// Sends `request` and returns the status line of the answer, leaving a
/// successful upgrade open only as long as it takes to read the head.
async fn status_of(port: u16, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    tokio::time::timeout(WAIT, async {
        while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).await.unwrap() == 1 {
            head.push(byte[0]);
        }
    })
    .await
    .unwrap();
    String::from_utf8_lossy(&head)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn wrong_missing_or_misplaced_tokens_get_401_and_no_mcp_bytes() {
    let server = read_server();
    let (handle, _dir) = serve(&server, WsOptions::default()).await;
    let port = handle.port();
    let token = handle.auth_token().to_owned();
    let mut first = token.clone();
    let last = first.pop().unwrap();
    let flipped = format!("{first}{}", if last == '0' { '1' } else { '0' });
    let cases: Vec<(&str, String)> = vec![
        ("no token", String::new()),
        ("empty token", auth("")),
        ("wrong token", auth("00000000-0000-4000-8000-000000000000")),
        ("upper-case token", auth(&token.to_uppercase())),
        ("trailing byte", auth(&format!("{token}0"))),
        ("leading byte", auth(&format!("0{token}"))),
        ("one byte short", auth(&first)),
        ("last byte changed", auth(&flipped)),
        ("token twice", auth(&format!("{token}{token}"))),
        ("token in a list", auth(&format!("{token}, {token}"))),
        (
            "Authorization: Bearer",
            format!("Authorization: Bearer {token}\r\n"),
        ),
        ("Cookie", format!("Cookie: authToken={token}\r\n")),
        (
            "subprotocol",
            format!("Sec-WebSocket-Protocol: mcp, {token}\r\n"),
        ),
        (
            "misspelt header",
            format!("X-Claude-Code-Ide-Authorisation: {token}\r\n"),
        ),
        (
            "header name with a suffix",
            format!("X-Claude-Code-Ide-Authorization-Token: {token}\r\n"),
        ),
    ];
    for (case, headers) in &cases {
        assert_refused(port, &upgrade(port, None, headers), 401, case).await;
    }
    // In the query string, or in the path.
    let in_query = format!(
        "GET /?authToken={token}&x-claude-code-ide-authorization={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    assert_refused(port, in_query.as_bytes(), 401, "query string").await;
    let in_path = format!(
        "GET /{token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    assert_refused(port, in_path.as_bytes(), 401, "path").await;
    // A refused client that talks MCP anyway gets no MCP answer: the 401, or
    // (its extra bytes unread when the socket closes) a reset before it.
    let mut after = upgrade(port, None, "");
    after.extend_from_slice(INIT.as_bytes());
    let (response, closed) = raw_exchange(port, &after).await;
    let text = String::from_utf8_lossy(&response);
    assert!(closed);
    assert!(
        text.is_empty() || text.starts_with("HTTP/1.1 401 "),
        "{text:?}"
    );
    assert!(
        !text.contains("jsonrpc") && !text.contains(" 101 "),
        "{text:?}"
    );

    // The control: the right token, its header name in any case, upgrades.
    for name in [
        "X-Claude-Code-Ide-Authorization",
        "x-claude-code-ide-authorization",
        "X-CLAUDE-CODE-IDE-AUTHORIZATION",
    ] {
        let request = upgrade(port, None, &format!("{name}: {token}\r\n"));
        assert_eq!(
            status_of(port, &request).await,
            "HTTP/1.1 101 Switching Protocols",
            "{name}"
        );
    }
}

/// The body of a refused request, after [`assert_refused`] checked the rest.
async fn refusal_body(port: u16, request: &[u8]) -> String {
    let (response, _) = raw_exchange(port, request).await;
    let text = String::from_utf8_lossy(&response);
    text.split_once("\r\n\r\n").unwrap().1.to_owned()
}

#[tokio::test]
async fn requests_that_are_not_upgrades_get_a_complete_refusal_saying_why() {
    let server = read_server();
    let (handle, _dir) = serve(&server, WsOptions::default()).await;
    let port = handle.port();
    let host = format!("Host: 127.0.0.1:{port}\r\n");
    let token = auth(handle.auth_token());
    // What a browser's address bar or `curl` sends: no upgrade.
    let curl = format!("GET / HTTP/1.1\r\n{host}User-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n");
    let version_8 = String::from_utf8(upgrade(port, None, &token))
        .unwrap()
        .replace("Version: 13", "Version: 8");
    let keyless = String::from_utf8(upgrade(port, None, &token))
        .unwrap()
        .replace("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", "");
    let cases: Vec<(&str, String, u16)> = vec![
        ("curl", curl.clone(), 426),
        (
            "curl with the token",
            format!("GET / HTTP/1.1\r\n{host}{token}\r\n"),
            426,
        ),
        ("HTTP/1.0", format!("GET / HTTP/1.0\r\n{host}\r\n"), 426),
        (
            "upgrade to h2c",
            format!("GET / HTTP/1.1\r\n{host}Connection: Upgrade\r\nUpgrade: h2c\r\n\r\n"),
            426,
        ),
        (
            "Upgrade without Connection",
            format!("GET / HTTP/1.1\r\n{host}Upgrade: websocket\r\n\r\n"),
            426,
        ),
        ("WebSocket version 8", version_8, 426),
        ("no Sec-WebSocket-Key", keyless, 400),
        (
            "POST",
            format!("POST / HTTP/1.1\r\n{host}Content-Length: 2\r\n\r\n{{}}"),
            405,
        ),
        ("OPTIONS", format!("OPTIONS * HTTP/1.1\r\n{host}\r\n"), 405),
        (
            "not HTTP",
            "\x16\x03\x01\x02\x00\x01\x00\x01\x7c\x03\x03\r\n\r\n".to_owned(),
            400,
        ),
        (
            "a JSON-RPC message",
            format!("{}\r\n\r\n", support::INIT),
            400,
        ),
        (
            "a head over 16 KiB",
            format!(
                "GET / HTTP/1.1\r\n{host}X-Pad: {}\r\n\r\n",
                "a".repeat(17 << 10)
            ),
            431,
        ),
        (
            "65 headers",
            format!("GET / HTTP/1.1\r\n{host}{}\r\n", "X-A: b\r\n".repeat(64)),
            431,
        ),
    ];
    for (case, request, status) in &cases {
        assert_refused(port, request.as_bytes(), *status, case).await;
    }
    // The body says why, in a line a person reads.
    assert_eq!(
        refusal_body(port, curl.as_bytes()).await,
        "this is a WebSocket endpoint (the Claude Code IDE protocol): connect with a WebSocket client\n"
    );
    let (response, _) = raw_exchange(port, curl.as_bytes()).await;
    assert!(
        String::from_utf8_lossy(&response).contains("\r\nUpgrade: websocket\r\n"),
        "426 names the protocol to upgrade to"
    );
    let (response, _) = raw_exchange(port, cases[7].1.as_bytes()).await;
    assert!(String::from_utf8_lossy(&response).contains("\r\nAllow: GET\r\n"));
    // The server still upgrades a proper request afterwards.
    let mut client = support::initialized(&handle).await;
    support::assert_alive(&mut client, 1).await;
}

#[tokio::test]
async fn any_origin_and_any_foreign_host_get_403() {
    let server = read_server();
    let (handle, _dir) = serve(&server, WsOptions::default()).await;
    let port = handle.port();
    let good = auth(handle.auth_token());
    for origin in [
        "http://evil.example".to_owned(),
        "null".to_owned(),
        String::new(),
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        "file://".to_owned(),
        "vscode-webview://abc".to_owned(),
    ] {
        for name in ["Origin", "origin", "ORIGIN"] {
            let headers = format!("{good}{name}: {origin}\r\n");
            let case = format!("{name}: {origin:?}");
            assert_refused(port, &upgrade(port, None, &headers), 403, &case).await;
        }
    }
    // An Origin refuses even without a token: no token oracle for browsers.
    assert_refused(
        port,
        &upgrade(port, None, "Origin: http://evil.example\r\n"),
        403,
        "origin, no token",
    )
    .await;

    let foreign = [
        "evil.example".to_owned(),
        format!("evil.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        format!("localhost.evil.example:{port}"),
        format!("localhost.:{port}"),
        format!("127.0.0.2:{port}"),
        format!("0.0.0.0:{port}"),
        format!("127.1:{port}"),
        format!("2130706433:{port}"),
        format!("[::ffff:127.0.0.1]:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        format!("127.0.0.1:{port}:{port}"),
        format!("user@127.0.0.1:{port}"),
        ":".to_owned(),
        "\"\"".to_owned(),
    ];
    for host in &foreign {
        let case = format!("Host: {host}");
        assert_refused(port, &upgrade(port, Some(host), &good), 403, &case).await;
    }
    // No Host at all (HTTP/1.1 requires one), and two of them.
    assert_refused(port, &upgrade(port, Some(""), &good), 403, "no Host").await;
    for (first, second) in [
        (format!("127.0.0.1:{port}"), "evil.example".to_owned()),
        ("evil.example".to_owned(), format!("127.0.0.1:{port}")),
        (format!("127.0.0.1:{port}"), format!("127.0.0.1:{port}")),
    ] {
        let case = format!("Host: {first} + Host: {second}");
        let headers = format!("Host: {second}\r\n{good}");
        assert_refused(port, &upgrade(port, Some(&first), &headers), 403, &case).await;
    }
    // The hosts a local client may name.
    for host in [
        format!("127.0.0.1:{port}"),
        "127.0.0.1".to_owned(),
        format!("localhost:{port}"),
        format!("LOCALHOST:{port}"),
        "localhost".to_owned(),
        format!("[::1]:{port}"),
        "[::1]".to_owned(),
    ] {
        assert_eq!(
            status_of(port, &upgrade(port, Some(&host), &good)).await,
            "HTTP/1.1 101 Switching Protocols",
            "{host}"
        );
    }
}

#[tokio::test]
async fn a_header_the_upgrade_check_reads_is_refused_when_it_comes_twice() {
    let server = read_server();
    let (handle, _dir) = serve(&server, WsOptions::default()).await;
    let port = handle.port();
    let token = handle.auth_token().to_owned();
    let mut wrong = token.clone();
    let last = wrong.pop().unwrap();
    wrong.push(if last == '0' { '1' } else { '0' });
    let (right, wrong) = (auth(&token), auth(&wrong));
    let lower = format!("x-claude-code-ide-authorization: {token}\r\n");
    let own_origin = format!("Origin: http://127.0.0.1:{port}\r\n");
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "the right token, then a wrong one",
            format!("{right}{wrong}"),
            "HTTP/1.1 401 Unauthorized",
            "duplicate `x-claude-code-ide-authorization` header",
        ),
        (
            "a wrong token, then the right one",
            format!("{wrong}{right}"),
            "HTTP/1.1 401 Unauthorized",
            "duplicate `x-claude-code-ide-authorization` header",
        ),
        (
            "the right token twice",
            format!("{right}{right}"),
            "HTTP/1.1 401 Unauthorized",
            "duplicate `x-claude-code-ide-authorization` header",
        ),
        (
            "the right token twice, the names in two cases",
            format!("{right}{lower}"),
            "HTTP/1.1 401 Unauthorized",
            "duplicate `x-claude-code-ide-authorization` header",
        ),
        (
            "Host twice",
            format!("Host: 127.0.0.1:{port}\r\n{right}"),
            "HTTP/1.1 403 Forbidden",
            "duplicate `Host` header",
        ),
        (
            "Origin twice",
            format!("{right}{own_origin}{own_origin}"),
            "HTTP/1.1 403 Forbidden",
            "duplicate `Origin` header",
        ),
        (
            "Upgrade twice",
            format!("{right}Upgrade: websocket\r\n"),
            "HTTP/1.1 426 Upgrade Required",
            "duplicate `Upgrade` header",
        ),
        (
            "Connection twice",
            format!("{right}Connection: Upgrade\r\n"),
            "HTTP/1.1 426 Upgrade Required",
            "duplicate `Connection` header",
        ),
        (
            "Sec-WebSocket-Version twice",
            format!("{right}Sec-WebSocket-Version: 13\r\n"),
            "HTTP/1.1 426 Upgrade Required",
            "duplicate `Sec-WebSocket-Version` header",
        ),
        (
            "Sec-WebSocket-Key twice",
            format!("{right}Sec-WebSocket-Key: AQIDBAUGBwgJCgsMDQ4PEA==\r\n"),
            "HTTP/1.1 400 Bad Request",
            "duplicate `Sec-WebSocket-Key` header",
        ),
    ];
    for (case, headers, status_line, message) in &cases {
        let status = status_line[9..12].parse().unwrap();
        let request = upgrade(port, None, headers);
        assert_eq!(
            assert_refused(port, &request, status, case).await,
            ((*status_line).to_owned(), format!("{message}\n")),
            "{case}"
        );
    }
    // The control: the right token once upgrades.
    assert_eq!(
        status_of(port, &upgrade(port, None, &right)).await,
        "HTTP/1.1 101 Switching Protocols"
    );
}

/// A `ping` posted to the HTTP transport on `port` with these header lines
/// beside `Host`, `Content-Type` and `Accept`; the server closes after it.
fn http_ping(port: u16, headers: &str) -> Vec<u8> {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{headers}Connection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The status line, the `WWW-Authenticate` header and the body of the HTTP
/// transport's answer to `request`, after checking the server closed.
async fn http_answer(port: u16, request: &[u8], case: &str) -> (String, Option<String>, String) {
    let (response, closed) = raw_exchange(port, request).await;
    http_parts(&response, closed, case)
}

/// The status line, the `WWW-Authenticate` header and the body of an HTTP
/// answer, after checking the server `closed` the connection.
fn http_parts(response: &[u8], closed: bool, case: &str) -> (String, Option<String>, String) {
    let text = String::from_utf8_lossy(response);
    assert!(
        closed,
        "{case}: the server keeps the connection open: {text:?}"
    );
    let (head, body) = text.split_once("\r\n\r\n").expect("a complete response");
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or_default().to_owned();
    let challenge = lines.find_map(|l| {
        l.to_ascii_lowercase()
            .starts_with("www-authenticate:")
            .then(|| l["www-authenticate:".len()..].trim().to_owned())
    });
    (status_line, challenge, body.to_owned())
}

#[tokio::test]
async fn a_header_the_http_gate_reads_is_refused_when_it_comes_twice() {
    let server = read_server();
    let handle = server.serve_http(HttpOptions::default()).await.unwrap();
    let port = handle.local_addr().port();
    let token = handle.auth_token().to_owned();
    let mut wrong = token.clone();
    let last = wrong.pop().unwrap();
    wrong.push(if last == '0' { '1' } else { '0' });
    let right = format!("Authorization: Bearer {token}\r\n");
    let wrong = format!("authorization: Bearer {wrong}\r\n");
    let own_origin = format!("Origin: http://127.0.0.1:{port}\r\n");
    let refused = |message: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"{message}"}}}}"#)
    };
    let two_tokens = (
        "HTTP/1.1 401 Unauthorized".to_owned(),
        Some(r#"Bearer realm="ide-mcp", error="invalid_request""#.to_owned()),
        refused("duplicate `Authorization` header"),
    );
    let forbidden = |name: &str| {
        (
            "HTTP/1.1 403 Forbidden".to_owned(),
            None,
            refused(&format!("duplicate `{name}` header")),
        )
    };
    let cases = [
        (
            "the right bearer token, then a wrong one",
            format!("{right}{wrong}"),
            two_tokens.clone(),
        ),
        (
            "a wrong bearer token, then the right one",
            format!("{wrong}{right}"),
            two_tokens.clone(),
        ),
        (
            "the right bearer token twice",
            format!("{right}{right}"),
            two_tokens,
        ),
        (
            "Host twice",
            format!("Host: 127.0.0.1:{port}\r\n{right}"),
            forbidden("Host"),
        ),
        (
            "the server's own Origin twice",
            format!("{own_origin}{own_origin}{right}"),
            forbidden("Origin"),
        ),
        (
            "Mcp-Session-Id twice",
            format!("{right}Mcp-Session-Id: a\r\nMcp-Session-Id: b\r\n"),
            (
                "HTTP/1.1 400 Bad Request".to_owned(),
                None,
                refused("duplicate `Mcp-Session-Id` header"),
            ),
        ),
        (
            "Content-Type twice",
            format!("{right}Content-Type: application/json\r\n"),
            (
                "HTTP/1.1 415 Unsupported Media Type".to_owned(),
                None,
                refused("duplicate `Content-Type` header"),
            ),
        ),
    ];
    for (case, headers, expected) in &cases {
        assert_eq!(
            &http_answer(port, &http_ping(port, headers), case).await,
            expected,
            "{case}"
        );
    }
    // The control: the right token once is served.
    let (status_line, _, body) = http_answer(port, &http_ping(port, &right), "control").await;
    assert_eq!(
        (status_line.as_str(), body.as_str()),
        ("HTTP/1.1 200 OK", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
    );
    handle.shutdown().await;
}

/// The listening sockets of this process's network namespace on `port`:
/// `(local address, is IPv6)` from `/proc/net/tcp{,6}`.
fn listeners_on(port: u16) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    for (file, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
        let Ok(table) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in table.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state)) = (fields.get(1), fields.get(3)) else {
                continue;
            };
            let Some((addr, hex_port)) = local.split_once(':') else {
                continue;
            };
            if *state == "0A" && u16::from_str_radix(hex_port, 16) == Ok(port) {
                found.push((addr.to_owned(), v6));
            }
        }
    }
    found
}

/// This machine's address on the interface of its default route, if any
/// (found without sending a packet).
fn outward_address() -> Option<Ipv4Addr> {
    let socket = std::net::UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    socket.connect(("192.0.2.1", 9)).ok()?;
    match socket.local_addr().ok()?.ip() {
        IpAddr::V4(ip) if !ip.is_loopback() && !ip.is_unspecified() => Some(ip),
        _ => None,
    }
}

#[tokio::test]
async fn the_listener_is_bound_to_127_0_0_1_only() {
    let server = read_server();
    let (handle, _dir) = serve(&server, WsOptions::default()).await;
    let port = handle.port();
    assert_eq!(handle.local_addr().ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
    // The kernel's view: exactly one listener on the port, 127.0.0.1
    // (`0100007F` in /proc's byte order), none on IPv6 or 0.0.0.0.
    assert_eq!(
        listeners_on(port),
        [("0100007F".to_owned(), false)],
        "the only listening socket on {port}"
    );
    // Through another address of this machine, nothing answers.
    if let Some(ip) = outward_address() {
        let attempt = tokio::time::timeout(WAIT, TcpStream::connect((ip, port))).await;
        assert!(
            matches!(attempt, Ok(Err(_))),
            "{ip}:{port} must refuse connections"
        );
    }
    let v6 = tokio::time::timeout(WAIT, TcpStream::connect(("::1", port))).await;
    assert!(
        matches!(v6, Ok(Err(_))),
        "[::1]:{port} must refuse connections"
    );
}

fn mode(path: &Path) -> Option<u32> {
    std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o777)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lockfiles_are_atomic_private_and_carry_a_fresh_strong_token() {
    const STARTS: usize = 40;
    let dir = tempfile::tempdir().unwrap();
    let ide: PathBuf = dir.path().join("ide");
    let server = read_server();

    // A watcher reads the directory as fast as it can while servers start
    // and stop: every lockfile it manages to read is complete JSON and 0600,
    // and every file in the directory (the temporary one included) is 0600.
    let done = Arc::new(AtomicBool::new(false));
    // The lockfiles it has read whole, for the starts to wait on.
    let read_whole = Arc::new(std::sync::Mutex::new(HashSet::new()));
    let watcher = {
        let (ide, done, read_whole) = (ide.clone(), done.clone(), read_whole.clone());
        std::thread::spawn(move || {
            let (mut reads, mut entries) = (0usize, 0usize);
            let mut bad = Vec::new();
            while !done.load(Ordering::Relaxed) {
                let Ok(listing) = std::fs::read_dir(&ide) else {
                    continue;
                };
                if let Some(m) = mode(&ide)
                    && m != 0o700
                {
                    bad.push(format!("directory mode {m:o}"));
                }
                for entry in listing.flatten() {
                    entries += 1;
                    let path = entry.path();
                    // Gone already (removed or renamed) is fine: it was never visible half-made.
                    if let Some(m) = mode(&path)
                        && m != 0o600
                    {
                        bad.push(format!("{} has mode {m:o}", path.display()));
                    }
                    if path.extension().is_some_and(|e| e == "lock")
                        && let Ok(bytes) = std::fs::read(&path)
                    {
                        reads += 1;
                        match serde_json::from_slice::<LockfileContent>(&bytes) {
                            Ok(content) => {
                                read_whole.lock().unwrap().insert(content.auth_token);
                            }
                            Err(_) => bad.push(format!(
                                "partial lockfile: {:?}",
                                String::from_utf8_lossy(&bytes)
                            )),
                        }
                    }
                }
            }
            (reads, entries, bad)
        })
    };

    let mut tokens = Vec::new();
    for _ in 0..STARTS {
        let handle = server
            .serve_ws(WsOptions {
                config_dir: Some(dir.path().to_owned()),
                workspace_folders: vec!["/ws".to_owned()],
                ..WsOptions::default()
            })
            .await
            .unwrap();
        let path = handle.lockfile_path().unwrap().to_owned();
        let content: LockfileContent =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(content.auth_token, handle.auth_token());
        assert_eq!(content.pid, std::process::id());
        assert_eq!(content.transport, "ws");
        assert_eq!(mode(&path), Some(0o600));
        // The watcher has read this one (an event, not a pause a loaded
        // machine could outlast).
        let start = std::time::Instant::now();
        while !read_whole.lock().unwrap().contains(&content.auth_token) {
            assert!(start.elapsed() < WAIT, "the watcher never read {path:?}");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokens.push(content.auth_token);
        handle.shutdown().await;
        assert!(!path.exists(), "the lockfile is removed on shutdown");
    }
    done.store(true, Ordering::Relaxed);
    let (reads, entries, bad) = watcher.join().unwrap();
    assert!(bad.is_empty(), "{bad:#?}");
    assert!(
        reads >= STARTS,
        "the watcher read only {reads} lockfiles ({entries} entries seen)"
    );
    assert_eq!(
        std::fs::read_dir(&ide).unwrap().count(),
        0,
        "nothing is left behind"
    );

    // Fresh per start.
    assert_eq!(tokens.iter().collect::<HashSet<_>>().len(), STARTS);
    // At least 128 random bits: across the starts, at least 128 bits of the
    // decoded token take both values (a fixed or counter-like part would not;
    // a random bit stays constant over 40 draws with probability 2^-39). A
    // UUID v4 (122 random bits) fails this.
    let bits = |t: &str| -> Vec<bool> { token_bits(t) };
    let all: Vec<Vec<bool>> = tokens.iter().map(|t| bits(t)).collect();
    let width = all.iter().map(Vec::len).min().unwrap();
    let varying = (0..width)
        .filter(|&i| all.iter().any(|b| b[i]) && all.iter().any(|b| !b[i]))
        .count();
    assert!(
        varying >= 128,
        "only {varying} bit positions of the token vary across {STARTS} starts: {:?}",
        &tokens[..2]
    );
}

/// The bits a token encodes: 4 per character of a hex token (dashes
/// ignored), 6 per character of a base64 one, else 8 per byte.
fn token_bits(token: &str) -> Vec<bool> {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_";
    let chars: Vec<u8> = token.bytes().filter(|&b| b != b'-').collect();
    let (values, width): (Vec<u32>, u32) = if chars.iter().all(u8::is_ascii_hexdigit) {
        let digits = chars.iter().map(|&c| char::from(c).to_digit(16).unwrap());
        (digits.collect(), 4)
    } else if token.bytes().all(|c| B64.contains(&c) || c == b'=') {
        let values = token
            .bytes()
            .filter_map(|c| B64.iter().position(|&b| b == c));
        (values.map(|v| (v % 64) as u32).collect(), 6)
    } else {
        (token.bytes().map(u32::from).collect(), 8)
    };
    values
        .iter()
        .flat_map(|v| (0..width).map(move |i| v >> i & 1 == 1))
        .collect()
}
