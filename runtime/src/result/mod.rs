//! Turning what a tool returns into the bytes of an MCP `CallToolResult`.
//!
//! Results are written straight into the response through [`ResultOut`],
//! which can only append valid JSON: a tool's value is serialized once, in
//! its escaped form, into the `text` of the content item. No
//! `serde_json::Value` is built on the way.

mod escape;
mod out;
mod outcome;

use std::fmt::Display;

use serde::Serialize;

pub(crate) use escape::write_display_escaped;
pub use escape::{InStringFormatter, JsonStringWriter};
pub use out::{IntoToolResult, PreparedResult, ResultOut};
pub use outcome::{Invalid, Outcome, RpcError};

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
