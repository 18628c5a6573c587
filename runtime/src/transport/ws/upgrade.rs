//! The checks on a WebSocket upgrade request, made before any upgrade: no
//! browser, no DNS rebinding (both by the [gate](crate::transport::gate)
//! every listener runs), a real upgrade, the right token (the gate's again).
//! Every refusal is a complete HTTP response with a status that says why and
//! a short body.

use std::fmt::Write as _;

use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use crate::transport::gate::{Credential, Gate, Hosts, Refused};

/// The subprotocol echoed when offered (the official TypeScript MCP client
/// refuses a server that does not select it).
const SUBPROTOCOL: &str = "mcp";

/// The most headers a request may carry (the CLI sends about ten).
const MAX_HEADERS: usize = 64;

/// Why a request was refused: an HTTP status, its reason phrase, a one-line
/// body for a person reading it (`curl`), and any header the status needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status code.
    pub status: u16,
    /// The body's text (a newline is added).
    pub message: &'static str,
    extra_header: Option<(&'static str, &'static str)>,
}

impl Refusal {
    const fn new(status: u16, message: &'static str) -> Self {
        Self {
            status,
            message,
            extra_header: None,
        }
    }

    const fn with_header(mut self, name: &'static str, value: &'static str) -> Self {
        self.extra_header = Some((name, value));
        self
    }

    /// 400: not an HTTP request we can read.
    pub const MALFORMED: Self = Self::new(400, "malformed HTTP request");
    /// 431: a request head over the size or header-count limit.
    pub const TOO_LARGE: Self = Self::new(431, "request header fields too large");
    /// 503: the server serves as many authenticated connections as it may.
    pub const BUSY: Self = Self::new(503, "too many connections; try again when one has closed");

    /// The complete response: status line, `Content-Type`, `Content-Length`,
    /// `Connection: close`, the extra header, and the body.
    pub fn response(&self) -> Vec<u8> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.status,
            reason_phrase(self.status),
            self.message.len() + 1,
        );
        if let Some((name, value)) = self.extra_header {
            let _ = write!(head, "{name}: {value}\r\n"); // into a `String`: cannot fail
        }
        head.push_str("\r\n");
        head.push_str(self.message);
        head.push('\n');
        head.into_bytes()
    }
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        405 => "Method Not Allowed",
        426 => "Upgrade Required",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// An upgrade request that passed every check: what the `101` needs.
#[derive(Debug)]
pub(crate) struct Accepted {
    accept_key: String,
    offers_mcp: bool,
}

impl Accepted {
    /// The `101 Switching Protocols` response.
    pub(crate) fn response(&self) -> Vec<u8> {
        let mut response = format!(
            "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: {}\r\n",
            self.accept_key
        );
        if self.offers_mcp {
            response.push_str("Sec-WebSocket-Protocol: mcp\r\n");
        }
        response.push_str("\r\n");
        response.into_bytes()
    }
}

/// Where a request head ends in `buf`: `Ok(Some(len))` when complete,
/// `Ok(None)` when more bytes are needed, a refusal when it cannot be read.
pub(crate) fn head_length(buf: &[u8]) -> Result<Option<usize>, Refusal> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    match httparse::Request::new(&mut headers).parse(buf) {
        Ok(httparse::Status::Complete(len)) => Ok(Some(len)),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(httparse::Error::TooManyHeaders) => Err(Refusal::TOO_LARGE),
        Err(_) => Err(Refusal::MALFORMED),
    }
}

/// Accepts or refuses a complete request head, in this order: 403 for a
/// `Host` other than `127.0.0.1`, `localhost` or `[::1]` (DNS rebinding) and for
/// any `Origin` header (only browsers send one; the CLI never does); 405 for
/// a method other than `GET`; 426 for a request that is not a WebSocket
/// upgrade (a browser's or `curl`'s plain `GET`) or asks for another
/// WebSocket version; 400 without a `Sec-WebSocket-Key`; 401 for a missing
/// or wrong token. The gate decides `Host`, `Origin` and the token; the
/// token's refusal waits for the upgrade's own checks, so that `curl` is
/// told to use a WebSocket client.
///
/// Each header a check reads must come at most once (only the offered
/// subprotocols are a list that may span lines, RFC 6455 §11.3.4): a
/// duplicate is refused with the status of that header's own check, before
/// anything is compared.
pub(crate) fn check_upgrade(head: &[u8], token: &str, port: u16) -> Result<Accepted, Refusal> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) | Err(_) => return Err(Refusal::MALFORMED),
    }
    let gate = Gate {
        token,
        credential: Credential::IDE,
        hosts: Hosts::Loopback { port },
        origins: &[],
    };
    let admitted = gate.check(request.headers.iter().map(|h| (h.name.as_bytes(), h.value)));
    if let Err(refused) = admitted
        && refused.status() == 403
    {
        return Err(refusal(refused));
    }
    if request.method != Some("GET") {
        return Err(Refusal::new(
            405,
            "this is a WebSocket endpoint: open it with a GET upgrade request",
        )
        .with_header("Allow", "GET"));
    }
    let key = websocket_key(request.headers, request.version)?;
    admitted.map_err(refusal)?;
    let offers_mcp = request
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("sec-websocket-protocol"))
        .any(|h| lists(Some(h.value), SUBPROTOCOL));
    Ok(Accepted {
        accept_key: derive_accept_key(key),
        offers_mcp,
    })
}

/// The gate's refusal as this listener words it.
fn refusal(refused: Refused) -> Refusal {
    let message = match refused {
        Refused::DuplicateHost => "duplicate `Host` header",
        Refused::ForeignHost => "the Host header must be 127.0.0.1, localhost or [::1]",
        Refused::DuplicateOrigin => "duplicate `Origin` header",
        Refused::Origin => "requests from browsers are refused",
        // Two tokens are refused whatever they are, the right one included:
        // the answer says nothing of either.
        Refused::DuplicateCredential => "duplicate `x-claude-code-ide-authorization` header",
        Refused::NoCredential | Refused::WrongCredential => {
            "missing or wrong x-claude-code-ide-authorization token"
        }
    };
    Refusal::new(refused.status(), message)
}

/// The `Sec-WebSocket-Key` of a WebSocket upgrade of version 13 over
/// HTTP/1.1; 426 for another request or version, 400 without a key.
fn websocket_key<'h>(
    headers: &[httparse::Header<'h>],
    http_version: Option<u8>,
) -> Result<&'h [u8], Refusal> {
    let upgrade_required = |message| Refusal::new(426, message).with_header("Upgrade", "websocket");
    let connection = single(
        headers,
        "connection",
        upgrade_required("duplicate `Connection` header"),
    )?;
    let upgrade = single(
        headers,
        "upgrade",
        upgrade_required("duplicate `Upgrade` header"),
    )?;
    if http_version != Some(1) || !lists(connection, "upgrade") || !lists(upgrade, "websocket") {
        tracing::debug!("refused: not a WebSocket upgrade request");
        return Err(upgrade_required(
            "this is a WebSocket endpoint (the Claude Code IDE protocol): connect with a WebSocket client",
        ));
    }
    let wrong_version =
        |message| Refusal::new(426, message).with_header("Sec-WebSocket-Version", "13");
    let version = single(
        headers,
        "sec-websocket-version",
        wrong_version("duplicate `Sec-WebSocket-Version` header"),
    )?;
    if version != Some(b"13") {
        return Err(wrong_version("only WebSocket version 13 is supported"));
    }
    let key = single(
        headers,
        "sec-websocket-key",
        Refusal::new(400, "duplicate `Sec-WebSocket-Key` header"),
    )?;
    key.ok_or(Refusal::new(400, "the Sec-WebSocket-Key header is missing"))
}

/// The value of header `name` (in any case), if it came at most once;
/// `duplicate` if it came more often: which copy a check read would be a
/// guess, and a reader of the first and one of the last would disagree.
fn single<'h>(
    headers: &[httparse::Header<'h>],
    name: &str,
    duplicate: Refusal,
) -> Result<Option<&'h [u8]>, Refusal> {
    let mut values = headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case(name))
        .map(|h| h.value);
    let first = values.next();
    if values.next().is_some() {
        tracing::warn!("upgrade refused: {}", duplicate.message);
        return Err(duplicate);
    }
    Ok(first)
}

/// Whether a comma-separated header value lists `wanted` (in any case).
fn lists(value: Option<&[u8]>, wanted: &str) -> bool {
    value
        .and_then(|v| std::str::from_utf8(v).ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(wanted)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    fn status(head: &str) -> u16 {
        match check_upgrade(head.as_bytes(), TOKEN, 80) {
            Ok(_) => 101,
            Err(refusal) => refusal.status,
        }
    }

    fn upgrade(extra: &str) -> String {
        format!(
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extra}\r\n"
        )
    }

    #[test]
    fn each_check_has_its_status() {
        let auth = format!("X-Claude-Code-IDE-Authorization: {TOKEN}\r\n");
        assert_eq!(status(&upgrade(&auth)), 101);
        assert_eq!(status(&upgrade("")), 401);
        assert_eq!(status(&upgrade(&format!("{auth}Origin: null\r\n"))), 403);
        assert_eq!(status("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), 426);
        assert_eq!(status("GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"), 426);
        assert_eq!(status("POST / HTTP/1.1\r\nHost: localhost\r\n\r\n"), 405);
        assert_eq!(status("GET / HTTP/1.1\r\nHost: evil\r\n\r\n"), 403);
        let v8 = upgrade(&auth).replace("Version: 13", "Version: 8");
        assert_eq!(status(&v8), 426);
        let keyless = upgrade(&auth).replace("Sec-WebSocket-Key", "X-Key");
        assert_eq!(status(&keyless), 400);
    }

    /// The refusal of `head`: status, body, extra header.
    fn refusal(head: &str) -> (u16, &'static str, Option<(&'static str, &'static str)>) {
        let refusal = check_upgrade(head.as_bytes(), TOKEN, 80).unwrap_err();
        (refusal.status, refusal.message, refusal.extra_header)
    }

    #[test]
    fn a_header_a_check_reads_is_refused_when_it_comes_twice() {
        let right = format!("X-Claude-Code-IDE-Authorization: {TOKEN}\r\n");
        let wrong = "x-claude-code-ide-authorization: 0123456789abcdef0123456789abcdeF\r\n";
        let two_tokens = (
            401,
            "duplicate `x-claude-code-ide-authorization` header",
            None,
        );
        assert_eq!(refusal(&upgrade(&format!("{right}{wrong}"))), two_tokens);
        assert_eq!(refusal(&upgrade(&format!("{wrong}{right}"))), two_tokens);
        assert_eq!(refusal(&upgrade(&format!("{right}{right}"))), two_tokens);
        assert_eq!(refusal(&upgrade(&format!("{wrong}{wrong}"))), two_tokens);
        // `upgrade` has one of each of these; a second copy, the same or not.
        let upgrade_header = Some(("Upgrade", "websocket"));
        for (second, expected) in [
            ("Host: 127.0.0.1:80", (403, "duplicate `Host` header", None)),
            ("host: evil.example", (403, "duplicate `Host` header", None)),
            (
                "Connection: Upgrade",
                (426, "duplicate `Connection` header", upgrade_header),
            ),
            (
                "Upgrade: websocket",
                (426, "duplicate `Upgrade` header", upgrade_header),
            ),
            (
                "Upgrade: h2c",
                (426, "duplicate `Upgrade` header", upgrade_header),
            ),
            (
                "Sec-WebSocket-Version: 13",
                (
                    426,
                    "duplicate `Sec-WebSocket-Version` header",
                    Some(("Sec-WebSocket-Version", "13")),
                ),
            ),
            (
                "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==",
                (400, "duplicate `Sec-WebSocket-Key` header", None),
            ),
        ] {
            let head = upgrade(&format!("{right}{second}\r\n"));
            assert_eq!(refusal(&head), expected, "{second}");
        }
        // Any `Origin` is refused; two get a message of their own.
        assert_eq!(
            refusal(&upgrade(&format!(
                "{right}Origin: null\r\norigin: null\r\n"
            ))),
            (403, "duplicate `Origin` header", None)
        );
        // The checks keep their order: a duplicate token behind a foreign
        // `Host` gets the `Host`'s refusal.
        let head = upgrade(&format!("{right}{wrong}")).replace("127.0.0.1:80", "evil");
        assert_eq!(
            refusal(&head),
            (
                403,
                "the Host header must be 127.0.0.1, localhost or [::1]",
                None
            )
        );
        // The offered subprotocols are a list that may span lines.
        let offered = upgrade(&format!(
            "{right}Sec-WebSocket-Protocol: chat\r\nSec-WebSocket-Protocol: mcp\r\n"
        ));
        assert!(
            check_upgrade(offered.as_bytes(), TOKEN, 80)
                .unwrap()
                .offers_mcp
        );
    }

    #[test]
    fn the_101_echoes_mcp_and_the_rfc_accept_key() {
        let head = upgrade(&format!(
            "x-claude-code-ide-authorization: {TOKEN}\r\nSec-WebSocket-Protocol: chat, mcp\r\n"
        ));
        let response = check_upgrade(head.as_bytes(), TOKEN, 80)
            .unwrap()
            .response();
        assert_eq!(
            String::from_utf8(response).unwrap(),
            // The accept key of RFC 6455's own example.
            "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: mcp\r\n\r\n"
        );
    }

    #[test]
    fn refusals_are_complete_responses() {
        let response = String::from_utf8(
            check_upgrade(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", TOKEN, 80)
                .unwrap_err()
                .response(),
        )
        .unwrap();
        let body = "this is a WebSocket endpoint (the Claude Code IDE protocol): connect with a WebSocket client\n";
        assert_eq!(
            response,
            format!(
                "HTTP/1.1 426 Upgrade Required\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nUpgrade: websocket\r\n\r\n{body}",
                body.len()
            )
        );
    }

    #[test]
    fn heads_are_measured_or_refused() {
        assert_eq!(head_length(b"GET / HTTP/1.1\r\nHost: a\r\n"), Ok(None));
        assert_eq!(head_length(b"GET / HTTP/1.1\r\n\r\nrest"), Ok(Some(18)));
        assert_eq!(
            head_length(b"\x00\x01garbage\r\n\r\n"),
            Err(Refusal::MALFORMED)
        );
        let many = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "A: b\r\n".repeat(MAX_HEADERS + 1)
        );
        assert_eq!(head_length(many.as_bytes()), Err(Refusal::TOO_LARGE));
    }
}
