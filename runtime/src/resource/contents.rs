//! What a `resources/read` answers: the contents a resource function
//! returns, written as `{"contents":[…]}`, or the error it fails with.

use std::fmt::Display;

use base64::Engine as _;
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::jsonrpc;
use crate::result::{Outcome, ResultOut, RpcError};

/// MCP's "resource not found" error code.
pub const RESOURCE_NOT_FOUND: i32 = -32002;

/// One item of a read's `contents`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceContents {
    /// The URI it is the contents of; empty means the URI that was read.
    pub uri: String,
    /// Its MIME type; the resource's when `None`.
    pub mime_type: Option<String>,
    /// The text or the bytes.
    pub body: ResourceBody,
}

/// The contents themselves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResourceBody {
    /// `"text"`: UTF-8 text.
    Text(String),
    /// `"blob"`: bytes, sent in base64.
    Blob(Vec<u8>),
}

impl ResourceContents {
    /// Text contents of the URI that was read.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            uri: String::new(),
            mime_type: None,
            body: ResourceBody::Text(text.into()),
        }
    }

    /// Binary contents of the URI that was read.
    pub fn blob(bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            uri: String::new(),
            mime_type: None,
            body: ResourceBody::Blob(bytes.into()),
        }
    }

    /// Sets the URI (for a read that answers several items).
    #[must_use]
    pub fn with_uri(mut self, uri: impl Into<String>) -> Self {
        self.uri = uri.into();
        self
    }

    /// Sets the MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

impl Serialize for ResourceContents {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("uri", &self.uri)?;
        if let Some(mime_type) = &self.mime_type {
            map.serialize_entry("mimeType", mime_type)?;
        }
        match &self.body {
            ResourceBody::Text(text) => map.serialize_entry("text", text)?,
            ResourceBody::Blob(bytes) => map.serialize_entry(
                "blob",
                &base64::engine::general_purpose::STANDARD.encode(bytes),
            )?,
        }
        map.end()
    }
}

/// Why a read failed: answered as a JSON-RPC error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceError {
    code: i32,
    message: String,
}

impl ResourceError {
    /// Nothing is at this URI now (-32002).
    pub fn not_found(uri: &str) -> Self {
        Self {
            code: RESOURCE_NOT_FOUND,
            message: format!("resource not found: `{}`", jsonrpc::clip(uri)),
        }
    }

    /// The read failed (-32603), for this reason.
    pub fn failed(message: impl Display) -> Self {
        Self {
            code: jsonrpc::INTERNAL_ERROR,
            message: message.to_string(),
        }
    }
}

impl ResourceError {
    fn into_rpc_error(self) -> RpcError {
        RpcError {
            code: self.code,
            message: self.message,
        }
    }
}

impl Display for ResourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ResourceError {}

/// Types a `#[mcp_resource]` function may return.
///
/// `String` (and `&'static str`) is text, `Vec<u8>` a blob, both with the
/// resource's MIME type; [`ResourceContents`] or a `Vec` of them say more.
/// `Option<T>` answers "not found" (-32002) for `None`; `Result<T, E>`
/// fails (-32603) with `E`'s message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the contents of a resource",
    label = "not resource contents",
    note = "return `String` (text), `Vec<u8>` (a blob), `ResourceContents`, a `Vec` of them, or an `Option`/`Result` of those"
)]
pub trait IntoResourceContents {
    /// The contents, or why there are none.
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError>;
}

impl IntoResourceContents for String {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![ResourceContents::text(self)])
    }
}

impl IntoResourceContents for &'static str {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![ResourceContents::text(self)])
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![ResourceContents::blob(self)])
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![self])
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(self)
    }
}

impl<T: IntoResourceContents> IntoResourceContents for Option<T> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        // The URI is filled in by the writer, which knows it.
        self.map_or_else(|| Err(ResourceError::not_found("")), T::into_contents)
    }
}

impl<T: IntoResourceContents, E: Display> IntoResourceContents for Result<T, E> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        match self {
            Ok(value) => value.into_contents(),
            Err(err) => Err(ResourceError::failed(err)),
        }
    }
}

/// Writes what a resource function returned as the read's result, for
/// the URI that was read and the resource's MIME type; or returns its error.
pub(crate) fn write_contents(
    value: impl IntoResourceContents,
    uri: &str,
    mime_type: Option<&str>,
    out: &mut ResultOut<'_>,
) -> Outcome {
    #[derive(serde::Serialize)]
    struct Read<'a> {
        contents: &'a [ResourceContents],
    }
    match value.into_contents() {
        Ok(mut contents) => {
            for item in &mut contents {
                if item.uri.is_empty() {
                    uri.clone_into(&mut item.uri);
                }
                if item.mime_type.is_none() {
                    item.mime_type = mime_type.map(str::to_owned);
                }
            }
            out.build(|buf| {
                serde_json::to_writer(
                    buf,
                    &Read {
                        contents: &contents,
                    },
                )
                .expect("strings serialize");
            });
            Outcome::Written
        }
        Err(err) if err.code == RESOURCE_NOT_FOUND => {
            ResourceError::not_found(uri).into_rpc_error().into()
        }
        Err(err) => err.into_rpc_error().into(),
    }
}
