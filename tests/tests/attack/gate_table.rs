//! One table of requests, run over real sockets against every listener:
//! the IDE WebSocket and Streamable HTTP of the runtime, and the two faces
//! built on them (Gemini CLI's: Streamable HTTP on 127.0.0.1 with a bearer
//! token; the Copilot CLI's: Streamable HTTP on a Unix socket with
//! `Authorization: Nonce`). They admit exactly the same requests and refuse
//! the others for the same reason (`runtime/src/transport/gate.rs` decides
//! for all), each listener in its own words; only `Host` differs on the
//! Unix socket, whose clients name no port (`http://localhost/mcp`).
//!
//! A case is header lines with placeholders each listener fills in:
//! `{host}` the `Host` its own clients send, `{port}` its port (on the Unix
//! socket, 80: any port is foreign there), `{other}` another port,
//! `{right}` and `{wrong}` its own credential header with the right and a
//! wrong token, `{right_lower}` the right one with the header's name in
//! lower case, `{foreign}` the right token in another listener's header or
//! scheme.

use std::path::PathBuf;

use ide_mcp_runtime::HttpOptions;
use ide_mcp_tools::EditorPorts;
use ide_mcp_tools::copilot::{CopilotFace, CopilotOptions};
use ide_mcp_tools::gemini::{GeminiFace, GeminiOptions};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::support::{WAIT, raw_exchange, read_server, serve};
use super::{assert_refused, http_parts, status_of, upgrade};

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
/// the verdict over TCP (the IDE WebSocket, Streamable HTTP, Gemini's
/// face), then over the Unix socket (Copilot's face).
const CASES: &[(&str, Verdict, Verdict)] = &[
    // The names of loopback, with the right port or none; on the Unix
    // socket, without a port only.
    ("Host: 127.0.0.1:{port}\r\n{right}", Admitted, ForeignHost),
    ("Host: 127.0.0.1\r\n{right}", Admitted, Admitted),
    ("Host: localhost:{port}\r\n{right}", Admitted, ForeignHost),
    ("Host: localhost\r\n{right}", Admitted, Admitted),
    ("Host: LOCALHOST:{port}\r\n{right}", Admitted, ForeignHost),
    ("Host: LocalHost\r\n{right}", Admitted, Admitted),
    ("host: lOcAlHoSt:{port}\r\n{right}", Admitted, ForeignHost),
    ("Host: [::1]:{port}\r\n{right}", Admitted, ForeignHost),
    ("Host: [::1]\r\n{right}", Admitted, Admitted),
    ("Host: {host}\r\n{right_lower}", Admitted, Admitted),
    // A wrong port, or a port written oddly.
    (
        "Host: 127.0.0.1:{other}\r\n{right}",
        ForeignHost,
        ForeignHost,
    ),
    (
        "Host: localhost:{other}\r\n{right}",
        ForeignHost,
        ForeignHost,
    ),
    ("Host: [::1]:{other}\r\n{right}", ForeignHost, ForeignHost),
    (
        "Host: 127.0.0.1:+{port}\r\n{right}",
        ForeignHost,
        ForeignHost,
    ),
    (
        "Host: 127.0.0.1:0{port}\r\n{right}",
        ForeignHost,
        ForeignHost,
    ),
    ("Host: 127.0.0.1:\r\n{right}", ForeignHost, ForeignHost),
    ("Host: localhost:\r\n{right}", ForeignHost, ForeignHost),
    (
        "Host: 127.0.0.1:{port}:{port}\r\n{right}",
        ForeignHost,
        ForeignHost,
    ),
    // Foreign hosts: a rebound DNS name, other loopback spellings, none.
    ("Host: evil.example\r\n{right}", ForeignHost, ForeignHost),
    (
        "Host: evil.example:{port}\r\n{right}",
        ForeignHost,
        ForeignHost,
    ),
    (
        "Host: localhost.evil.example:{port}\r\n{right}",
        ForeignHost,
        ForeignHost,
    ),
    (
        "Host: localhost.evil.example\r\n{right}",
        ForeignHost,
        ForeignHost,
    ),
    (
        "Host: localhost.:{port}\r\n{right}",
        ForeignHost,
        ForeignHost,
    ),
    ("Host: localhost.\r\n{right}", ForeignHost, ForeignHost),
    (
        "Host: 127.0.0.2:{port}\r\n{right}",
        ForeignHost,
        ForeignHost,
    ),
    ("Host: 127.1:{port}\r\n{right}", ForeignHost, ForeignHost),
    ("Host: 0.0.0.0:{port}\r\n{right}", ForeignHost, ForeignHost),
    (
        "Host: [::ffff:127.0.0.1]:{port}\r\n{right}",
        ForeignHost,
        ForeignHost,
    ),
    ("Host: ::1\r\n{right}", ForeignHost, ForeignHost),
    ("{right}", ForeignHost, ForeignHost),
    // A browser: any Origin, the server's own included, also without a token.
    (
        "Host: {host}\r\nOrigin: https://evil.example\r\n{right}",
        Browser,
        Browser,
    ),
    (
        "Host: {host}\r\nOrigin: http://{host}\r\n{right}",
        Browser,
        Browser,
    ),
    (
        "Host: {host}\r\norigin: http://localhost:{port}\r\n{right}",
        Browser,
        Browser,
    ),
    ("Host: {host}\r\nORIGIN: null\r\n{right}", Browser, Browser),
    (
        "Host: {host}\r\nOrigin: https://evil.example\r\n",
        Browser,
        Browser,
    ),
    // Duplicated and ambiguous headers: refused whichever copy is right.
    (
        "Host: {host}\r\nHost: {host}\r\n{right}",
        TwoHosts,
        TwoHosts,
    ),
    (
        "Host: {host}\r\nhost: evil.example\r\n{right}",
        TwoHosts,
        TwoHosts,
    ),
    (
        "Host: evil.example\r\nHost: {host}\r\n{right}",
        TwoHosts,
        TwoHosts,
    ),
    (
        "Host: {host}\r\nOrigin: null\r\nOrigin: null\r\n{right}",
        TwoOrigins,
        TwoOrigins,
    ),
    ("Host: {host}\r\n{right}{right}", TwoTokens, TwoTokens),
    ("Host: {host}\r\n{right}{wrong}", TwoTokens, TwoTokens),
    ("Host: {host}\r\n{wrong}{right}", TwoTokens, TwoTokens),
    ("Host: {host}\r\n{right}{right_lower}", TwoTokens, TwoTokens),
    // The first failing check answers: Host, Origin, then the token.
    (
        "Host: evil.example\r\nOrigin: null\r\n{right}{right}",
        ForeignHost,
        ForeignHost,
    ),
    (
        "Host: localhost\r\nOrigin: null\r\n{wrong}{wrong}",
        Browser,
        Browser,
    ),
    // Missing, wrong, or in another listener's header or scheme.
    ("Host: {host}\r\n", NoToken, NoToken),
    ("Host: {host}\r\n{foreign}", NoToken, NoToken),
    ("Host: {host}\r\n{wrong}", WrongToken, WrongToken),
];

/// One listener under test: how it is reached and what it answers.
struct Listener {
    name: &'static str,
    reach: Reach,
    /// `{host}`, `{port}`.
    host: String,
    port: u16,
    right: String,
    wrong: String,
    right_lower: String,
    foreign: String,
}

/// Where a listener is, and what it speaks.
enum Reach {
    /// The IDE WebSocket on 127.0.0.1.
    WebSocket,
    /// Streamable HTTP on 127.0.0.1, `Authorization: Bearer`.
    Bearer,
    /// Streamable HTTP on a Unix socket, `Authorization: Nonce`, sessions
    /// only (a `ping` outside one is answered -32601).
    Nonce(PathBuf),
}

impl Listener {
    /// A listener on 127.0.0.1.
    fn tcp(name: &'static str, reach: Reach, port: u16, lines: [String; 4]) -> Self {
        let [right, wrong, right_lower, foreign] = lines;
        Self {
            name,
            reach,
            host: format!("127.0.0.1:{port}"),
            port,
            right,
            wrong,
            right_lower,
            foreign,
        }
    }

    /// The case's header lines for this listener.
    fn headers(&self, case: &str) -> String {
        case.replace("{right_lower}", &self.right_lower)
            .replace("{right}", &self.right)
            .replace("{wrong}", &self.wrong)
            .replace("{foreign}", &self.foreign)
            .replace("{host}", &self.host)
            .replace("{other}", &self.port.wrapping_add(1).to_string())
            .replace("{port}", &self.port.to_string())
    }

    /// The case's verdict for this listener.
    fn verdict(&self, tcp: Verdict, unix: Verdict) -> Verdict {
        match self.reach {
            Reach::WebSocket | Reach::Bearer => tcp,
            Reach::Nonce(_) => unix,
        }
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

fn nonce_line(name: &str, token: &str) -> String {
    format!("{name}: Nonce {token}\r\n")
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

/// Streamable HTTP's answer to each verdict on `listener`: its status
/// line, its `WWW-Authenticate` (in the listener's scheme) and its body
/// (a JSON-RPC error for a refusal, whose message quotes a browser's
/// `origin`).
fn http_answer_to(
    verdict: Verdict,
    listener: &Listener,
    origin: &str,
) -> (&'static str, Option<String>, String) {
    let nonce = matches!(listener.reach, Reach::Nonce(_));
    let forbidden = "HTTP/1.1 403 Forbidden";
    let unauthorized = "HTTP/1.1 401 Unauthorized";
    let scheme = if nonce { "Nonce" } else { "Bearer" };
    let challenge = |error: Option<&str>| {
        Some(match error {
            Some(error) => format!(r#"{scheme} realm="ide-mcp", error="{error}""#),
            None => format!(r#"{scheme} realm="ide-mcp""#),
        })
    };
    let port = listener.port;
    let (status, challenge, message) = match verdict {
        Admitted => {
            let body = if nonce {
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"`ping` outside a session: this server serves sessions only; send `initialize` first"}}"#
            } else {
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
            };
            return ("HTTP/1.1 200 OK", None, body.to_owned());
        }
        ForeignHost if nonce => (
            forbidden,
            None,
            "the Host header must be localhost, 127.0.0.1 or [::1]".to_owned(),
        ),
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
        NoToken if nonce => (
            unauthorized,
            challenge(None),
            "no credential: send the header the server's discovery file names".to_owned(),
        ),
        NoToken => (
            unauthorized,
            challenge(None),
            "no bearer token: send the one the server printed, as `Authorization: Bearer <token>`"
                .to_owned(),
        ),
        WrongToken if nonce => (
            unauthorized,
            challenge(Some("invalid_token")),
            "the credential is wrong: send the header the server's discovery file names"
                .to_owned(),
        ),
        WrongToken => (
            unauthorized,
            challenge(Some("invalid_token")),
            "the bearer token is wrong: send the one the server printed, as `Authorization: Bearer <token>`"
                .to_owned(),
        ),
    };
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"{message}"}}}}"#);
    (status, challenge, body)
}

#[tokio::test]
async fn every_listener_admits_and_refuses_the_same_requests() {
    let server = read_server();
    let (ws, _dir) = serve(&server, ide_mcp_runtime::WsOptions::default()).await;
    let http = server.serve_http(HttpOptions::default()).await.unwrap();
    let dirs = tempfile::tempdir().unwrap();
    let gemini = GeminiFace::start(
        EditorPorts::empty(),
        GeminiOptions {
            dir: dirs.path().join("gemini"),
            ..GeminiOptions::default()
        },
    )
    .await
    .unwrap();
    let copilot = CopilotFace::start(
        EditorPorts::empty(),
        CopilotOptions::new(dirs.path().join("copilot")),
    )
    .await
    .unwrap();
    let ws_token = ws.auth_token().to_owned();
    let http_token = http.auth_token().to_owned();
    let gemini_token = gemini.auth_token().to_owned();
    let copilot_token = nonce_of(&copilot);
    let listeners = [
        Listener::tcp(
            "the IDE WebSocket",
            Reach::WebSocket,
            ws.port(),
            [
                ide_line("X-Claude-Code-Ide-Authorization", &ws_token),
                ide_line("X-Claude-Code-Ide-Authorization", &wrong(&ws_token)),
                ide_line("x-claude-code-ide-authorization", &ws_token),
                bearer_line("Authorization", &ws_token),
            ],
        ),
        Listener::tcp(
            "Streamable HTTP",
            Reach::Bearer,
            http.local_addr().port(),
            [
                bearer_line("Authorization", &http_token),
                bearer_line("Authorization", &wrong(&http_token)),
                bearer_line("authorization", &http_token),
                ide_line("X-Claude-Code-Ide-Authorization", &http_token),
            ],
        ),
        Listener::tcp(
            "Gemini's face",
            Reach::Bearer,
            gemini.port(),
            [
                bearer_line("Authorization", &gemini_token),
                bearer_line("Authorization", &wrong(&gemini_token)),
                bearer_line("authorization", &gemini_token),
                ide_line("X-Claude-Code-Ide-Authorization", &gemini_token),
            ],
        ),
        Listener {
            name: "Copilot's face",
            reach: Reach::Nonce(copilot.socket_path().to_path_buf()),
            host: "localhost".to_owned(),
            port: 80,
            right: nonce_line("Authorization", &copilot_token),
            wrong: nonce_line("Authorization", &wrong(&copilot_token)),
            right_lower: nonce_line("authorization", &copilot_token),
            // The token, but as a bearer's.
            foreign: bearer_line("Authorization", &copilot_token),
        },
    ];
    for &(case, tcp, unix) in CASES {
        for listener in &listeners {
            let verdict = listener.verdict(tcp, unix);
            match &listener.reach {
                Reach::WebSocket => ws_case(listener, case, verdict).await,
                Reach::Bearer | Reach::Nonce(_) => http_case(listener, case, verdict).await,
            }
        }
    }
    copilot.shutdown().await;
    gemini.shutdown().await;
    http.shutdown().await;
    ws.shutdown().await;
}

/// The secret of the Copilot face's `Authorization: Nonce <secret>`, from
/// its lockfile.
fn nonce_of(copilot: &CopilotFace) -> String {
    let lockfile: serde_json::Value =
        serde_json::from_slice(&std::fs::read(copilot.lockfile_path()).unwrap()).unwrap();
    let header = lockfile["headers"]["Authorization"].as_str().unwrap();
    header.strip_prefix("Nonce ").unwrap().to_owned()
}

/// One case against the WebSocket: an upgrade request with these headers.
async fn ws_case(listener: &Listener, case: &str, verdict: Verdict) {
    let port = listener.port;
    let request = upgrade(port, Some(""), &listener.headers(case));
    let (status, body) = ws_answer(verdict);
    let what = format!("{}, {case:?}", listener.name);
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
    let headers = listener.headers(case);
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\n{headers}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let what = format!("{}, {case:?}", listener.name);
    let (response, closed) = match &listener.reach {
        Reach::Nonce(socket) => unix_exchange(socket, request.as_bytes()).await,
        _ => raw_exchange(listener.port, request.as_bytes()).await,
    };
    let (status_line, challenge, answered) = http_parts(&response, closed, &what);
    let origin = headers
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("origin:")
                .then(|| l[7..].trim().to_owned())
        })
        .unwrap_or_default();
    let expected = http_answer_to(verdict, listener, &origin);
    assert_eq!(
        (status_line.as_str(), challenge, answered),
        (expected.0, expected.1, expected.2),
        "{what}"
    );
}

/// Sends `request` over the Unix socket and reads until the server closes
/// (at most [`WAIT`]); whether it closed.
async fn unix_exchange(socket: &std::path::Path, request: &[u8]) -> (Vec<u8>, bool) {
    let mut stream = tokio::net::UnixStream::connect(socket).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut read = Vec::new();
    let closed = tokio::time::timeout(WAIT, stream.read_to_end(&mut read))
        .await
        .is_ok();
    (read, closed)
}
