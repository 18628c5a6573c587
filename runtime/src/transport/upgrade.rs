//! The checks on a WebSocket upgrade request, made before any upgrade: no
//! browser, no DNS rebinding, the right token.
//!
//! In 2025 the IDE servers of the official extensions accepted connections
//! from any web page (CVE-2025-52882); these checks are why ours does not.

use subtle::ConstantTimeEq as _;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode, header};

/// The header carrying the auth token (matched case-insensitively, as every
/// HTTP header name is).
pub const AUTH_HEADER: &str = "x-claude-code-ide-authorization";

/// The subprotocol echoed when offered (the official TypeScript MCP client
/// refuses a server that does not select it).
const SUBPROTOCOL: &str = "mcp";

// The signature is tungstenite's callback's: the large error type is theirs.
#[allow(clippy::result_large_err)]
/// Accepts or refuses the upgrade request: 403 for any `Origin` header (only
/// browsers send one; the CLI never does) and for a `Host` other than
/// 127.0.0.1 or localhost (DNS rebinding), 401 for a missing or wrong token.
pub(crate) fn check_upgrade(
    request: &Request,
    mut response: Response,
    token: &str,
    port: u16,
) -> Result<Response, ErrorResponse> {
    let headers = request.headers();
    if headers.contains_key(header::ORIGIN) {
        tracing::warn!("upgrade refused: the request has an `Origin` header (a browser)");
        return Err(refusal(
            StatusCode::FORBIDDEN,
            "requests from browsers are refused",
        ));
    }
    // Exactly one `Host`: with two, which one a check reads is a guess.
    let mut hosts = headers.get_all(header::HOST).iter();
    let host = hosts.next().and_then(|h| h.to_str().ok());
    if hosts.next().is_some() || !host.is_some_and(|h| host_allowed(h, port)) {
        tracing::warn!(
            host,
            "upgrade refused: the `Host` header is not 127.0.0.1 or localhost"
        );
        return Err(refusal(
            StatusCode::FORBIDDEN,
            "the Host header must be 127.0.0.1 or localhost",
        ));
    }
    let given = headers
        .get(AUTH_HEADER)
        .map_or(&b""[..], HeaderValue::as_bytes);
    // Constant-time comparison (the `subtle` crate): how long the check takes
    // does not reveal how much of a guessed token was right. Only a length
    // mismatch returns early, and the length of a UUID is no secret.
    if !bool::from(given.ct_eq(token.as_bytes())) {
        tracing::warn!("upgrade refused: missing or wrong auth token");
        return Err(refusal(
            StatusCode::UNAUTHORIZED,
            "missing or wrong x-claude-code-ide-authorization token",
        ));
    }
    let offers_mcp = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == SUBPROTOCOL);
    if offers_mcp {
        response.headers_mut().insert(
            header::SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_static(SUBPROTOCOL),
        );
    }
    Ok(response)
}

/// `127.0.0.1` or `localhost` (any case), alone or with our port.
fn host_allowed(host: &str, port: u16) -> bool {
    let (name, host_port) = match host.rsplit_once(':') {
        Some((name, p)) => (name, Some(p)),
        None => (host, None),
    };
    let name_ok = name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost");
    let port_ok = host_port.is_none_or(|p| p.parse::<u16>() == Ok(port));
    name_ok && port_ok
}

fn refusal(status: StatusCode, message: &str) -> ErrorResponse {
    let body = format!("{message}\n");
    let length = HeaderValue::from(body.len());
    let mut response = ErrorResponse::new(Some(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_LENGTH, length);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

#[cfg(test)]
mod tests {
    use super::host_allowed;

    #[test]
    fn hosts() {
        for ok in [
            "127.0.0.1:80",
            "127.0.0.1",
            "localhost:80",
            "LocalHost",
            "localhost",
        ] {
            assert!(host_allowed(ok, 80), "{ok}");
        }
        for bad in [
            "127.0.0.1:81",
            "evil.example:80",
            "localhost.evil:80",
            "[::1]:80",
            "",
            ":80",
            "127.0.0.1:x",
        ] {
            assert!(!host_allowed(bad, 80), "{bad}");
        }
    }
}
