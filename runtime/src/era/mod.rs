//! MCP 2026-07-28, the stateless revision, beside the handshake era.
//!
//! A 2026-07-28 request needs no `initialize`: it names its protocol version
//! (with the client's info and capabilities) in `params._meta`, and its result
//! says what kind of result it is (`resultType`). `server/discover` tells a
//! client which versions the server speaks. A request whose `_meta` names no
//! version, or a handshake-era one, is served as before: after `initialize`.
//!
//! The one home of the eras: the versions spoken and the era a request is
//! read in (`read`), and the answers only the stateless era has (here).

use serde::Serialize;

use crate::jsonrpc::{self, INVALID_PARAMS, RequestId};
use crate::server::Server;

pub(crate) use read::{Era, Unsupported, era_of, era_of_version};
pub use read::{META_PROTOCOL_VERSION, PROTOCOL_VERSIONS, STATELESS_VERSIONS, SUPPORTED_VERSIONS};

mod read;

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
    /// A list read from the editor's state at each request (the open
    /// documents among the resources): never cached, this client's own.
    Live,
}

/// Appends the `tools/list` response of a stateless request: the list's
/// bytes (`{"tools":[…]}`, serialized once) behind the result type and the
/// cache hints.
pub(crate) fn write_list(out: &mut Vec<u8>, id: RequestId<'_>, list: &[u8], cache: ListCache) {
    use std::io::Write as _;
    let (ttl_ms, scope) = match cache {
        ListCache::Registry => (CACHE_TTL_MS, "public"),
        ListCache::Relayed => (crate::relay::RELAY_LIST_TTL_MS, "private"),
        ListCache::Live => (0, "private"),
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
/// serves them; resources and prompts when any is registered (the prompts'
/// list is the binary's, fixed; the resources' changes when a template
/// lists the host's state), or with a relay, when it says the other
/// server has them.
#[derive(Serialize)]
pub(crate) struct Capabilities {
    tools: ListChanged,
    #[serde(skip_serializing_if = "Option::is_none")]
    resources: Option<ListChanged>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompts: Option<ListChanged>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListChanged {
    list_changed: bool,
}

impl Capabilities {
    pub(crate) fn of(server: &Server) -> Self {
        let registry = server.registry();
        let fixed = || ListChanged {
            list_changed: false,
        };
        let changing = || ListChanged { list_changed: true };
        if let Some(relay) = server.relay() {
            // The other server's, whatever this one links.
            return Self {
                tools: ListChanged { list_changed: true },
                // Their changes are the other server's, passed on (see
                // `Relay::has_capability`).
                resources: relay.has_capability("resources").then(changing),
                prompts: relay.has_capability("prompts").then(changing),
            };
        }
        Self {
            tools: ListChanged {
                list_changed: false,
            },
            // A template's lister reads the host's state: the host says
            // when what it lists changes (`notifications/resources/list_changed`).
            resources: registry.has_resources().then(|| ListChanged {
                list_changed: registry.has_listed_resources(),
            }),
            prompts: (!registry.prompts().is_empty()).then(fixed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
