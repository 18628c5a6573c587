//! The `PromptDef` that `#[mcp_prompt]` emits, and the slice that collects them.

use crate::context::StateReq;
use crate::schema::Schema;
use crate::tool::{CallFn, Execution, SourceLocation};

/// Every prompt linked into the binary, collected by `#[mcp_prompt]`
/// (named like the tools' slice, see [`IDE_MCP_RUNTIME_TOOLS_V0`](crate::tool::IDE_MCP_RUNTIME_TOOLS_V0)).
#[linkme::distributed_slice]
pub static IDE_MCP_RUNTIME_PROMPTS_V0: [PromptDef];

/// Every `#[mcp_prompt]` linked into this binary, in link order.
pub fn prompts() -> &'static [PromptDef] {
    &IDE_MCP_RUNTIME_PROMPTS_V0
}

/// One registered prompt: `prompts/list` shows it, `prompts/get` runs it.
///
/// Written by `#[mcp_prompt]`; read it through [`Registry`](crate::Registry).
#[derive(Debug)]
pub struct PromptDef {
    /// The prompt's name (Claude Code's slash command): `name = ".."`, else the function's.
    pub name: &'static str,
    /// A human-readable title.
    pub title: Option<&'static str>,
    /// What the prompt does, from its doc comment.
    pub description: &'static str,
    /// The arguments' schema, one string property each, from which the
    /// registry lists `arguments` (required unless an `Option`).
    pub arguments: fn() -> Schema,
    /// Pushes the states the parameters need.
    pub states: fn(&mut Vec<StateReq>),
    /// How the shim is run.
    pub execution: Execution,
    /// The generated shim: it decodes the arguments and writes the messages.
    pub call: CallFn,
    /// Where the prompt was defined.
    pub location: SourceLocation,
}

/// The types a prompt argument may have: MCP's prompt arguments are strings.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[mcp_prompt]` argument",
    label = "prompt arguments are strings",
    note = "take `String`, or `Option<String>` for an argument that is not required; a state of the server is taken by reference, `&T`"
)]
pub trait PromptArgumentType {}

impl PromptArgumentType for String {}
impl PromptArgumentType for Option<String> {}
