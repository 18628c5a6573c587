//! Diagnostics as servers send them (`textDocument/publishDiagnostics`, the
//! items of a pulled report), read one at a time: a diagnostic that cannot
//! be read costs itself, not its document's whole set, and a field of an
//! unexpected type costs only that field. The observer and the LSP client
//! both read diagnostics here.
//!
//! A diagnostic is kept when its `range` (two positions of non-negative
//! integers) and its `message` (a string, or a `MarkupContent`'s `value`, as
//! LSP 3.18 allows) can be read. `code` is taken in any shape servers send:
//! a number, a string, or VS Code's `{"value": 7, "target": "…"}` (its
//! value); a number past `i32` is kept as its text. A `severity` other
//! than 1–4, a `code` of another shape, a `source` that is not a string,
//! and `tags`, `relatedInformation` or `codeDescription` that do not read
//! as LSP's, are dropped and the diagnostic kept; `data` is any JSON. No
//! shape of a diagnostic makes the reader fail; only a `diagnostics` that is
//! not an array does, or bytes that are not JSON.

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range};
use serde::Deserialize;
use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Number, Value};

/// A `textDocument/publishDiagnostics`'s params.
#[derive(Debug, Deserialize)]
pub(crate) struct Published {
    pub(crate) uri: String,
    pub(crate) version: Option<i32>,
    pub(crate) diagnostics: DiagnosticList,
}

/// A JSON array of diagnostics, read one at a time: those kept, and what
/// was not read.
#[derive(Debug, Default)]
pub(crate) struct DiagnosticList {
    pub(crate) kept: Vec<Diagnostic>,
    pub(crate) unread: Unread,
}

/// What a [`DiagnosticList`] did not read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Unread {
    /// Diagnostics dropped: not an object, or without a readable `range` or
    /// `message`.
    pub(crate) diagnostics: usize,
    /// Fields of the kept diagnostics dropped for their type.
    pub(crate) fields: usize,
    /// The name of the first field dropped.
    pub(crate) first_field: Option<&'static str>,
}

impl Unread {
    fn field(&mut self, name: &'static str) {
        self.fields += 1;
        self.first_field.get_or_insert(name);
    }

    fn add(&mut self, other: Self) {
        self.diagnostics += other.diagnostics;
        self.fields += other.fields;
        if self.first_field.is_none() {
            self.first_field = other.first_field;
        }
    }
}

/// Logs what one server's diagnostics lost: a warning the first time, then
/// at debug level (a server that sends an odd shape sends it every time).
#[derive(Debug, Default)]
pub(crate) struct UnreadLog {
    warned: AtomicBool,
}

impl UnreadLog {
    /// Logs `unread` of the diagnostics of `uri` from `server`, if anything.
    pub(crate) fn note(&self, server: Option<&str>, uri: &str, unread: Unread) {
        if unread == Unread::default() {
            return;
        }
        let Unread {
            diagnostics,
            fields,
            first_field,
        } = unread;
        if self.warned.swap(true, Ordering::Relaxed) {
            tracing::debug!(
                server,
                uri,
                diagnostics,
                fields,
                first_field,
                "diagnostics of an unexpected shape: unreadable ones dropped, fields of a wrong type ignored"
            );
        } else {
            tracing::warn!(
                server,
                uri,
                diagnostics,
                fields,
                first_field,
                "diagnostics of an unexpected shape: unreadable ones dropped, fields of a wrong type ignored (further ones of this server are logged at debug level)"
            );
        }
    }
}

impl<'de> Deserialize<'de> for DiagnosticList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct List;

        impl<'de> Visitor<'de> for List {
            type Value = DiagnosticList;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of diagnostics")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<DiagnosticList, A::Error> {
                let mut list = DiagnosticList::default();
                while let Some(field) =
                    seq.next_element_seed(Lenient(DiagnosticShape(&mut list.unread)))?
                {
                    match field {
                        Field::Read(diagnostic) => list.kept.push(diagnostic),
                        Field::Null | Field::Odd => list.unread.diagnostics += 1,
                    }
                }
                Ok(list)
            }
        }

        deserializer.deserialize_seq(List)
    }
}

/// What a lenient read of one JSON value found.
enum Field<T> {
    /// `null`: an optional field left out.
    Null,
    Read(T),
    /// A shape the reader does not take; read past.
    Odd,
}

impl<T> Field<T> {
    fn read(self) -> Option<T> {
        match self {
            Field::Read(value) => Some(value),
            Field::Null | Field::Odd => None,
        }
    }

    /// The value of an optional field; an odd one is noted in `unread`.
    fn optional(self, name: &'static str, unread: &mut Unread) -> Option<T> {
        if matches!(self, Field::Odd) {
            unread.field(name);
        }
        self.read()
    }
}

/// A reader of one JSON value that takes any shape: the shapes it knows
/// give a value, any other is read past and gives `None`.
trait Shape<'de>: Sized {
    type Out;

    fn number(self, _number: Number) -> Option<Self::Out> {
        None
    }

    fn text(self, _text: Cow<'_, str>) -> Option<Self::Out> {
        None
    }

    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Self::Out>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// A [`Shape`] as a serde visitor and seed.
struct Lenient<S>(S);

impl<'de, S: Shape<'de>> Lenient<S> {
    fn found(found: Option<S::Out>) -> Field<S::Out> {
        found.map_or(Field::Odd, Field::Read)
    }
}

impl<'de, S: Shape<'de>> DeserializeSeed<'de> for Lenient<S> {
    type Value = Field<S::Out>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, S: Shape<'de>> Visitor<'de> for Lenient<S> {
    type Value = Field<S::Out>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Field::Odd)
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Self::found(self.0.number(v.into())))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Self::found(self.0.number(v.into())))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Self::found(
            Number::from_f64(v).and_then(|n| self.0.number(n)),
        ))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Self::found(self.0.text(Cow::Borrowed(v))))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Self::found(self.0.text(Cow::Owned(v))))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Field::Null)
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Field::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Field::Odd)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Ok(Self::found(self.0.map(map)?))
    }
}

/// The member names the shapes below read; any other is skipped.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum Key {
    Range,
    Start,
    End,
    Line,
    Character,
    Message,
    Severity,
    Code,
    CodeDescription,
    Source,
    Tags,
    RelatedInformation,
    Data,
    Value,
    #[serde(other)]
    Other,
}

/// A line or a character offset.
struct Count;

impl Shape<'_> for Count {
    type Out = u32;

    fn number(self, number: Number) -> Option<u32> {
        u32::try_from(number.as_u64()?).ok()
    }
}

/// `{"line", "character"}`.
struct PositionShape;

impl<'de> Shape<'de> for PositionShape {
    type Out = Position;

    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Position>, A::Error> {
        let (mut line, mut character) = (None, None);
        while let Some(key) = map.next_key()? {
            match key {
                Key::Line => line = map.next_value_seed(Lenient(Count))?.read(),
                Key::Character => character = map.next_value_seed(Lenient(Count))?.read(),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(line.zip(character).map(|(l, c)| Position::new(l, c)))
    }
}

/// `{"start", "end"}`.
struct RangeShape;

impl<'de> Shape<'de> for RangeShape {
    type Out = Range;

    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Range>, A::Error> {
        let (mut start, mut end) = (None, None);
        while let Some(key) = map.next_key()? {
            match key {
                Key::Start => start = map.next_value_seed(Lenient(PositionShape))?.read(),
                Key::End => end = map.next_value_seed(Lenient(PositionShape))?.read(),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(start.zip(end).map(|(s, e)| Range::new(s, e)))
    }
}

/// A string.
#[derive(Clone, Copy)]
struct Text;

impl Shape<'_> for Text {
    type Out = String;

    fn text(self, text: Cow<'_, str>) -> Option<String> {
        Some(text.into_owned())
    }
}

/// A string, or a `MarkupContent` (`{"kind", "value"}`): its value.
struct MessageShape;

impl<'de> Shape<'de> for MessageShape {
    type Out = String;

    fn text(self, text: Cow<'_, str>) -> Option<String> {
        Some(text.into_owned())
    }

    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Option<String>, A::Error> {
        value_of(map, Text)
    }
}

/// 1 to 4.
struct SeverityShape;

impl Shape<'_> for SeverityShape {
    type Out = DiagnosticSeverity;

    fn number(self, number: Number) -> Option<DiagnosticSeverity> {
        match number.as_u64()? {
            1 => Some(DiagnosticSeverity::ERROR),
            2 => Some(DiagnosticSeverity::WARNING),
            3 => Some(DiagnosticSeverity::INFORMATION),
            4 => Some(DiagnosticSeverity::HINT),
            _ => None,
        }
    }
}

/// A number (one outside `i32` kept as its text), a string, or an object
/// with a `value` that is one of those (VS Code's `{value, target}`).
#[derive(Clone, Copy)]
struct CodeShape;

impl<'de> Shape<'de> for CodeShape {
    type Out = NumberOrString;

    fn number(self, number: Number) -> Option<NumberOrString> {
        Some(match number.as_i64().map(i32::try_from) {
            Some(Ok(n)) => NumberOrString::Number(n),
            _ => NumberOrString::String(number.to_string()),
        })
    }

    fn text(self, text: Cow<'_, str>) -> Option<NumberOrString> {
        Some(NumberOrString::String(text.into_owned()))
    }

    fn map<A: MapAccess<'de>>(self, map: A) -> Result<Option<NumberOrString>, A::Error> {
        value_of(map, CodeShape)
    }
}

/// The `value` member of an object, read as `shape`; the others skipped.
fn value_of<'de, A: MapAccess<'de>, S: Shape<'de> + Copy>(
    mut map: A,
    shape: S,
) -> Result<Option<S::Out>, A::Error> {
    let mut value = None;
    while let Some(key) = map.next_key()? {
        if let Key::Value = key {
            value = map.next_value_seed(Lenient(shape))?.read();
        } else {
            map.next_value::<IgnoredAny>()?;
        }
    }
    Ok(value)
}

/// One diagnostic; what it drops is noted in the list's [`Unread`].
struct DiagnosticShape<'u>(&'u mut Unread);

impl<'de> Shape<'de> for DiagnosticShape<'_> {
    type Out = Diagnostic;

    fn map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Diagnostic>, A::Error> {
        let mut d = Diagnostic::default();
        let (mut range, mut message) = (None, None);
        let mut unread = Unread::default();
        while let Some(key) = map.next_key()? {
            match key {
                Key::Range => range = map.next_value_seed(Lenient(RangeShape))?.read(),
                Key::Message => message = map.next_value_seed(Lenient(MessageShape))?.read(),
                Key::Severity => {
                    d.severity = map
                        .next_value_seed(Lenient(SeverityShape))?
                        .optional("severity", &mut unread);
                }
                Key::Code => {
                    d.code = map
                        .next_value_seed(Lenient(CodeShape))?
                        .optional("code", &mut unread);
                }
                Key::Source => {
                    d.source = map
                        .next_value_seed(Lenient(Text))?
                        .optional("source", &mut unread);
                }
                Key::CodeDescription => {
                    d.code_description = typed(map.next_value()?, "codeDescription", &mut unread);
                }
                Key::Tags => d.tags = typed(map.next_value()?, "tags", &mut unread),
                Key::RelatedInformation => {
                    d.related_information =
                        typed(map.next_value()?, "relatedInformation", &mut unread);
                }
                Key::Data => d.data = Some(map.next_value::<Value>()?).filter(|v| !v.is_null()),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let (Some(range), Some(message)) = (range, message) else {
            return Ok(None);
        };
        self.0.add(unread);
        d.range = range;
        d.message = message;
        Ok(Some(d))
    }
}

/// A rarely sent field of LSP's type, read from its JSON: `None` for `null`,
/// and (noted in `unread`) for a value that does not read as `T`.
fn typed<T: DeserializeOwned>(value: Value, name: &'static str, unread: &mut Unread) -> Option<T> {
    if value.is_null() {
        return None;
    }
    let read = serde_json::from_value(value).ok();
    if read.is_none() {
        unread.field(name);
    }
    read
}

#[cfg(test)]
mod tests {
    use lsp_types::{DiagnosticTag, Uri};
    use serde_json::json;

    use super::*;

    fn list(diagnostics: &Value) -> DiagnosticList {
        let from_text: DiagnosticList = serde_json::from_str(&diagnostics.to_string()).unwrap();
        // The LSP client reads parsed JSON: the same list.
        let from_value = DiagnosticList::deserialize(diagnostics).unwrap();
        assert_eq!(
            (&from_text.kept, from_text.unread),
            (&from_value.kept, from_value.unread)
        );
        from_text
    }

    fn range(line: u32) -> Value {
        json!({"start": {"line": line, "character": 1}, "end": {"line": line, "character": 4}})
    }

    /// What `{"range": range(line), "message": message}` reads as.
    fn plain(line: u32, message: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 1), Position::new(line, 4)),
            message: message.to_owned(),
            ..Diagnostic::default()
        }
    }

    fn with_code(line: u32, code: NumberOrString) -> Diagnostic {
        Diagnostic {
            code: Some(code),
            ..plain(line, "m")
        }
    }

    #[test]
    fn codes_are_read_in_every_shape_servers_send() {
        let read = list(&json!([
            {"range": range(0), "message": "m", "code": 7},
            {"range": range(1), "message": "m", "code": "E0425"},
            {"range": range(2), "message": "m", "code": {"value": 7, "target": "https://example.com/7"}},
            {"range": range(3), "message": "m", "code": {"target": "https://example.com/x", "value": "no-unused-vars"}},
            {"range": range(4), "message": "m", "code": 4_294_967_296_u64},
            {"range": range(5), "message": "m", "code": -1},
            {"range": range(6), "message": "m", "code": null},
        ]));
        assert_eq!(
            read.kept,
            [
                with_code(0, NumberOrString::Number(7)),
                with_code(1, NumberOrString::String("E0425".into())),
                with_code(2, NumberOrString::Number(7)),
                with_code(3, NumberOrString::String("no-unused-vars".into())),
                with_code(4, NumberOrString::String("4294967296".into())),
                with_code(5, NumberOrString::Number(-1)),
                plain(6, "m"),
            ]
        );
        assert_eq!(read.unread, Unread::default());
    }

    #[test]
    fn a_diagnostic_without_a_readable_range_or_message_is_dropped_alone() {
        let read = list(&json!([
            {"range": range(0), "message": "first"},
            {"message": "no range"},
            {"range": range(1), "message": "second"},
        ]));
        assert_eq!(read.kept, [plain(0, "first"), plain(1, "second")]);
        assert_eq!(
            read.unread,
            Unread {
                diagnostics: 1,
                ..Unread::default()
            }
        );
        let read = list(&json!([
            {"range": range(0)},
            {"range": range(0), "message": 3},
            {"range": {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}}, "message": "m"},
            {"range": {"start": {"line": 0, "character": 0}}, "message": "m"},
            {"range": {"start": {"line": 0.5, "character": 0}, "end": {"line": 1, "character": 0}}, "message": "m"},
            {"range": [0, 1], "message": "m"},
            "a string",
            null,
            {"range": range(2), "message": "kept", "severity": "error"},
        ]));
        assert_eq!(read.kept, [plain(2, "kept")]);
        assert_eq!(
            read.unread,
            Unread {
                diagnostics: 8,
                fields: 1,
                first_field: Some("severity"),
            }
        );
    }

    #[test]
    fn a_field_of_a_wrong_type_is_dropped_and_its_diagnostic_kept() {
        for (field, value) in [
            ("severity", json!("error")),
            ("severity", json!(7)),
            ("severity", json!(1.5)),
            ("code", json!(true)),
            ("code", json!({"target": "https://example.com"})),
            ("code", json!([7])),
            ("source", json!(42)),
            ("tags", json!("unnecessary")),
            ("tags", json!([1, "x"])),
            ("relatedInformation", json!({})),
            ("codeDescription", json!({"href": 3})),
        ] {
            let mut diagnostic = json!({"range": range(0), "message": "m"});
            diagnostic[field] = value.clone();
            let read = list(&json!([diagnostic]));
            assert_eq!(read.kept, [plain(0, "m")], "{field}: {value}");
            assert_eq!(
                read.unread,
                Unread {
                    diagnostics: 0,
                    fields: 1,
                    first_field: Some(field),
                },
                "{field}: {value}"
            );
        }
    }

    #[test]
    fn every_field_of_lsp_is_read_as_lsp_types_reads_it() {
        let full = json!({
            "range": range(3),
            "severity": 2,
            "code": "E1",
            "codeDescription": {"href": "https://example.com/E1"},
            "source": "rustc",
            "message": "unused",
            "tags": [1],
            "relatedInformation": [{"location": {"uri": "file:///a.rs", "range": range(0)}, "message": "here"}],
            "data": {"fix": 1},
            "unknownMember": [1, 2],
        });
        let strict: Diagnostic = serde_json::from_value(full.clone()).unwrap();
        let read = list(&json!([full]));
        assert_eq!(read.kept, std::slice::from_ref(&strict));
        assert_eq!(read.unread, Unread::default());
        assert_eq!(strict.tags, Some(vec![DiagnosticTag::UNNECESSARY]));
        assert_eq!(
            strict.code_description.unwrap().href,
            "https://example.com/E1".parse::<Uri>().unwrap()
        );
    }

    #[test]
    fn a_markup_message_is_read_as_its_text() {
        let read = list(&json!([
            {"range": range(0), "message": {"kind": "markdown", "value": "`x` is unused"}},
            {"range": range(1), "message": {"kind": "markdown"}},
        ]));
        assert_eq!(read.kept, [plain(0, "`x` is unused")]);
        assert_eq!(read.unread.diagnostics, 1);
    }

    #[test]
    fn a_publish_is_read_whole_or_not_at_all_around_its_diagnostics() {
        let publish = json!({"uri": "file:///a.rs", "version": 3, "diagnostics": [
            {"range": range(0), "message": "m", "code": {"value": 7, "target": "t"}},
        ]});
        let read: Published = serde_json::from_value(publish).unwrap();
        assert_eq!((read.uri.as_str(), read.version), ("file:///a.rs", Some(3)));
        assert_eq!(
            read.diagnostics.kept,
            [with_code(0, NumberOrString::Number(7))]
        );
        for bad in [
            json!({"uri": "file:///a.rs", "diagnostics": {"range": range(0), "message": "m"}}),
            json!({"uri": "file:///a.rs", "diagnostics": null}),
            json!({"diagnostics": []}),
        ] {
            assert!(
                serde_json::from_value::<Published>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    /// What is logged while `f` runs: `(level, line)` of each event.
    fn logged(f: impl FnOnce()) -> Vec<(String, String)> {
        use std::sync::{Arc, Mutex};

        use crate::sync::lock;

        #[derive(Clone, Default)]
        struct Captured(Arc<Mutex<Vec<u8>>>);

        impl std::io::Write for Captured {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                let mut bytes = lock(&self.0);
                bytes.extend_from_slice(buf);
                Ok(buf.len())
            }

            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }

        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .without_time()
            .with_target(false)
            .finish();
        tracing::subscriber::with_default(subscriber, f);
        let bytes = captured.0.lock().unwrap().clone();
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(|line| {
                let line = line.trim_start();
                let (level, rest) = line.split_once(' ').unwrap();
                (level.to_owned(), rest.to_owned())
            })
            .collect()
    }

    #[test]
    fn the_log_warns_once_per_server_and_only_of_something() {
        let unread = Unread {
            diagnostics: 1,
            fields: 2,
            first_field: Some("severity"),
        };
        let log = UnreadLog::default();
        let lines = logged(|| {
            log.note(Some("pyright"), "file:///a.py", Unread::default());
            log.note(Some("pyright"), "file:///a.py", unread);
            log.note(Some("pyright"), "file:///b.py", unread);
            log.note(Some("pyright"), "file:///c.py", Unread::default());
        });
        let message = "diagnostics of an unexpected shape: unreadable ones dropped, fields of a wrong type ignored";
        let fields = r#"diagnostics=1 fields=2 first_field="severity""#;
        assert_eq!(
            lines,
            [
                (
                    "WARN".to_owned(),
                    format!(
                        r#"{message} (further ones of this server are logged at debug level) server="pyright" uri="file:///a.py" {fields}"#
                    )
                ),
                (
                    "DEBUG".to_owned(),
                    format!(r#"{message} server="pyright" uri="file:///b.py" {fields}"#)
                ),
            ]
        );
        // Another server's log warns again.
        let other = UnreadLog::default();
        let lines = logged(|| other.note(Some("ruff"), "file:///a.py", unread));
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].0, "WARN");
    }
}
