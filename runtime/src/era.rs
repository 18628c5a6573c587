//! MCP 2026-07-28, the stateless revision, beside the handshake era.
//!
//! A 2026-07-28 request needs no `initialize`: it names its protocol version
//! (with the client's info and capabilities) in `params._meta`, and its result
//! says what kind of result it is (`resultType`). `server/discover` tells a
//! client which versions the server speaks. A request whose `_meta` names no
//! version, or a handshake-era one, is served as before: after `initialize`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::jsonrpc::{self, INVALID_PARAMS, RequestId};
use crate::server::Server;
use crate::session::PROTOCOL_VERSIONS;

/// The stateless protocol versions this server speaks (no `initialize`; the
/// version travels in each request's `_meta`).
pub const STATELESS_VERSIONS: [&str; 1] = ["2026-07-28"];

/// Every version, newest first, as `server/discover` lists them.
pub const SUPPORTED_VERSIONS: [&str; 5] = [
    STATELESS_VERSIONS[0],
    PROTOCOL_VERSIONS[0],
    PROTOCOL_VERSIONS[1],
    PROTOCOL_VERSIONS[2],
    PROTOCOL_VERSIONS[3],
];

/// The request `_meta` key naming a stateless request's protocol version.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The result `_meta` key naming the server (on `server/discover`).
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The request asks for a protocol version this server does not speak; the
/// error's `data` is `{"supported": [...], "requested": "..."}`.
pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;

/// An HTTP request's `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name`
/// header disagrees with its body.
pub const HEADER_MISMATCH: i32 = -32020;

/// How long a client may cache `tools/list` and `server/discover` (ms): the
/// registry is fixed when the server is built, so for as long as the server
/// runs; a day bounds what a client keeps across restarts of the host.
pub const CACHE_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// The era one request is served in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Era {
    /// No stateless version in `_meta`: served only after `initialize`.
    Handshake,
    /// A 2026-07-28 request, served on its own.
    Stateless(&'static str),
}

impl Era {
    pub(crate) fn is_stateless(self) -> bool {
        matches!(self, Self::Stateless(_))
    }
}

/// A request whose `_meta` names a version this server does not speak, or
/// names it with something other than a string.
#[derive(Debug)]
pub(crate) enum Unsupported<'a> {
    Version(Cow<'a, str>),
    NotAString,
}

/// Finds the name of the version's key, `…/protocolVersion`.
static VERSION_KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new("protocolVersion"));

/// Reads the era from a request's params: only `_meta`'s protocol version is
/// looked at; everything else is skipped without being decoded.
pub(crate) fn era_of(params: Option<&RawValue>) -> Result<Era, Unsupported<'_>> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow, rename = "_meta", default)]
        meta: Option<Meta<'a>>,
    }
    #[derive(Deserialize)]
    struct Meta<'a> {
        // `null` must stay visible (not a string), not read as no version.
        #[serde(
            borrow,
            rename = "io.modelcontextprotocol/protocolVersion",
            default,
            deserialize_with = "jsonrpc::present"
        )]
        version: Option<&'a RawValue>,
    }
    let Some(params) = params.filter(|p| p.get().starts_with('{')) else {
        return Ok(Era::Handshake);
    };
    // Most requests carry no version: without the key's name in the text,
    // and without escapes that could spell it otherwise, there is none, and
    // the params need not be parsed a second time.
    let text = params.get().as_bytes();
    if memchr::memchr(b'\\', text).is_none() && VERSION_KEY.find(text).is_none() {
        return Ok(Era::Handshake);
    }
    // A `_meta` that is not an object is the method's own params' problem.
    let Ok(Params {
        meta: Some(Meta { version }),
    }) = serde_json::from_str::<Params<'_>>(params.get())
    else {
        return Ok(Era::Handshake);
    };
    era_of_version(version.map(RawValue::get))
}

/// [`STATELESS_VERSIONS`]' only version as JSON text.
const STATELESS_JSON: &str = "\"2026-07-28\"";
const _: () = assert!(STATELESS_VERSIONS.len() == 1, "update STATELESS_JSON");

/// The era of a request whose `_meta` protocol version (raw JSON, `null`
/// included) was already read: the params of a `tools/call` are read once,
/// with the call's own members.
pub(crate) fn era_of_version(version: Option<&str>) -> Result<Era, Unsupported<'_>> {
    let Some(version) = version else {
        return Ok(Era::Handshake);
    };
    // This revision, as every client writes it.
    if version == STATELESS_JSON {
        return Ok(Era::Stateless(STATELESS_VERSIONS[0]));
    }
    // A string without escapes (every client's) is its text between the quotes.
    let plain = version
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .filter(|v| !v.contains(['\\', '"']))
        .map(Cow::Borrowed);
    let Some(version) = plain.or_else(|| serde_json::from_str::<Cow<'_, str>>(version).ok()) else {
        return Err(Unsupported::NotAString);
    };
    if let Some(v) = STATELESS_VERSIONS.iter().find(|v| **v == version) {
        return Ok(Era::Stateless(v));
    }
    if PROTOCOL_VERSIONS.contains(&&*version) {
        // A handshake-era version in `_meta`: the handshake decides.
        return Ok(Era::Handshake);
    }
    Err(Unsupported::Version(version))
}

/// Answers a request whose `_meta` version cannot be served.
pub(crate) fn write_unsupported(out: &mut Vec<u8>, id: RequestId<'_>, why: &Unsupported<'_>) {
    #[derive(Serialize)]
    struct Data<'a> {
        supported: &'a [&'a str],
        requested: &'a str,
    }
    match why {
        Unsupported::NotAString => jsonrpc::write_error(
            out,
            Some(id),
            INVALID_PARAMS,
            &format_args!(
                "`_meta.{META_PROTOCOL_VERSION}` must be a string such as \"2026-07-28\""
            ),
        ),
        Unsupported::Version(version) => {
            let requested = jsonrpc::clip(version);
            let data = serde_json::to_string(&Data {
                supported: &SUPPORTED_VERSIONS,
                requested,
            })
            .expect("strings serialize");
            jsonrpc::write_error_with_data(
                out,
                Some(id),
                UNSUPPORTED_PROTOCOL_VERSION,
                &format_args!(
                    "unsupported protocol version `{requested}`: this server speaks {}",
                    SUPPORTED_VERSIONS.join(", ")
                ),
                &data,
            );
        }
    }
}

/// Marks the result object that ends `out` (from `start`) as complete:
/// `"resultType":"complete"` goes in as its last member, so the result's own
/// bytes are not moved.
pub(crate) fn stamp_complete(out: &mut Vec<u8>, start: usize) {
    let end = start
        + out[start..]
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(0, |i| i + 1);
    out.truncate(end);
    debug_assert_eq!(out.last(), Some(&b'}'));
    out.pop();
    let empty = out[start..]
        .iter()
        .rev()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{');
    if !empty {
        out.push(b',');
    }
    out.extend_from_slice(br#""resultType":"complete"}"#);
}

/// The `ping` result of a stateless request.
pub(crate) const EMPTY_COMPLETE: &[u8] = br#"{"resultType":"complete"}"#;

/// How a client may cache a stateless `tools/list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListCache {
    /// The registry's list, fixed while the server runs, the same for
    /// everyone: [`CACHE_TTL_MS`], `public`.
    Registry,
    /// A relayed list, which may change at any moment and is this client's
    /// own (the other server found for it):
    /// [`RELAY_LIST_TTL_MS`](crate::relay::RELAY_LIST_TTL_MS), `private`.
    Relayed,
}

/// Appends the `tools/list` response of a stateless request: the list's
/// bytes (`{"tools":[…]}`, serialized once) behind the result type and the
/// cache hints.
pub(crate) fn write_list(out: &mut Vec<u8>, id: RequestId<'_>, list: &[u8], cache: ListCache) {
    use std::io::Write as _;
    let (ttl_ms, scope) = match cache {
        ListCache::Registry => (CACHE_TTL_MS, "public"),
        ListCache::Relayed => (crate::relay::RELAY_LIST_TTL_MS, "private"),
    };
    jsonrpc::write_result_open(out, id);
    let _ = write!(
        out,
        r#"{{"resultType":"complete","ttlMs":{ttl_ms},"cacheScope":"{scope}""#
    );
    // `list` is `{…}`: its members, if any, follow ours.
    let members = list[1..].trim_ascii_start();
    if members.first() != Some(&b'}') {
        out.push(b',');
    }
    out.extend_from_slice(members);
    out.push(jsonrpc::RESULT_CLOSE);
}

/// Appends the `server/discover` response: every supported version, the
/// capabilities, the instructions, and the server's name in `_meta`.
pub(crate) fn write_discover(out: &mut Vec<u8>, id: RequestId<'_>, server: &Server) {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Discovered<'a> {
        result_type: &'a str,
        supported_versions: &'a [&'a str],
        capabilities: Capabilities,
        #[serde(skip_serializing_if = "Option::is_none")]
        instructions: Option<&'a str>,
        ttl_ms: u64,
        cache_scope: &'a str,
        #[serde(rename = "_meta")]
        meta: Meta<'a>,
    }
    #[derive(Serialize)]
    struct Meta<'a> {
        #[serde(rename = "io.modelcontextprotocol/serverInfo")]
        server_info: Info<'a>,
    }
    jsonrpc::write_result_open(out, id);
    let result = Discovered {
        result_type: "complete",
        supported_versions: &SUPPORTED_VERSIONS,
        capabilities: Capabilities::of(server),
        instructions: server.instructions(),
        ttl_ms: CACHE_TTL_MS,
        cache_scope: "public",
        meta: Meta {
            server_info: Info::of(server),
        },
    };
    serde_json::to_writer(&mut *out, &result).expect("strings serialize");
    out.push(jsonrpc::RESULT_CLOSE);
}

/// The server's name and version, as `serverInfo`.
#[derive(Serialize)]
pub(crate) struct Info<'a> {
    name: &'a str,
    version: &'a str,
}

impl<'a> Info<'a> {
    pub(crate) fn of(server: &'a Server) -> Self {
        Self {
            name: &server.info().name,
            version: &server.info().version,
        }
    }
}

/// The server's capabilities: tools, whose list changes only when a relay
/// serves them.
#[derive(Serialize)]
pub(crate) struct Capabilities {
    tools: ToolsCapability,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolsCapability {
    list_changed: bool,
}

impl Capabilities {
    pub(crate) fn of(server: &Server) -> Self {
        Self {
            tools: ToolsCapability {
                list_changed: server.relay().is_some(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stateless_version_as_json() {
        assert_eq!(STATELESS_JSON, format!("\"{}\"", STATELESS_VERSIONS[0]));
        assert_eq!(
            era_of_version(Some(STATELESS_JSON)).ok(),
            Some(Era::Stateless("2026-07-28"))
        );
    }

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    #[test]
    fn the_era_is_read_from_meta_alone() {
        let era = |json: &str| era_of(Some(&raw(json))).map_err(|e| format!("{e:?}"));
        assert_eq!(era("{}"), Ok(Era::Handshake));
        assert_eq!(era(r#"{"_meta":{"progressToken":1}}"#), Ok(Era::Handshake));
        assert_eq!(era(r#"{"_meta":7}"#), Ok(Era::Handshake));
        assert_eq!(
            era(
                r#"{"arguments":{"_meta":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#
            ),
            Ok(Era::Stateless("2026-07-28"))
        );
        assert_eq!(
            era(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}"#),
            Ok(Era::Handshake)
        );
        assert_eq!(
            era(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2031-01-01"}}"#),
            Err(r#"Version("2031-01-01")"#.to_owned())
        );
        assert_eq!(
            era(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728}}"#),
            Err("NotAString".to_owned())
        );
        assert_eq!(era_of(None).unwrap(), Era::Handshake);
        assert_eq!(era_of(Some(&raw("[1]"))).unwrap(), Era::Handshake);
        // The version's key spelled with escapes is still read.
        assert_eq!(
            era(r#"{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}"#),
            Ok(Era::Stateless("2026-07-28"))
        );
        assert_eq!(
            era(r#"{"\u005fmeta":{"io.modelcontextprotocol/protocol\u0056ersion":"2026-07-28"}}"#),
            Ok(Era::Stateless("2026-07-28"))
        );
    }

    #[test]
    fn stamping_appends_the_result_type_without_moving_the_result() {
        for (result, stamped) in [
            (
                r#"{"content":[]}"#,
                r#"{"content":[],"resultType":"complete"}"#,
            ),
            ("{}", r#"{"resultType":"complete"}"#),
            ("{ }\n", r#"{ "resultType":"complete"}"#),
        ] {
            let mut out = b"x".to_vec();
            out.extend_from_slice(result.as_bytes());
            stamp_complete(&mut out, 1);
            assert_eq!(std::str::from_utf8(&out[1..]).unwrap(), stamped);
        }
    }
}
