//! Turning what a tool returns into the bytes of an MCP `CallToolResult`.
//!
//! Results are written straight into the response buffer: a tool's value is
//! serialized once, through [`JsonStringWriter`], into the escaped `text` of
//! the content item. No `serde_json::Value` is built on the way.

use std::fmt::Display;
use std::io;
use std::sync::Arc;

use serde::Serialize;

/// The opening of a text-content result, up to the open quote of `text`.
const TEXT_OPEN: &[u8] = br#"{"content":[{"type":"text","text":""#;

/// Types a `#[mcp_tool]` function can return.
///
/// Implemented for every `T: Serialize` (sent as JSON text content), for
/// [`CallToolResult`] and [`PreparedResult`]. `Result<T, E>` with
/// `T: IntoToolResult` and `E: Display` is accepted by the attribute too: an
/// `Err` becomes a result with `isError: true` and the error's message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[mcp_tool]` function",
    label = "not a tool result",
    note = "return a type that implements `serde::Serialize`, a `Result<T, E>` whose error implements `Display`, or an `ide_mcp_runtime::CallToolResult`"
)]
pub trait IntoToolResult {
    /// Appends one complete `CallToolResult` JSON object to `out`, as UTF-8.
    ///
    /// Implementations outside this crate should write through
    /// [`write_json_text`], [`write_error_text`], [`write_structured`] or
    /// another `IntoToolResult`: release builds send what is written as it
    /// is (debug builds check that it is UTF-8).
    fn write_tool_result(self, out: &mut Vec<u8>);
}

// `do_not_recommend`: a type that is not `Serialize` is reported as "cannot
// be returned from a `#[mcp_tool]` function", not as a missing `Serialize`
// with a list of every serializable type.
#[diagnostic::do_not_recommend]
impl<T: Serialize> IntoToolResult for T {
    fn write_tool_result(self, out: &mut Vec<u8>) {
        write_json_text(out, &self);
    }
}

/// Appends `{"content":[{"type":"text","text":"<value as JSON>"}]}` to `out`.
///
/// The value is serialized once, by `serde_json` with [`InStringFormatter`],
/// directly in its escaped form: no intermediate string, no second pass.
/// If `value` fails to serialize (a map with non-string keys, a failing
/// `Serialize` impl), the partial output is discarded and an `isError` result
/// naming the failure is written instead.
pub fn write_json_text<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    out.extend_from_slice(TEXT_OPEN);
    if let Err(err) = write_in_string(out, value) {
        out.truncate(start);
        write_error_text(
            out,
            &format_args!("the tool's result could not be serialized: {err}"),
        );
        return;
    }
    out.extend_from_slice(br#""}]}"#);
}

/// Serializes `value` as JSON, escaped to stand inside a JSON string.
pub fn write_in_string<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), serde_json::Error> {
    let mut serializer = serde_json::Serializer::with_formatter(out, InStringFormatter);
    value.serialize(&mut serializer)
}

/// Appends a text result with `isError: true`, the message as its text.
pub fn write_error_text(out: &mut Vec<u8>, message: &dyn Display) {
    out.extend_from_slice(TEXT_OPEN);
    write_display_escaped(out, message);
    out.extend_from_slice(br#""}],"isError":true}"#);
}

/// Appends `{"content":[…text…],"structuredContent":<value>}`: the value both
/// as JSON text (for clients that read `content`) and as structured content.
pub fn write_structured<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    out.extend_from_slice(TEXT_OPEN);
    let text = write_in_string(out, value);
    out.extend_from_slice(br#""}],"structuredContent":"#);
    let structured = serde_json::to_writer(&mut *out, value);
    if let Err(err) = text.and(structured) {
        out.truncate(start);
        write_error_text(
            out,
            &format_args!("the tool's result could not be serialized: {err}"),
        );
        return;
    }
    out.push(b'}');
}

/// A `serde_json` [`Formatter`](serde_json::ser::Formatter) whose output is
/// JSON already escaped to stand inside a JSON string: `"` is written `\"`,
/// and each escape `serde_json` makes (`\n`, `\"`, `\u001f`, …) gets its
/// backslash escaped once more. Everything else `serde_json` writes (string
/// fragments without special characters, numbers, punctuation) needs no
/// escaping, so nothing is scanned twice.
#[derive(Clone, Copy, Debug, Default)]
pub struct InStringFormatter;

impl serde_json::ser::Formatter for InStringFormatter {
    fn begin_string<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(br#"\""#)
    }

    fn end_string<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(br#"\""#)
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        char_escape: serde_json::ser::CharEscape,
    ) -> io::Result<()> {
        use serde_json::ser::CharEscape;
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let escaped: &[u8] = match char_escape {
            CharEscape::Quote => br#"\\\""#,
            CharEscape::ReverseSolidus => br"\\\\",
            CharEscape::Solidus => br"\\/",
            CharEscape::Backspace => br"\\b",
            CharEscape::FormFeed => br"\\f",
            CharEscape::LineFeed => br"\\n",
            CharEscape::CarriageReturn => br"\\r",
            CharEscape::Tab => br"\\t",
            CharEscape::AsciiControl(byte) => {
                return writer.write_all(&[
                    b'\\',
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(byte >> 4)],
                    HEX[usize::from(byte & 0xf)],
                ]);
            }
        };
        writer.write_all(escaped)
    }

    fn write_raw_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // A `RawValue`: arbitrary JSON, so escape it byte by byte.
        let mut escaped = Vec::with_capacity(fragment.len() + 16);
        JsonStringWriter::new(&mut escaped).push_str(fragment);
        writer.write_all(&escaped)
    }
}

/// Appends `message` as the inside of a JSON string.
pub(crate) fn write_display_escaped(out: &mut Vec<u8>, message: &dyn Display) {
    use std::fmt::Write as _;
    // Writing to a `Vec` cannot fail; a failing `Display` leaves what it wrote.
    let _ = write!(JsonStringWriter::new(out), "{message}");
}

/// An `io::Write` that appends what it is given to a buffer as the inside of a
/// JSON string: `"` and `\` escaped, control characters as `\u00XX`.
///
/// Fed the compact output of `serde_json` (which is valid UTF-8 with no raw
/// control characters), this yields the escaped text in one pass.
pub struct JsonStringWriter<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> JsonStringWriter<'a> {
    /// A writer appending to `out`.
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        Self { out }
    }

    /// Appends `s`, escaped.
    pub fn push_str(&mut self, s: &str) {
        self.push_bytes(s.as_bytes());
    }

    fn push_bytes(&mut self, bytes: &[u8]) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut run = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let escape: &[u8] = match b {
                b'"' => br#"\""#,
                b'\\' => br"\\",
                b'\n' => br"\n",
                b'\r' => br"\r",
                b'\t' => br"\t",
                0..=0x1f => {
                    self.out.extend_from_slice(&bytes[run..i]);
                    self.out.extend_from_slice(&[
                        b'\\',
                        b'u',
                        b'0',
                        b'0',
                        HEX[usize::from(b >> 4)],
                        HEX[usize::from(b & 0xf)],
                    ]);
                    run = i + 1;
                    continue;
                }
                _ => continue,
            };
            self.out.extend_from_slice(&bytes[run..i]);
            self.out.extend_from_slice(escape);
            run = i + 1;
        }
        self.out.extend_from_slice(&bytes[run..]);
    }
}

impl std::fmt::Write for JsonStringWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

impl io::Write for JsonStringWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.push_bytes(buf);
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.push_bytes(buf);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
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
    fn write_tool_result(self, out: &mut Vec<u8>) {
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
    }
}

/// A `CallToolResult` serialized ahead of time and shared.
///
/// Data is read far more often than it changes: a tool can keep the bytes it
/// built for one version of its data and answer from them until it changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreparedResult(Arc<[u8]>);

impl PreparedResult {
    /// Serializes `value` as the JSON text content of a result, once.
    pub fn json_text<T: Serialize + ?Sized>(value: &T) -> Self {
        let mut out = Vec::new();
        write_json_text(&mut out, value);
        Self(out.into())
    }

    /// Prepares any tool result.
    pub fn from_result(result: impl IntoToolResult) -> Self {
        let mut out = Vec::new();
        result.write_tool_result(&mut out);
        Self(out.into())
    }

    /// The bytes of the `CallToolResult` object.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl IntoToolResult for PreparedResult {
    fn write_tool_result(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0);
    }
}

impl IntoToolResult for &PreparedResult {
    fn write_tool_result(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0);
    }
}

// ---- return-kind probing, used by the code `#[mcp_tool]` generates ----------
//
// `Result<T, E>` cannot have its own `IntoToolResult` impl beside the blanket
// one for `T: Serialize` (a `Result` of serializable types is `Serialize`).
// The shim therefore asks, by autoref specialization on a concrete type, which
// kind the return type is: `(&Probe::<R>::NEW).__kind()` resolves to
// `ResultKind` when `R` is a `Result` and to `ValueKind` otherwise. The kinds'
// methods carry the real bounds, so a wrong type fails with the
// `on_unimplemented` message of `IntoToolResult` at the user's span.

/// Marker naming the return type `R` of a tool.
#[doc(hidden)]
pub struct Probe<R>(core::marker::PhantomData<fn() -> R>);

impl<R> Probe<R> {
    #[doc(hidden)]
    pub const NEW: Self = Self(core::marker::PhantomData);
}

/// Chosen when the return type is a `Result`.
#[doc(hidden)]
pub trait ResultTag<T, E> {
    #[doc(hidden)]
    fn __kind(&self) -> ResultKind<T, E>;
}

impl<T, E> ResultTag<T, E> for Probe<Result<T, E>> {
    fn __kind(&self) -> ResultKind<T, E> {
        ResultKind(core::marker::PhantomData)
    }
}

/// Chosen for every other return type.
#[doc(hidden)]
pub trait ValueTag<R> {
    #[doc(hidden)]
    fn __kind(&self) -> ValueKind<R>;
}

impl<R> ValueTag<R> for &Probe<R> {
    fn __kind(&self) -> ValueKind<R> {
        ValueKind(core::marker::PhantomData)
    }
}

/// The return type is `Result<T, E>`.
#[doc(hidden)]
pub struct ResultKind<T, E>(core::marker::PhantomData<fn() -> (T, E)>);

impl<T, E> ResultKind<T, E> {
    #[doc(hidden)]
    pub fn write(self, value: Result<T, E>, out: &mut Vec<u8>)
    where
        T: IntoToolResult,
        E: Display,
    {
        match value {
            Ok(value) => value.write_tool_result(out),
            Err(err) => write_error_text(out, &err),
        }
    }

    #[doc(hidden)]
    pub fn write_structured(self, value: Result<T, E>, out: &mut Vec<u8>)
    where
        T: Serialize,
        E: Display,
    {
        match value {
            Ok(value) => write_structured(out, &value),
            Err(err) => write_error_text(out, &err),
        }
    }

    #[doc(hidden)]
    pub fn output_schema(self) -> crate::schema::Schema
    where
        T: schemars::JsonSchema,
    {
        crate::schema::output_schema::<T>()
    }
}

/// The return type is not a `Result`.
#[doc(hidden)]
pub struct ValueKind<R>(core::marker::PhantomData<fn() -> R>);

impl<R> ValueKind<R> {
    #[doc(hidden)]
    pub fn write(self, value: R, out: &mut Vec<u8>)
    where
        R: IntoToolResult,
    {
        value.write_tool_result(out);
    }

    #[doc(hidden)]
    pub fn write_structured(self, value: R, out: &mut Vec<u8>)
    where
        R: Serialize,
    {
        write_structured(out, &value);
    }

    #[doc(hidden)]
    pub fn output_schema(self) -> crate::schema::Schema
    where
        R: schemars::JsonSchema,
    {
        crate::schema::output_schema::<R>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(r: impl IntoToolResult) -> serde_json::Value {
        let mut out = Vec::new();
        r.write_tool_result(&mut out);
        serde_json::from_slice(&out).expect("valid JSON")
    }

    #[test]
    fn serializable_values_become_json_text() {
        let v = written(serde_json::json!({"a": "q\"uote\\ \u{1} ü 😀", "n": [1, 2]}));
        let text = v["content"][0]["text"].as_str().unwrap();
        assert_eq!(v["content"][0]["type"], "text");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(text).unwrap(),
            serde_json::json!({"a": "q\"uote\\ \u{1} ü 😀", "n": [1, 2]})
        );
        assert!(v.get("isError").is_none());
    }

    #[test]
    fn in_string_formatter_equals_escaping_the_compact_json() {
        let raw =
            serde_json::value::RawValue::from_string(r#"{"r": "a\"b", "n": [1, 2.5e3]}"#.into())
                .unwrap();
        let values = [
            serde_json::json!({"quote\"key": "a\"b\\c/d\n\r\t\u{8}\u{c}\u{1}\u{1f} ü 😀 \u{2028}"}),
            serde_json::json!([null, true, -1, 1.5, u64::MAX, "", {}, []]),
            serde_json::json!({"nested": {"deep": ["\\\"", "\"\\"]}}),
        ];
        for value in &values {
            let mut ours = Vec::new();
            write_in_string(&mut ours, value).unwrap();
            let mut reference = Vec::new();
            JsonStringWriter::new(&mut reference).push_str(&serde_json::to_string(value).unwrap());
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(reference).unwrap()
            );
        }
        let mut ours = Vec::new();
        write_in_string(&mut ours, &raw).unwrap();
        let mut reference = Vec::new();
        JsonStringWriter::new(&mut reference).push_str(raw.get());
        assert_eq!(ours, reference);
    }

    #[test]
    #[allow(clippy::needless_borrow)] // the borrow is what the generated code writes
    fn results_write_errors_with_is_error() {
        let mut out = Vec::new();
        let r: Result<u32, String> = Err("no \"such\"\nthing".into());
        (&Probe::<Result<u32, String>>::NEW)
            .__kind()
            .write(r, &mut out);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"content": [{"type": "text", "text": "no \"such\"\nthing"}], "isError": true})
        );
    }

    #[test]
    fn probe_picks_value_kind_for_plain_types() {
        let mut out = Vec::new();
        (&Probe::<u32>::NEW).__kind().write(7, &mut out);
        assert_eq!(out, br#"{"content":[{"type":"text","text":"7"}]}"#);
    }

    #[test]
    fn call_tool_result_and_structured() {
        assert_eq!(
            written(CallToolResult::error("x")),
            serde_json::json!({"content": [{"type": "text", "text": "x"}], "isError": true})
        );
        let mut out = Vec::new();
        write_structured(&mut out, &serde_json::json!({"k": 1}));
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&out).unwrap(),
            serde_json::json!({"content": [{"type": "text", "text": "{\"k\":1}"}], "structuredContent": {"k": 1}})
        );
    }

    #[test]
    fn unserializable_values_become_errors() {
        let mut map = std::collections::BTreeMap::new();
        map.insert(vec![1], 2);
        let v = written(map);
        assert_eq!(v["isError"], true);
        assert!(
            v["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("could not be serialized")
        );
    }
}
