//! The `#[mcp_tool]` attribute of ide-mcp (placeholder while the macro is built).
use proc_macro::TokenStream;

/// Turns a function into a registered MCP tool.
#[proc_macro_attribute]
pub fn mcp_tool(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
