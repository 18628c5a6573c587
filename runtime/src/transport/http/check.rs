//! The checks every HTTP request passes before its body is read: the
//! [gate](crate::transport::gate) every listener runs (`Host`, `Origin`,
//! the bearer token), the headers this transport reads, found in one pass,
//! then the body's declared type and what the client accepts. Each refusal
//! is a complete [`response`](super::response).

use hyper::StatusCode;
use hyper::header::{self, HeaderMap, HeaderValue};

use super::response::{HttpResponse, duplicate, refusal};
use crate::jsonrpc::{self, INVALID_REQUEST};
use crate::transport::gate::{Credential, Gate, Hosts, Refused};

/// The header naming a 2025-11-25 session.
pub const SESSION_HEADER: &str = "mcp-session-id";

/// The realm of a 401's `WWW-Authenticate` challenge, after the
/// credential's scheme (`Bearer`, or `Nonce` on Copilot's socket).
const REALM: &str = r#"realm="ide-mcp""#;

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
            let header = if name == header::CONTENT_TYPE {
                &mut heads.content_type
            } else if name == header::ACCEPT {
                let (json, stream) = heads.accepts.get_or_insert((false, false));
                accepted(value.as_bytes(), json, stream);
                continue;
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

/// The gate's refusal of a request from a browser page or through a
/// rebound DNS name (403), or without the right bearer token (401), as this
/// transport words it; `None` when the gate admits it. The gate reads
/// `headers` itself: `Host`, `Origin` and `Authorization` must each come at
/// most once.
pub(crate) fn refuse_gate(
    headers: &HeaderMap,
    token: &str,
    hosts: Hosts,
    credential: Credential,
    origins: &[String],
) -> Option<HttpResponse> {
    let gate = Gate {
        token,
        credential,
        hosts,
        origins,
    };
    let refused = gate
        .check(
            headers
                .iter()
                .map(|(name, value)| (name.as_str().as_bytes(), value.as_bytes())),
        )
        .err()?;
    let forbidden =
        |message: &dyn std::fmt::Display| refusal(StatusCode::FORBIDDEN, INVALID_REQUEST, message);
    let unauthorized = |message: &dyn std::fmt::Display, error: Option<&str>| {
        let mut response = refusal(StatusCode::UNAUTHORIZED, INVALID_REQUEST, message);
        challenge(&mut response, credential, error);
        response
    };
    let (no_token, wrong_token) = if credential == Credential::BEARER {
        (
            "no bearer token: send the one the server printed, as `Authorization: Bearer <token>`",
            "the bearer token is wrong: send the one the server printed, as `Authorization: Bearer <token>`",
        )
    } else {
        (
            "no credential: send the header the server's discovery file names",
            "the credential is wrong: send the header the server's discovery file names",
        )
    };
    Some(match refused {
        Refused::DuplicateHost => forbidden(&"duplicate `Host` header"),
        Refused::ForeignHost => match hosts {
            Hosts::Loopback { port } => forbidden(&format_args!(
                "the Host header must be 127.0.0.1:{port}, localhost:{port} or [::1]:{port}"
            )),
            _ => forbidden(&"the Host header must be localhost, 127.0.0.1 or [::1]"),
        },
        Refused::DuplicateOrigin => forbidden(&"duplicate `Origin` header"),
        Refused::Origin => {
            let origin = headers.get(header::ORIGIN).map(HeaderValue::as_bytes);
            forbidden(&format_args!(
                "requests from the origin {} are refused: no web page may call this server",
                jsonrpc::clip(&String::from_utf8_lossy(origin.unwrap_or_default()))
            ))
        }
        Refused::DuplicateCredential => {
            unauthorized(&"duplicate `Authorization` header", Some("invalid_request"))
        }
        Refused::NoCredential => unauthorized(&no_token, None),
        Refused::WrongCredential => unauthorized(&wrong_token, Some("invalid_token")),
    })
}

/// Adds the `WWW-Authenticate` challenge of a 401 in `credential`'s
/// scheme, with its `error` if any.
fn challenge(response: &mut HttpResponse, credential: Credential, error: Option<&str>) {
    let scheme = credential.scheme.unwrap_or("Bearer");
    let challenge = match error {
        Some(error) => format!(r#"{scheme} {REALM}, error="{error}""#),
        None => format!("{scheme} {REALM}"),
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
        refuse_gate(
            &map,
            "secret",
            Hosts::Loopback { port: 8123 },
            Credential::BEARER,
            &[],
        )
        .map(parts)
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
        // Any origin is refused once, and twice with a message of its own.
        let own = ("Origin", "http://localhost:8123");
        assert_eq!(
            gate_refusal(&[host, own, right]),
            Some((
                403,
                None,
                error_body(
                    "requests from the origin http://localhost:8123 are refused: no web page may call this server"
                )
            ))
        );
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
}
