//! Which era a request is served in, read from its `_meta`: MCP 2026-07-28,
//! the stateless revision (its version in every request's
//! `params._meta`), or the handshake era (2024-11-05 to 2025-11-25, after
//! `initialize`). The versions this server speaks live here too.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::jsonrpc;

/// The handshake-era MCP protocol versions this server negotiates in
/// `initialize`, newest first. A client asking for another version is answered
/// with the newest. The stateless versions are
/// [`STATELESS_VERSIONS`](crate::era::STATELESS_VERSIONS).
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

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
}
