//! One table of requests, run against both listeners over real sockets: the
//! IDE WebSocket and Streamable HTTP admit exactly the same requests and
//! refuse the others for the same reason (`runtime/src/transport/gate.rs`
//! decides for both), each listener in its own words.
//!
//! A case is header lines with placeholders each listener fills in: `{port}`
//! its port, `{other}` another port, `{right}` and `{wrong}` its own
//! credential header with the right and a wrong token, `{right_lower}` the
//! right one with the header's name in lower case, `{foreign}` the other
//! listener's credential with the right token.

use ide_mcp_runtime::HttpOptions;

use super::support::{read_server, serve};
use super::{assert_refused, http_answer, status_of, upgrade};

/// What the gate decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Admitted,
    ForeignHost,
    TwoHosts,
    Browser,
    TwoOrigins,
    TwoTokens,
    NoToken,
    WrongToken,
}

use Verdict::{
    Admitted, Browser, ForeignHost, NoToken, TwoHosts, TwoOrigins, TwoTokens, WrongToken,
};

/// The table: the header lines of a request (each ending in `\r\n`) and
/// the verdict, the same for both listeners.
const CASES: &[(&str, Verdict)] = &[
    // The names of loopback, with the right port or none.
    ("Host: 127.0.0.1:{port}\r\n{right}", Admitted),
    ("Host: 127.0.0.1\r\n{right}", Admitted),
    ("Host: localhost:{port}\r\n{right}", Admitted),
    ("Host: localhost\r\n{right}", Admitted),
    ("Host: LOCALHOST:{port}\r\n{right}", Admitted),
    ("Host: LocalHost\r\n{right}", Admitted),
    ("host: lOcAlHoSt:{port}\r\n{right}", Admitted),
    ("Host: [::1]:{port}\r\n{right}", Admitted),
    ("Host: [::1]\r\n{right}", Admitted),
    ("Host: 127.0.0.1:{port}\r\n{right_lower}", Admitted),
    // A wrong port, or a port written oddly.
    ("Host: 127.0.0.1:{other}\r\n{right}", ForeignHost),
    ("Host: localhost:{other}\r\n{right}", ForeignHost),
    ("Host: [::1]:{other}\r\n{right}", ForeignHost),
    ("Host: 127.0.0.1:+{port}\r\n{right}", ForeignHost),
    ("Host: 127.0.0.1:0{port}\r\n{right}", ForeignHost),
    ("Host: 127.0.0.1:\r\n{right}", ForeignHost),
    ("Host: 127.0.0.1:{port}:{port}\r\n{right}", ForeignHost),
    // Foreign hosts: a rebound DNS name, other loopback spellings, none.
    ("Host: evil.example\r\n{right}", ForeignHost),
    ("Host: evil.example:{port}\r\n{right}", ForeignHost),
    (
        "Host: localhost.evil.example:{port}\r\n{right}",
        ForeignHost,
    ),
    ("Host: localhost.:{port}\r\n{right}", ForeignHost),
    ("Host: 127.0.0.2:{port}\r\n{right}", ForeignHost),
    ("Host: 127.1:{port}\r\n{right}", ForeignHost),
    ("Host: 0.0.0.0:{port}\r\n{right}", ForeignHost),
    ("Host: [::ffff:127.0.0.1]:{port}\r\n{right}", ForeignHost),
    ("Host: ::1\r\n{right}", ForeignHost),
    ("{right}", ForeignHost),
    // A browser: any Origin, the server's own included, also without a token.
    (
        "Host: 127.0.0.1:{port}\r\nOrigin: https://evil.example\r\n{right}",
        Browser,
    ),
    (
        "Host: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n{right}",
        Browser,
    ),
    (
        "Host: 127.0.0.1:{port}\r\norigin: http://localhost:{port}\r\n{right}",
        Browser,
    ),
    ("Host: 127.0.0.1:{port}\r\nORIGIN: null\r\n{right}", Browser),
    (
        "Host: 127.0.0.1:{port}\r\nOrigin: https://evil.example\r\n",
        Browser,
    ),
    // Duplicated and ambiguous headers: refused whichever copy is right.
    (
        "Host: 127.0.0.1:{port}\r\nHost: 127.0.0.1:{port}\r\n{right}",
        TwoHosts,
    ),
    (
        "Host: 127.0.0.1:{port}\r\nhost: evil.example\r\n{right}",
        TwoHosts,
    ),
    (
        "Host: evil.example\r\nHost: 127.0.0.1:{port}\r\n{right}",
        TwoHosts,
    ),
    (
        "Host: 127.0.0.1:{port}\r\nOrigin: null\r\nOrigin: null\r\n{right}",
        TwoOrigins,
    ),
    ("Host: 127.0.0.1:{port}\r\n{right}{right}", TwoTokens),
    ("Host: 127.0.0.1:{port}\r\n{right}{wrong}", TwoTokens),
    ("Host: 127.0.0.1:{port}\r\n{wrong}{right}", TwoTokens),
    ("Host: 127.0.0.1:{port}\r\n{right}{right_lower}", TwoTokens),
    // The first failing check answers: Host, Origin, then the token.
    (
        "Host: evil.example\r\nOrigin: null\r\n{right}{right}",
        ForeignHost,
    ),
    ("Host: localhost\r\nOrigin: null\r\n{wrong}{wrong}", Browser),
    // Missing, wrong, or in the other listener's header.
    ("Host: 127.0.0.1:{port}\r\n", NoToken),
    ("Host: 127.0.0.1:{port}\r\n{foreign}", NoToken),
    ("Host: 127.0.0.1:{port}\r\n{wrong}", WrongToken),
];

/// One listener under test: how it is reached and what it answers.
struct Listener {
    port: u16,
    right: String,
    wrong: String,
    right_lower: String,
    foreign: String,
}

impl Listener {
    /// The case's header lines for this listener.
    fn headers(&self, case: &str) -> String {
        case.replace("{right_lower}", &self.right_lower)
            .replace("{right}", &self.right)
            .replace("{wrong}", &self.wrong)
            .replace("{foreign}", &self.foreign)
            .replace("{other}", &self.port.wrapping_add(1).to_string())
            .replace("{port}", &self.port.to_string())
    }
}

/// `token` with its last character changed.
fn wrong(token: &str) -> String {
    let mut wrong = token.to_owned();
    let last = wrong.pop().unwrap();
    wrong.push(if last == '0' { '1' } else { '0' });
    wrong
}

fn ide_line(name: &str, token: &str) -> String {
    format!("{name}: {token}\r\n")
}

fn bearer_line(name: &str, token: &str) -> String {
    format!("{name}: Bearer {token}\r\n")
}

/// The WebSocket's answer to each verdict: its status and body.
fn ws_answer(verdict: Verdict) -> (u16, &'static str) {
    match verdict {
        Admitted => (101, ""),
        ForeignHost => (
            403,
            "the Host header must be 127.0.0.1, localhost or [::1]\n",
        ),
        TwoHosts => (403, "duplicate `Host` header\n"),
        Browser => (403, "requests from browsers are refused\n"),
        TwoOrigins => (403, "duplicate `Origin` header\n"),
        TwoTokens => (401, "duplicate `x-claude-code-ide-authorization` header\n"),
        NoToken | WrongToken => (
            401,
            "missing or wrong x-claude-code-ide-authorization token\n",
        ),
    }
}

/// Streamable HTTP's answer to each verdict: its status line, its
/// `WWW-Authenticate` and the message of its JSON-RPC error (a browser's
/// quotes the `origin`).
fn http_answer_to(
    verdict: Verdict,
    port: u16,
    origin: &str,
) -> (&'static str, Option<&'static str>, String) {
    let forbidden = "HTTP/1.1 403 Forbidden";
    let unauthorized = "HTTP/1.1 401 Unauthorized";
    let challenge = |error| match error {
        Some("invalid_request") => Some(r#"Bearer realm="ide-mcp", error="invalid_request""#),
        Some(_) => Some(r#"Bearer realm="ide-mcp", error="invalid_token""#),
        None => Some(r#"Bearer realm="ide-mcp""#),
    };
    match verdict {
        Admitted => ("HTTP/1.1 200 OK", None, String::new()),
        ForeignHost => (
            forbidden,
            None,
            format!("the Host header must be 127.0.0.1:{port}, localhost:{port} or [::1]:{port}"),
        ),
        TwoHosts => (forbidden, None, "duplicate `Host` header".to_owned()),
        Browser => (
            forbidden,
            None,
            format!("requests from the origin {origin} are refused: no web page may call this server"),
        ),
        TwoOrigins => (forbidden, None, "duplicate `Origin` header".to_owned()),
        TwoTokens => (
            unauthorized,
            challenge(Some("invalid_request")),
            "duplicate `Authorization` header".to_owned(),
        ),
        NoToken => (
            unauthorized,
            challenge(None),
            "no bearer token: send the one the server printed, as `Authorization: Bearer <token>`"
                .to_owned(),
        ),
        WrongToken => (
            unauthorized,
            challenge(Some("invalid_token")),
            "the bearer token is wrong: send the one the server printed, as `Authorization: Bearer <token>`"
                .to_owned(),
        ),
    }
}

#[tokio::test]
async fn both_listeners_admit_and_refuse_the_same_requests() {
    let server = read_server();
    let (ws, _dir) = serve(&server, ide_mcp_runtime::WsOptions::default()).await;
    let http = server.serve_http(HttpOptions::default()).await.unwrap();
    let ws_token = ws.auth_token().to_owned();
    let http_token = http.auth_token().to_owned();
    let ws_listener = Listener {
        port: ws.port(),
        right: ide_line("X-Claude-Code-Ide-Authorization", &ws_token),
        wrong: ide_line("X-Claude-Code-Ide-Authorization", &wrong(&ws_token)),
        right_lower: ide_line("x-claude-code-ide-authorization", &ws_token),
        foreign: bearer_line("Authorization", &ws_token),
    };
    let http_listener = Listener {
        port: http.local_addr().port(),
        right: bearer_line("Authorization", &http_token),
        wrong: bearer_line("Authorization", &wrong(&http_token)),
        right_lower: bearer_line("authorization", &http_token),
        foreign: ide_line("X-Claude-Code-Ide-Authorization", &http_token),
    };
    for &(case, verdict) in CASES {
        ws_case(&ws_listener, case, verdict).await;
        http_case(&http_listener, case, verdict).await;
    }
    http.shutdown().await;
    ws.shutdown().await;
}

/// One case against the WebSocket: an upgrade request with these headers.
async fn ws_case(listener: &Listener, case: &str, verdict: Verdict) {
    let port = listener.port;
    let request = upgrade(port, Some(""), &listener.headers(case));
    let (status, body) = ws_answer(verdict);
    let what = format!("WebSocket, {case:?}");
    if verdict == Admitted {
        assert_eq!(
            status_of(port, &request).await,
            "HTTP/1.1 101 Switching Protocols",
            "{what}"
        );
        return;
    }
    let (_, answered) = assert_refused(port, &request, status, &what).await;
    assert_eq!(answered, body, "{what}");
}

/// One case against Streamable HTTP: a `ping` posted with these headers.
async fn http_case(listener: &Listener, case: &str, verdict: Verdict) {
    let port = listener.port;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\n{}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        listener.headers(case),
        body.len()
    );
    let what = format!("HTTP, {case:?}");
    let (status_line, challenge, answered) = http_answer(port, request.as_bytes(), &what).await;
    let origin = listener
        .headers(case)
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("origin:")
                .then(|| l[7..].trim().to_owned())
        })
        .unwrap_or_default();
    let (expected_status, expected_challenge, message) = http_answer_to(verdict, port, &origin);
    assert_eq!(
        (status_line.as_str(), challenge.as_deref()),
        (expected_status, expected_challenge),
        "{what}: {answered}"
    );
    let expected = if verdict == Admitted {
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned()
    } else {
        format!(r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"{message}"}}}}"#)
    };
    assert_eq!(answered, expected, "{what}");
}
