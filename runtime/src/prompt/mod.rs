//! What one prompt is: the `PromptDef` that `#[mcp_prompt]` emits, the slice
//! that collects them, and the messages a prompt returns.

mod def;
mod messages;

pub use def::{IDE_MCP_RUNTIME_PROMPTS_V0, PromptArgumentType, PromptDef, prompts};
pub(crate) use messages::write_messages;
pub use messages::{IntoPromptResult, PromptContent, PromptMessage, PromptResult, Role};
