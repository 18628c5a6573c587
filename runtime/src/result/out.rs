//! [`ResultOut`]: where a tool writes its `CallToolResult`, and the only way
//! to write one, so that whatever a tool writes is one valid JSON object.

use std::fmt::Display;
use std::sync::Arc;

use serde::Serialize;

use super::escape::{InStringFormatter, write_display_escaped};

/// Types that write themselves as a `CallToolResult`.
///
/// Implemented for [`CallToolResult`](super::CallToolResult), [`PreparedResult`],
/// [`Json<T>`](super::Json) and
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

/// The opening of a text-content result, up to the open quote of `text`.
const TEXT_OPEN: &[u8] = br#"{"content":[{"type":"text","text":""#;

/// Where a tool writes its MCP `CallToolResult`, straight into the response.
///
/// It can only append what keeps the response valid JSON: a value serialized
/// as text content, an error message, structured content, or a
/// [`PreparedResult`] (built by these same writers). Each write replaces the
/// one before, so what is written is always one complete result object.
#[derive(Debug)]
pub struct ResultOut<'a> {
    buf: &'a mut Vec<u8>,
    start: usize,
}

impl<'a> ResultOut<'a> {
    /// A writer appending one result to `buf`.
    pub fn new(buf: &'a mut Vec<u8>) -> Self {
        let start = buf.len();
        Self { buf, start }
    }

    /// Whether a result was written.
    pub fn is_written(&self) -> bool {
        self.buf.len() > self.start
    }

    /// The bytes of the result written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// Drops what was written, for the next write.
    fn begin(&mut self) -> &mut Vec<u8> {
        self.buf.truncate(self.start);
        self.buf
    }

    /// `{"content":[{"type":"text","text":"<value as JSON>"}]}`.
    ///
    /// The value is serialized once, by `serde_json` with [`InStringFormatter`],
    /// directly in its escaped form: no intermediate string, no second pass.
    /// If `value` fails to serialize (a map with non-string keys, a failing
    /// `Serialize` impl), an `isError` result naming the failure is written
    /// instead.
    pub fn json_text<T: Serialize + ?Sized>(&mut self, value: &T) {
        let out = self.begin();
        out.extend_from_slice(TEXT_OPEN);
        match in_string(out, value) {
            Ok(()) => out.extend_from_slice(br#""}]}"#),
            Err(err) => self.unserializable(&err),
        }
    }

    /// A text result with `isError: true`, the message as its text.
    pub fn error_text(&mut self, message: &dyn Display) {
        let out = self.begin();
        out.extend_from_slice(TEXT_OPEN);
        write_display_escaped(out, message);
        out.extend_from_slice(br#""}],"isError":true}"#);
    }

    /// `{"content":[…text…],"structuredContent":<value>}`: the value both as
    /// JSON text (for clients that read `content`) and as structured content.
    pub fn structured<T: Serialize + ?Sized>(&mut self, value: &T) {
        let out = self.begin();
        out.extend_from_slice(TEXT_OPEN);
        let text = in_string(out, value);
        out.extend_from_slice(br#""}],"structuredContent":"#);
        match text.and_then(|()| serde_json::to_writer(&mut *out, value)) {
            Ok(()) => out.push(b'}'),
            Err(err) => self.unserializable(&err),
        }
    }

    /// A result prepared earlier.
    pub fn prepared(&mut self, result: &PreparedResult) {
        self.begin().extend_from_slice(result.as_bytes());
    }

    /// Appends JSON the caller built from valid parts (`CallToolResult`, a
    /// resource's contents, a prompt's messages).
    pub(crate) fn build(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        write(self.begin());
    }

    fn unserializable(&mut self, err: &serde_json::Error) {
        self.error_text(&format_args!(
            "the tool's result could not be serialized: {err}"
        ));
    }
}

/// Serializes `value` as JSON, escaped to stand inside a JSON string.
fn in_string<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), serde_json::Error> {
    let mut serializer = serde_json::Serializer::with_formatter(out, InStringFormatter);
    value.serialize(&mut serializer)
}

#[cfg(test)]
pub(super) fn in_string_for_tests<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), serde_json::Error> {
    in_string(out, value)
}
