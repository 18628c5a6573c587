//! Tools served by another server: a [`Server`](crate::Server) built with a
//! [`Relay`] answers `tools/list` and `tools/call` through it instead of its
//! registry (and the resources and prompts methods when the relay
//! [forwards](Relay::forward) them), and keeps the rest of the runtime — every transport, both
//! protocol eras, the bound on calls in flight, cancellation, progress.
//!
//! A bridge to another MCP server (`ide-mcp bridge`, which relays the tools
//! of the IDE running for a workspace) implements [`Relay`]: its list can
//! change while it runs (the server then says `tools.listChanged: true`),
//! and each call is a future that forwards it and resolves to the other
//! server's answer.
//!
//! ```
//! use std::sync::Arc;
//! use ide_mcp_runtime::relay::{Relay, RelayFuture, RelayReply};
//! use ide_mcp_runtime::{Call, Server};
//! use serde_json::value::RawValue;
//!
//! /// Answers every call with the text of its params.
//! struct Echo;
//!
//! impl Relay for Echo {
//!     fn list_result(&self) -> Arc<[u8]> {
//!         Arc::from(&br#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#[..])
//!     }
//!
//!     fn call(&self, _call: &Call<'_>, params: &str) -> RelayFuture {
//!         let text = serde_json::to_string(params).unwrap();
//!         let result = format!(r#"{{"content":[{{"type":"text","text":{text}}}]}}"#);
//!         let result = RawValue::from_string(result).unwrap();
//!         Box::pin(async move { RelayReply::Result(result) })
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder("echo", "1.0").relay(Arc::new(Echo)).build().unwrap();
//! let mut client = server.connect_memory();
//! let answer = client
//!     .request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#)
//!     .await;
//! assert!(answer.contains(r#""name":"echo""#), "{answer}");
//! # }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::value::RawValue;

use crate::extract::Call;

/// How long a 2026-07-28 client may cache a relayed `tools/list` (ms): not
/// at all, since the list follows the other server and may change at any
/// moment; the list is answered from memory, so asking again is cheap.
pub const RELAY_LIST_TTL_MS: u64 = 0;

/// What a relayed call answers.
#[derive(Debug)]
pub enum RelayReply {
    /// A `CallToolResult` object, in the handshake era's shape: for a
    /// 2026-07-28 request the runtime adds `resultType` itself. A tool's own
    /// failure is a result with `isError: true`, as for any tool.
    Result(Box<RawValue>),
    /// A JSON-RPC error object (`{"code":…,"message":…}`, `data` too when
    /// given), sent unchanged as the error of the client's request.
    Error(Box<RawValue>),
}

/// The future of one relayed call. Dropped before it resolves when the
/// client cancels the call, or when the connection ends or the server
/// shuts down with the call still running: a relay tells the other server
/// then (a drop guard), as it learns of it no other way.
pub type RelayFuture = Pin<Box<dyn Future<Output = RelayReply> + Send + 'static>>;

/// Serves `tools/list` and `tools/call` from elsewhere; see the
/// [module documentation](self).
pub trait Relay: Send + Sync + 'static {
    /// The `result` of `tools/list` as it stands: `{"tools":[…]}`, JSON.
    /// Called for every `tools/list`, on the connection's task: keep it
    /// ready rather than fetching it here.
    fn list_result(&self) -> Arc<[u8]>;

    /// Starts one `tools/call`. `params` is the JSON text of its params as
    /// the client sent them (an object with the tool's `name`; `arguments`
    /// and `_meta` when given, the protocol version of a 2026-07-28 request
    /// included). `call` carries the request's id, its progress token, the
    /// client (where `notifications/progress` for that token go) and the
    /// token cancelled when the call is given up on. Called on the
    /// connection's task: return at once, and do the work in the future.
    fn call(&self, call: &Call<'_>, params: &str) -> RelayFuture;

    /// Whether the other server has `capability` (`"resources"` or
    /// `"prompts"`, a key of the `capabilities` it answered `initialize`
    /// with): `initialize` and `server/discover` then advertise it, with
    /// `listChanged: true`: the relay passes the other server's
    /// `notifications/<capability>/list_changed` on to its clients, through
    /// the server's [`Notifier`](crate::Notifier). By default, none.
    fn has_capability(&self, capability: &str) -> bool {
        let _ = capability;
        false
    }

    /// Starts one request of another method than `tools/list` and
    /// `tools/call`: `resources/list`, `resources/templates/list`,
    /// `resources/read`, `prompts/list` or `prompts/get`. `params` is the
    /// JSON text of its params as the client sent them (`None` when it sent
    /// none); `call` is as for [`call`](Self::call). The future's
    /// [`RelayReply::Result`] is that method's result object. `None` (the
    /// default): not relayed, and the client is answered -32601 (method not
    /// found); the server's own resources and prompts are never served
    /// beside a relay.
    fn forward(&self, call: &Call<'_>, method: &str, params: Option<&str>) -> Option<RelayFuture> {
        let _ = (call, method, params);
        None
    }
}

/// The methods a server with a relay hands to [`Relay::forward`].
pub const FORWARDED_METHODS: [&str; 5] = [
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
];

/// A server's relay, shared by its connections.
#[derive(Clone)]
pub(crate) struct RelayRef(pub(crate) Arc<dyn Relay>);

impl std::fmt::Debug for RelayRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Relay")
    }
}
