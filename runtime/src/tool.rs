//! What one tool is: the `ToolDef` that `#[mcp_tool]` emits, and the slice that collects them.

use std::future::Future;
use std::pin::Pin;

use serde_json::value::RawValue;

use crate::context::StateReq;
use crate::extract::Call;
use crate::result::{Invalid, Outcome, ResultOut};
use crate::schema::Schema;

/// Every tool linked into the binary, collected by `#[mcp_tool]` through `linkme`.
///
/// `linkme` names the link section after the static, and two slices with one
/// name in a binary panic at first use. The name therefore carries the project
/// and the runtime's major version: two semver-incompatible copies of the
/// runtime keep separate slices, and no other crate's `TOOLS` collides.
/// Read it through [`tools`] or, better, [`Registry::global`](crate::Registry::global).
#[linkme::distributed_slice]
pub static IDE_MCP_RUNTIME_TOOLS_V0: [ToolDef];

/// Every `#[mcp_tool]` linked into this binary, in link order (unstable: the
/// registry sorts them by name).
pub fn tools() -> &'static [ToolDef] {
    &IDE_MCP_RUNTIME_TOOLS_V0
}

/// What an `async` tool's future resolves to: the writer of its
/// `CallToolResult` object, called once with the buffer to append it to,
/// saying how the write ended.
///
/// A writer rather than bytes, so that a call that completes at once is
/// written straight into the response, not into a buffer copied after.
pub type ToolReply = Box<dyn FnOnce(&mut ResultOut<'_>) -> Outcome + Send + 'static>;

/// The future an `async` tool returns.
pub type ToolFuture = Pin<Box<dyn Future<Output = ToolReply> + Send + 'static>>;

/// What a call shim ([`CallFn`]) returns: how it ended, or the future it
/// goes on in.
#[must_use = "the dispatcher answers by the outcome"]
pub enum CallOutcome {
    /// The shim ended: a result was written, or the call failed.
    Done(Outcome),
    /// An `async` tool's future; nothing was written yet.
    Pending(ToolFuture),
}

impl std::fmt::Debug for CallOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Done(outcome) => f.debug_tuple("Done").field(outcome).finish(),
            Self::Pending(_) => f.write_str("Pending(..)"),
        }
    }
}

impl From<Outcome> for CallOutcome {
    fn from(outcome: Outcome) -> Self {
        Self::Done(outcome)
    }
}

impl From<Invalid> for CallOutcome {
    fn from(invalid: Invalid) -> Self {
        Self::Done(invalid.into())
    }
}

/// A `tools/call`'s `arguments`: their JSON text, valid JSON.
///
/// The runtime reads a call's envelope in one pass that checks the
/// arguments' JSON as it skips them; the shim then splits the object into
/// its members without reading it again through serde.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arguments<'a>(&'a str);

impl<'a> Arguments<'a> {
    /// Text the runtime checked to be one JSON value.
    pub(crate) fn checked(json: &'a str) -> Self {
        Self(json)
    }

    /// The arguments' JSON text, as the client wrote it.
    pub fn json(self) -> &'a str {
        self.0
    }
}

impl<'a> From<&'a RawValue> for Arguments<'a> {
    fn from(raw: &'a RawValue) -> Self {
        Self(raw.get())
    }
}

/// The call shim `#[mcp_tool]` generates.
///
/// It decodes `args` (the raw `arguments` object of `tools/call`, `None`
/// when absent), takes the other parameters from `call` and calls the tool.
/// A synchronous tool appends one complete MCP `CallToolResult` JSON object
/// to `out` and returns [`Outcome::Written`]. An `async` tool returns the
/// future whose reply writes that object. Either returns
/// [`Outcome::Invalid`], writing nothing, when its input is refused (for
/// instance arguments that do not decode).
pub type CallFn =
    fn(call: &Call<'_>, args: Option<Arguments<'_>>, out: &mut ResultOut<'_>) -> CallOutcome;

/// How the runtime runs a tool's shim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Execution {
    /// Run inline on the connection task; for fast, non-blocking reads.
    Inline,
    /// Run on the blocking thread pool (`#[mcp_tool(blocking)]`); for tools that may wait on locks or I/O.
    Blocking,
    /// An `async fn`: the future is spawned and may complete out of order.
    Async,
}

/// The MCP tool annotations (hints to the client; never trusted for security).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolAnnotations {
    /// A human-readable title for the tool.
    pub title: Option<&'static str>,
    /// The tool does not modify its environment.
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    pub destructive_hint: Option<bool>,
    /// Calling the tool again with the same arguments has no further effect.
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// Annotations with no hint set.
    pub const NONE: Self = Self {
        title: None,
        read_only_hint: None,
        destructive_hint: None,
        idempotent_hint: None,
        open_world_hint: None,
    };

    /// Whether any field is set (an empty `annotations` object is left out of `tools/list`).
    pub fn is_empty(&self) -> bool {
        *self == Self::NONE
    }
}

/// Where a tool was defined, for error messages such as duplicate names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceLocation {
    /// The defining crate (`CARGO_PKG_NAME`).
    pub crate_name: &'static str,
    /// The source file (`file!()`).
    pub file: &'static str,
    /// The line of the function (`line!()`).
    pub line: u32,
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}:{})", self.crate_name, self.file, self.line)
    }
}

/// One registered tool: everything `tools/list` shows and `tools/call` needs.
///
/// Written by `#[mcp_tool]`; a host never builds one by hand, but may read them
/// through [`Registry`](crate::Registry).
#[derive(Debug)]
pub struct ToolDef {
    /// The wire name, checked against `^[A-Za-z0-9._-]{1,128}$` at compile time.
    pub name: &'static str,
    /// What the tool does, from its doc comment; the model reads it.
    pub description: &'static str,
    /// MCP annotations.
    pub annotations: ToolAnnotations,
    /// The JSON Schema of the `arguments` object, as schemars generates it (cleaned by the registry).
    pub input_schema: fn() -> Schema,
    /// The JSON Schema of `structuredContent`, for tools that opt in with `#[mcp_tool(structured)]`.
    pub output_schema: Option<fn() -> Schema>,
    /// Pushes the states the parameters need; `ServerBuilder::build` refuses to start without them.
    pub states: fn(&mut Vec<StateReq>),
    /// How the shim is run.
    pub execution: Execution,
    /// The generated call shim.
    pub call: CallFn,
    /// The face (an agent's protocol, `#[mcp_tool(face = "gemini")]`) that
    /// alone lists the tool; `None`: the global registry's.
    pub face: Option<&'static str>,
    /// Where the tool was defined.
    pub location: SourceLocation,
}

impl std::fmt::Debug for StateReq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.type_name)
    }
}
