//! What one resource is: the `ResourceDef` that `#[mcp_resource]` emits, the
//! slice that collects them, URI templates, and what a read returns.

mod contents;
mod def;
mod template;

pub(crate) use contents::write_contents;
pub use contents::{
    IntoResourceContents, RESOURCE_NOT_FOUND, ResourceBody, ResourceContents, ResourceError,
};
pub use def::{
    IDE_MCP_RUNTIME_RESOURCES_V0, ListFn, ListHandler, ListedResource, ResourceDef, resources,
};
pub use template::{TemplateError, UriTemplate, ValueError};
