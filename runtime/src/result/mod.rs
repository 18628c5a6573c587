//! Turning what a tool returns into the bytes of an MCP `CallToolResult`.
//!
//! Results are written straight into the response through [`ResultOut`],
//! which can only append valid JSON: a tool's value is serialized once, in
//! its escaped form, into the `text` of the content item. No
//! `serde_json::Value` is built on the way.

mod escape;
mod out;

use std::fmt::Display;
use std::sync::Arc;

use serde::Serialize;

pub(crate) use escape::write_display_escaped;
pub use escape::{InStringFormatter, JsonStringWriter};
pub use out::ResultOut;

/// Types that write themselves as a `CallToolResult`.
///
/// Implemented for [`CallToolResult`], [`PreparedResult`], [`Json<T>`] and
/// `Result<T, E>` with `T: IntoToolResult` and `E: Display`: an `Err` is a
/// result with `isError: true` and the error's message, wherever it is
/// returned. A `#[mcp_tool]` function may also return any `T: Serialize`
/// (sent as JSON text) or `Result<T: Serialize, E: Display>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be written as a tool result",
    label = "not a tool result",
    note = "wrap a `Serialize` value in `ide_mcp_runtime::result::Json`, or return a `CallToolResult`"
)]
pub trait IntoToolResult {
    /// Writes one complete `CallToolResult` to `out`.
    fn write_tool_result(self, out: &mut ResultOut<'_>);
}

/// A value sent as JSON text content: `{"content":[{"type":"text","text":"<value as JSON>"}]}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolResult for Json<T> {
    fn write_tool_result(self, out: &mut ResultOut<'_>) {
        out.json_text(&self.0);
    }
}

impl<T: IntoToolResult, E: Display> IntoToolResult for Result<T, E> {
    fn write_tool_result(self, out: &mut ResultOut<'_>) {
        match self {
            Ok(value) => value.write_tool_result(out),
            Err(err) => out.error_text(&err),
        }
    }
}

/// One item of a result's `content`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Content {
    /// `{"type": "text", "text": …}`.
    Text(String),
}

/// A ready MCP `CallToolResult`, for tools that build their result by hand.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallToolResult {
    /// The content items.
    pub content: Vec<Content>,
    /// `structuredContent`, when the tool declares an output schema.
    pub structured_content: Option<serde_json::Value>,
    /// Whether the result reports a failure of the tool.
    pub is_error: bool,
}

impl CallToolResult {
    /// A successful result with one text item.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::Text(text.into())],
            ..Self::default()
        }
    }

    /// A failed result (`isError: true`) with one text item.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::Text(text.into())],
            is_error: true,
            ..Self::default()
        }
    }
}

impl IntoToolResult for CallToolResult {
    fn write_tool_result(self, out: &mut ResultOut<'_>) {
        out.build(|out| {
            out.extend_from_slice(br#"{"content":["#);
            for (i, item) in self.content.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                match item {
                    Content::Text(text) => {
                        out.extend_from_slice(br#"{"type":"text","text":""#);
                        JsonStringWriter::new(out).push_str(text);
                        out.extend_from_slice(br#""}"#);
                    }
                }
            }
            out.push(b']');
            if let Some(value) = &self.structured_content {
                out.extend_from_slice(br#","structuredContent":"#);
                // Serializing a `Value` into a `Vec` cannot fail.
                let _ = serde_json::to_writer(&mut *out, value);
            }
            if self.is_error {
                out.extend_from_slice(br#","isError":true"#);
            }
            out.push(b'}');
        });
    }
}

/// A `CallToolResult` serialized ahead of time and shared.
///
/// Data is read far more often than it changes: a tool can keep the bytes it
/// built for one version of its data and answer from them until it changes.
/// Built only through [`ResultOut`], so its bytes are a valid result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreparedResult(Arc<[u8]>);

impl PreparedResult {
    /// Serializes `value` as the JSON text content of a result, once.
    pub fn json_text<T: Serialize + ?Sized>(value: &T) -> Self {
        Self::written(|out| out.json_text(value))
    }

    /// Prepares any tool result.
    pub fn from_result(result: impl IntoToolResult) -> Self {
        Self::written(|out| result.write_tool_result(out))
    }

    fn written(write: impl FnOnce(&mut ResultOut<'_>)) -> Self {
        let mut buf = Vec::new();
        write(&mut ResultOut::new(&mut buf));
        Self(buf.into())
    }

    /// The bytes of the `CallToolResult` object.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl IntoToolResult for PreparedResult {
    fn write_tool_result(self, out: &mut ResultOut<'_>) {
        out.prepared(&self);
    }
}

impl IntoToolResult for &PreparedResult {
    fn write_tool_result(self, out: &mut ResultOut<'_>) {
        out.prepared(self);
    }
}

#[cfg(test)]
mod tests;
