//! The checks every HTTP request passes before its body is read: the
//! headers this transport reads, found in one pass, and the gate (`Host`,
//! `Origin`, the bearer token), then the body's declared type and what the
//! client accepts. Each refusal is a complete [`response`](super::response).

use hyper::StatusCode;
use hyper::header::{self, HeaderMap, HeaderValue};

use super::response::{HttpResponse, duplicate, refusal};
use crate::jsonrpc::{self, INVALID_REQUEST};

/// The header naming a 2025-11-25 session.
pub const SESSION_HEADER: &str = "mcp-session-id";

/// The `WWW-Authenticate` challenge of a 401.
const CHALLENGE: &str = r#"Bearer realm="ide-mcp""#;

/// The values of one header this transport reads: the first, and whether
/// more came (a header that must come once, or a list).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Header<'a> {
    pub(crate) first: Option<&'a HeaderValue>,
    pub(crate) repeated: bool,
}

impl<'a> Header<'a> {
    fn push(&mut self, value: &'a HeaderValue) {
        if self.first.is_none() {
            self.first = Some(value);
        } else {
            self.repeated = true;
        }
    }

    /// The value as text when it came exactly once; `Err` when it came
    /// twice or is not visible ASCII.
    pub(crate) fn single(self) -> Result<Option<&'a str>, ()> {
        if self.repeated {
            return Err(());
        }
        self.first.map(|v| v.to_str().map_err(|_| ())).transpose()
    }
}

/// The headers this transport reads, found in one pass over the request's
/// headers instead of a lookup each (each lookup hashes the name).
#[derive(Debug, Default)]
pub(crate) struct Heads<'a> {
    pub(crate) host: Header<'a>,
    pub(crate) origin: Header<'a>,
    pub(crate) authorization: Header<'a>,
    pub(crate) content_type: Header<'a>,
    /// Which of the answers this endpoint gives `Accept` allows: JSON, an
    /// event stream; `None` without the header (anything goes).
    pub(crate) accepts: Option<(bool, bool)>,
    pub(crate) session: Header<'a>,
    pub(crate) version: Header<'a>,
    pub(crate) method: Header<'a>,
    pub(crate) name: Header<'a>,
}

impl<'a> Heads<'a> {
    /// Reads `headers` once.
    pub(crate) fn read(headers: &'a HeaderMap) -> Self {
        let mut heads = Heads::default();
        for (name, value) in headers {
            // The standard names by the compare of their tags, the others
            // by their text (lower-case: `HeaderName` normalizes it).
            let header = if name == header::HOST {
                &mut heads.host
            } else if name == header::AUTHORIZATION {
                &mut heads.authorization
            } else if name == header::CONTENT_TYPE {
                &mut heads.content_type
            } else if name == header::ACCEPT {
                let (json, stream) = heads.accepts.get_or_insert((false, false));
                accepted(value.as_bytes(), json, stream);
                continue;
            } else if name == header::ORIGIN {
                &mut heads.origin
            } else if name.as_str().starts_with("mcp-") {
                match name.as_str() {
                    SESSION_HEADER => &mut heads.session,
                    "mcp-protocol-version" => &mut heads.version,
                    "mcp-method" => &mut heads.method,
                    "mcp-name" => &mut heads.name,
                    _ => continue,
                }
            } else {
                continue;
            };
            header.push(value);
        }
        heads
    }
}

/// Marks which of JSON and an event stream one `Accept` value allows.
fn accepted(value: &[u8], json: &mut bool, stream: &mut bool) {
    // What the SDKs send, by a compare.
    if value == b"application/json, text/event-stream" {
        (*json, *stream) = (true, true);
        return;
    }
    // Media types are ASCII: the bytes are compared as they are.
    for range in value.split(|b| *b == b',') {
        let media = range.split(|b| *b == b';').next().unwrap_or_default();
        let media = media.trim_ascii();
        let is = |name: &str| media.eq_ignore_ascii_case(name.as_bytes());
        if is("*/*") {
            (*json, *stream) = (true, true);
        } else if is("application/*") || is("application/json") {
            *json = true;
        } else if is("text/*") || is("text/event-stream") {
            *stream = true;
        }
    }
}

/// What the server checks a request against.
pub(crate) struct Gate<'a> {
    /// The bearer token.
    pub(crate) token: &'a str,
    /// The port served, for the allowed `Host` and `Origin` values.
    pub(crate) port: u16,
    /// Whether the server listens on loopback only (then `Host` must name it).
    pub(crate) loopback: bool,
    /// Origins allowed beside the server's own localhost ones.
    pub(crate) extra_origins: &'a [String],
    /// The `Host` clients send most (`127.0.0.1:<port>`), accepted by a
    /// compare.
    pub(crate) usual_host: &'a str,
}

impl Gate<'_> {
    /// The refusal of a request from a browser page of another origin or
    /// through a rebound DNS name (403), or without the token (401). Each of
    /// the three headers must come at most once: with two, which one a check
    /// reads is a guess (a duplicate gets that header's status, the right
    /// token twice included).
    pub(crate) fn refusal(&self, heads: &Heads<'_>) -> Option<HttpResponse> {
        if heads.host.repeated {
            return Some(duplicate(StatusCode::FORBIDDEN, "Host"));
        }
        let usual = heads
            .host
            .first
            .is_some_and(|h| h.as_bytes() == self.usual_host.as_bytes());
        let host = || heads.host.first.and_then(|h| h.to_str().ok());
        if self.loopback && !usual && !host().is_some_and(|h| self.local_host(h)) {
            let host = host();
            tracing::warn!(
                host,
                "HTTP request refused: foreign `Host` (DNS rebinding?)"
            );
            return Some(refusal(
                StatusCode::FORBIDDEN,
                INVALID_REQUEST,
                &format_args!(
                    "the Host header must be 127.0.0.1:{0}, localhost:{0} or [::1]:{0}",
                    self.port
                ),
            ));
        }
        if heads.origin.repeated {
            return Some(duplicate(StatusCode::FORBIDDEN, "Origin"));
        }
        if let Some(origin) = heads.origin.first
            && !origin.to_str().ok().is_some_and(|o| self.origin_allowed(o))
        {
            tracing::warn!(?origin, "HTTP request refused: foreign `Origin`");
            return Some(refusal(
                StatusCode::FORBIDDEN,
                INVALID_REQUEST,
                &format_args!(
                    "requests from the origin {} are refused: only this server's own localhost origin may call it",
                    jsonrpc::clip(&String::from_utf8_lossy(origin.as_bytes()))
                ),
            ));
        }
        if heads.authorization.repeated {
            // Refused before any compare: the answer says nothing of either.
            let mut response = duplicate(StatusCode::UNAUTHORIZED, "Authorization");
            challenge(&mut response, Some("invalid_request"));
            return Some(response);
        }
        let given = heads
            .authorization
            .first
            .map(HeaderValue::as_bytes)
            .and_then(bearer);
        // Constant-time comparison: how long the check takes does not reveal
        // how much of a guessed token was right.
        let ok = given
            .is_some_and(|given| crate::discovery::token_matches(given, self.token.as_bytes()));
        if !ok {
            tracing::warn!(
                given = given.is_some(),
                "HTTP request refused: missing or wrong bearer token"
            );
            let mut response = refusal(
                StatusCode::UNAUTHORIZED,
                INVALID_REQUEST,
                &if given.is_some() {
                    "the bearer token is wrong: send the one the server printed, as `Authorization: Bearer <token>`"
                } else {
                    "no bearer token: send the one the server printed, as `Authorization: Bearer <token>`"
                },
            );
            challenge(&mut response, given.is_some().then_some("invalid_token"));
            return Some(response);
        }
        None
    }

    fn local_host(&self, host: &str) -> bool {
        let (name, port) = match host.rsplit_once(':') {
            Some((name, port)) if !name.ends_with(':') => (name, Some(port)),
            _ => (host, None),
        };
        matches!(name, "127.0.0.1" | "localhost" | "[::1]")
            && port.is_none_or(|p| p.parse() == Ok(self.port))
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        if self.extra_origins.iter().any(|o| o == origin) {
            return true;
        }
        let Some(rest) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        let Some((name, port)) = rest.rsplit_once(':') else {
            return false;
        };
        matches!(name, "127.0.0.1" | "localhost" | "[::1]") && port.parse() == Ok(self.port)
    }
}

/// The token of `Bearer <token>` (the scheme matched case-insensitively).
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, token) = value.split_at_checked(7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then(|| token.trim_ascii())
}

/// Adds the `WWW-Authenticate` challenge of a 401, with its `error` if any.
fn challenge(response: &mut HttpResponse, error: Option<&str>) {
    let challenge = match error {
        Some(error) => format!(r#"{CHALLENGE}, error="{error}""#),
        None => CHALLENGE.to_owned(),
    };
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_str(&challenge).expect("ASCII"),
    );
}

/// 415 (the refusal) unless the body is declared `application/json` (once).
pub(crate) fn refuse_content_type(heads: &Heads<'_>) -> Option<HttpResponse> {
    if heads.content_type.repeated {
        return Some(duplicate(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type",
        ));
    }
    if heads
        .content_type
        .first
        .is_some_and(|v| v.as_bytes() == b"application/json")
    {
        return None;
    }
    let media = heads
        .content_type
        .first
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim());
    if media.is_some_and(|m| m.eq_ignore_ascii_case("application/json")) {
        return None;
    }
    Some(refusal(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        INVALID_REQUEST,
        &format_args!(
            "the body must be one JSON-RPC message sent as `Content-Type: application/json`, not {}",
            media.map_or("nothing".to_owned(), |m| format!("`{}`", jsonrpc::clip(m)))
        ),
    ))
}

/// 406 (the refusal) unless the client accepts both answers this endpoint gives: JSON and
/// an event stream (an absent `Accept` accepts anything).
pub(crate) fn refuse_accept(heads: &Heads<'_>) -> Option<HttpResponse> {
    if heads.accepts.is_none_or(|(json, stream)| json && stream) {
        return None;
    }
    Some(refusal(
        StatusCode::NOT_ACCEPTABLE,
        INVALID_REQUEST,
        &"the Accept header must list both `application/json` and `text/event-stream`",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::response::tests::{error_body, parts};

    fn gate() -> Gate<'static> {
        Gate {
            token: "secret",
            port: 8123,
            loopback: true,
            extra_origins: &[],
            usual_host: "127.0.0.1:8123",
        }
    }

    /// A header map with these lines, in order, repeats kept.
    fn header_map(lines: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in lines {
            map.append(
                header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    /// The gate's refusal of a request with these header lines.
    fn gate_refusal(lines: &[(&str, &str)]) -> Option<(u16, Option<String>, String)> {
        let map = header_map(lines);
        gate().refusal(&Heads::read(&map)).map(parts)
    }

    #[test]
    fn a_header_the_gate_reads_is_refused_when_it_comes_twice() {
        let host = ("Host", "127.0.0.1:8123");
        let right = ("Authorization", "Bearer secret");
        let wrong = ("authorization", "Bearer secreT");
        assert_eq!(gate_refusal(&[host, right]), None);
        let two_tokens = Some((
            401,
            Some(r#"Bearer realm="ide-mcp", error="invalid_request""#.to_owned()),
            error_body("duplicate `Authorization` header"),
        ));
        assert_eq!(gate_refusal(&[host, right, wrong]), two_tokens);
        assert_eq!(gate_refusal(&[host, wrong, right]), two_tokens);
        assert_eq!(gate_refusal(&[host, right, right]), two_tokens);
        let forbidden = |name| Some((403, None, error_body(&format!("duplicate `{name}` header"))));
        assert_eq!(gate_refusal(&[host, host, right]), forbidden("Host"));
        assert_eq!(
            gate_refusal(&[host, ("host", "evil.example"), right]),
            forbidden("Host")
        );
        // The server's own origin is allowed once, not twice.
        let own = ("Origin", "http://localhost:8123");
        assert_eq!(gate_refusal(&[host, own, right]), None);
        assert_eq!(gate_refusal(&[host, own, own, right]), forbidden("Origin"));
        assert_eq!(
            gate_refusal(&[host, own, ("origin", "http://evil.example"), right]),
            forbidden("Origin")
        );
        // Host, Origin, then the token: the first failing check answers.
        assert_eq!(
            gate_refusal(&[host, host, own, own, right, wrong]),
            forbidden("Host")
        );
    }

    #[test]
    fn a_content_type_that_comes_twice_is_refused() {
        let json = ("Content-Type", "application/json");
        let map = header_map(&[json]);
        assert!(refuse_content_type(&Heads::read(&map)).is_none());
        let map = header_map(&[json, ("content-type", "text/plain")]);
        assert_eq!(
            refuse_content_type(&Heads::read(&map)).map(parts),
            Some((415, None, error_body("duplicate `Content-Type` header")))
        );
        let map = header_map(&[json, json]);
        assert_eq!(
            refuse_content_type(&Heads::read(&map))
                .map(parts)
                .map(|p| p.0),
            Some(415)
        );
    }

    #[test]
    fn hosts_and_origins_of_this_server_only() {
        let g = gate();
        assert!(g.local_host("127.0.0.1:8123"));
        assert!(g.local_host("localhost"));
        assert!(g.local_host("[::1]:8123"));
        assert!(!g.local_host("127.0.0.1:8124"));
        assert!(!g.local_host("evil.example:8123"));
        assert!(g.origin_allowed("http://localhost:8123"));
        assert!(g.origin_allowed("http://127.0.0.1:8123"));
        assert!(!g.origin_allowed("http://localhost:9999"));
        assert!(!g.origin_allowed("http://evil.example:8123"));
        assert!(!g.origin_allowed("null"));
    }

    #[test]
    fn bearer_tokens_are_read_from_the_header() {
        assert_eq!(bearer(b"Bearer abc"), Some(&b"abc"[..]));
        assert_eq!(bearer(b"bearer  abc "), Some(&b"abc"[..]));
        assert_eq!(bearer(b"Basic abc"), None);
        assert_eq!(bearer(b"Bear"), None);
    }
}
