//! The `ResourceDef` that `#[mcp_resource]` emits, and the slice that collects them.

use serde::Serialize;

use crate::context::StateReq;
use crate::extract::{Call, FromCall, Rejection};
use crate::tool::{CallFn, Execution, SourceLocation};

/// Every resource linked into the binary, collected by `#[mcp_resource]`
/// (named like the tools' slice, see [`IDE_MCP_RUNTIME_TOOLS_V0`](crate::tool::IDE_MCP_RUNTIME_TOOLS_V0)).
#[linkme::distributed_slice]
pub static IDE_MCP_RUNTIME_RESOURCES_V0: [ResourceDef];

/// Every `#[mcp_resource]` linked into this binary, in link order.
pub fn resources() -> &'static [ResourceDef] {
    &IDE_MCP_RUNTIME_RESOURCES_V0
}

/// Lists the resources a template stands for now (`list = path` of
/// `#[mcp_resource]`): generated around the user's function.
pub type ListFn = fn(call: &Call<'_>) -> Vec<ListedResource>;

/// One registered resource: a fixed URI, or a URI template whose variables
/// are the function's arguments.
///
/// Written by `#[mcp_resource]`; read it through [`Registry`](crate::Registry).
#[derive(Debug)]
pub struct ResourceDef {
    /// The URI (`ide://diagnostics`) or the RFC 6570 level-1 template (`file:///{path}`).
    pub uri: &'static str,
    /// The resource's name: `name = ".."`, else the function's.
    pub name: &'static str,
    /// A human-readable title.
    pub title: Option<&'static str>,
    /// What the resource holds, from its doc comment.
    pub description: &'static str,
    /// The MIME type of its contents, if known.
    pub mime_type: Option<&'static str>,
    /// For a template: the resources it stands for now, shown in `resources/list`.
    pub list: Option<ListFn>,
    /// Pushes the states the parameters (and the lister's) need.
    pub states: fn(&mut Vec<StateReq>),
    /// How the shim is run.
    pub execution: Execution,
    /// The generated read shim: its arguments are the template's variables.
    pub call: CallFn,
    /// Where the resource was defined.
    pub location: SourceLocation,
}

impl ResourceDef {
    /// Whether [`uri`](Self::uri) is a template.
    pub fn is_template(&self) -> bool {
        self.uri.contains('{')
    }
}

/// One entry of `resources/list`: a concrete resource a template stands for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedResource {
    /// Its URI, which the template matches.
    pub uri: String,
    /// A short name (a file's name).
    pub name: String,
    /// A human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it holds now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type; the template's when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl ListedResource {
    /// An entry with this URI and name and nothing else.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            ..Self::default()
        }
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// Functions that list a template's resources: any `fn` whose parameters
/// (none, one or two) are taken from the call, as a tool's extractors are,
/// returning `Vec<ListedResource>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot list resources",
    label = "not a lister",
    note = "`list = f` names a function `fn f(..) -> Vec<ListedResource>` whose up to two parameters are states (`&T`) or other `FromCall` extractors"
)]
pub trait ListHandler<'a, Params> {
    /// Lists, or says why a parameter could not be taken.
    fn list(self, call: &Call<'a>) -> Result<Vec<ListedResource>, Rejection>;
    /// Pushes the states the parameters need.
    fn states(out: &mut Vec<StateReq>);
}

impl<'a, F> ListHandler<'a, ()> for F
where
    F: FnOnce() -> Vec<ListedResource>,
{
    fn list(self, _: &Call<'a>) -> Result<Vec<ListedResource>, Rejection> {
        Ok(self())
    }
    fn states(_: &mut Vec<StateReq>) {}
}

impl<'a, F, A> ListHandler<'a, (A,)> for F
where
    F: FnOnce(A) -> Vec<ListedResource>,
    A: FromCall<'a>,
{
    fn list(self, call: &Call<'a>) -> Result<Vec<ListedResource>, Rejection> {
        Ok(self(A::from_call(call)?))
    }
    fn states(out: &mut Vec<StateReq>) {
        A::required_states(out);
    }
}

impl<'a, F, A, B> ListHandler<'a, (A, B)> for F
where
    F: FnOnce(A, B) -> Vec<ListedResource>,
    A: FromCall<'a>,
    B: FromCall<'a>,
{
    fn list(self, call: &Call<'a>) -> Result<Vec<ListedResource>, Rejection> {
        Ok(self(A::from_call(call)?, B::from_call(call)?))
    }
    fn states(out: &mut Vec<StateReq>) {
        A::required_states(out);
        B::required_states(out);
    }
}
