//! The runtime of ide-mcp: serves `#[mcp_tool]` functions to Claude Code and
//! any other MCP client.
//!
//! ```
//! use ide_mcp_runtime::{mcp_tool, Server};
//!
//! /// Adds two numbers and returns their sum.
//! #[mcp_tool(read_only)]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! let server = Server::builder("my-editor", "1.0").build().unwrap();
//! assert!(server.registry().get("add").is_some());
//! ```
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::dbg_macro))]

mod connection;
pub mod context;
mod decode;
pub mod discovery;
mod dispatch;
pub mod era;
pub mod extract;
mod items;
mod json_cursor;
pub mod jsonrpc;
#[cfg(feature = "lint")]
pub mod lint;
pub mod lockfile;
pub mod notify;
pub mod peer;
pub mod prompt;
pub mod registry;
pub mod relay;
mod request;
pub mod resource;
pub mod result;
pub mod schema;
pub mod server;
pub mod serving;
pub mod session;
mod signal;
pub mod tool;
pub mod transport;

#[doc(hidden)]
#[path = "private/mod.rs"]
pub mod __private0_1;

/// What a tool author needs: the attributes, the results and the call's
/// extras (progress, cancellation, the peer), and the server.
///
/// ```
/// use ide_mcp_runtime::prelude::*;
///
/// /// Says hello to `name`.
/// #[mcp_tool(read_only)]
/// fn hello(name: String) -> CallToolResult {
///     CallToolResult::text(format!("hello, {name}"))
/// }
///
/// let server = Server::builder("my-editor", "1.0").build().unwrap();
/// assert!(server.registry().get("hello").is_some());
/// ```
pub mod prelude {
    pub use crate::extract::{Call, CancellationToken};
    pub use crate::peer::{Peer, Progress};
    pub use crate::prompt::{PromptMessage, PromptResult};
    pub use crate::resource::ResourceContents;
    pub use crate::result::{CallToolResult, Content, IntoToolResult, Json};
    pub use crate::server::Server;
    pub use ide_mcp_macros::{mcp_prompt, mcp_resource, mcp_tool};
}

pub use context::{MissingState, StateReq, ToolContext};
pub use decode::ArgsError;
pub use dispatch::{CancelReason, MAX_IN_FLIGHT};
pub use extract::{Call, CancellationToken, FromCall, OwnedCall, Rejection};
pub use ide_mcp_macros::{mcp_prompt, mcp_resource, mcp_tool};
pub use jsonrpc::RequestId;
pub use notify::Notifier;
pub use peer::{Peer, Progress};
pub use prompt::{PromptDef, PromptMessage, PromptResult};
pub use registry::{RegisteredTool, Registry, RegistryError, RegistryProblem};
pub use relay::{Relay, RelayFuture, RelayReply};
pub use resource::{ListedResource, ResourceContents, ResourceDef};
pub use result::{CallToolResult, Content, IntoToolResult, Json, PreparedResult, ResultOut};
pub use server::{BuildError, Server, ServerBuilder, ServerInfo};
pub use serving::ServingThread;
pub use session::Session;
pub use signal::shutdown_signal;
pub use tool::{Execution, SourceLocation, ToolAnnotations, ToolDef, tools};
pub use transport::MAX_MESSAGE_BYTES;
pub use transport::http::{HttpOptions, HttpServerHandle, HttpStats};
pub use transport::memory::MemoryClient;
pub use transport::ws::{WsOptions, WsServerHandle};

#[doc(hidden)]
pub use request::__check_one_pass;

/// Keeps a tool crate linked into this binary.
///
/// The linker may drop a crate whose items are never referenced, and with it
/// the tools it registers. Name each tool crate once in the binary, e.g.
/// `ide_mcp_runtime::link!(my_tools, more_tools);`, which expands to
/// `use my_tools as _; use more_tools as _;`:
///
/// ```
/// ide_mcp_runtime::link!(std, core); // any crate names work the same way
/// ```
#[macro_export]
macro_rules! link {
    ($($krate:ident),+ $(,)?) => {
        $( #[allow(unused_imports)] use $krate as _; )+
    };
}
