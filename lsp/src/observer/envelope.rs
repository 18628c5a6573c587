//! The JSON-RPC envelope of an LSP message, read without reading the rest,
//! and the few bodies the observer writes itself.

use std::borrow::Cow;

use lsp_types::DidChangeTextDocumentParams;
use ropey::Rope;
use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

/// A message's envelope: its members, the large ones left unparsed, except
/// the params of a document's opening or change when `method` comes before
/// them (as editors write it): those are parsed as they are read, so that a
/// large document's text is read once, not scanned for its end first.
#[derive(Debug, Default)]
pub(crate) struct Envelope<'a> {
    pub(crate) method: Option<Cow<'a, str>>,
    pub(crate) id: Option<&'a RawValue>,
    pub(crate) params: Option<&'a RawValue>,
    pub(crate) result: Option<&'a RawValue>,
    pub(crate) error: Option<&'a RawValue>,
    /// The params, already parsed, of a `didOpen` or `didChange`.
    pub(crate) parsed: Option<Parsed>,
}

/// Params parsed with their envelope.
#[derive(Debug)]
pub(crate) enum Parsed {
    DidOpen(OpenParams),
    DidChange(DidChangeTextDocumentParams),
}

/// A `didOpen`'s params, the document's text read straight into a rope
/// (never held as a `String` too: a large document is copied once).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OpenParams {
    pub(crate) text_document: OpenItem,
}

/// The `textDocument` of a `didOpen`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OpenItem {
    pub(crate) uri: lsp_types::Uri,
    pub(crate) language_id: String,
    pub(crate) version: i32,
    pub(crate) text: RopeText,
}

/// A JSON string read into a rope: from the parser's own buffer when it has
/// escapes, from the message itself when not.
#[derive(Debug)]
pub(crate) struct RopeText(pub(crate) Rope);

impl<'de> Deserialize<'de> for RopeText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;

        impl Visitor<'_> for Text {
            type Value = RopeText;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a document's text")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<RopeText, E> {
                Ok(RopeText(Rope::from_str(text)))
            }
        }

        deserializer.deserialize_str(Text)
    }
}

/// A string member, borrowed when it has no escapes.
#[derive(Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Member {
    Method,
    Id,
    Params,
    Result,
    Error,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;

        impl<'de> Visitor<'de> for Members {
            type Value = Envelope<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON-RPC message")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'de>, A::Error> {
                let mut envelope = Envelope::default();
                while let Some(member) = map.next_key()? {
                    match member {
                        Member::Method => envelope.method = Some(map.next_value::<Text<'de>>()?.0),
                        Member::Id => envelope.id = Some(map.next_value()?),
                        Member::Params => match envelope.method.as_deref() {
                            Some("textDocument/didOpen") => {
                                envelope.parsed = Some(Parsed::DidOpen(map.next_value()?));
                            }
                            Some("textDocument/didChange") => {
                                envelope.parsed = Some(Parsed::DidChange(map.next_value()?));
                            }
                            _ => envelope.params = Some(map.next_value()?),
                        },
                        Member::Result => envelope.result = Some(map.next_value()?),
                        Member::Error => envelope.error = Some(map.next_value()?),
                        Member::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(envelope)
            }
        }

        deserializer.deserialize_map(Members)
    }
}

impl<'a> Envelope<'a> {
    pub(crate) fn parse(body: &'a [u8]) -> Option<Self> {
        match serde_json::from_slice(body) {
            Ok(envelope) => Some(envelope),
            Err(error) => {
                tracing::debug!(%error, "not a JSON-RPC message; forwarded as is");
                None
            }
        }
    }

    /// The request id, when the message has one that is a number or string.
    pub(crate) fn request_id(&self) -> Option<Id> {
        serde_json::from_str(self.id?.get()).ok()
    }

    /// The params as `T`; `None` (logged) when absent or of another shape.
    pub(crate) fn params<T: DeserializeOwned>(&self) -> Option<T> {
        parse_member(self.params, self.method.as_deref().unwrap_or("?"))
    }

    /// The result as `T`; `None` (logged) when absent or of another shape.
    pub(crate) fn result<T: DeserializeOwned>(&self, what: &str) -> Option<T> {
        parse_member(self.result, what)
    }

    /// A response's answer, as a request of the IDE's awaits it: the
    /// result (`null` when absent or unreadable), or the error's JSON.
    pub(crate) fn answer(&self) -> Result<serde_json::Value, String> {
        match self.error {
            Some(error) => Err(error.get().to_owned()),
            None => Ok(self
                .result
                .and_then(|r| serde_json::from_str(r.get()).ok())
                .unwrap_or(serde_json::Value::Null)),
        }
    }
}

fn parse_member<T: DeserializeOwned>(raw: Option<&RawValue>, what: &str) -> Option<T> {
    match serde_json::from_str(raw?.get()) {
        Ok(value) => Some(value),
        Err(error) => {
            tracing::warn!(%error, what, "unexpected shape; not observed");
            None
        }
    }
}

/// A JSON-RPC request id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(untagged)]
pub(crate) enum Id {
    Number(i64),
    String(String),
}

/// `{"jsonrpc":"2.0","id":<id>,"result":<result>}`, the id as it came.
pub(crate) fn response(id: &RawValue, result: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(40 + id.get().len() + result.len());
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    body.extend_from_slice(id.get().as_bytes());
    body.extend_from_slice(br#","result":"#);
    body.extend_from_slice(result);
    body.push(b'}');
    body
}

/// `{"uri"}`: a `textDocument` member.
#[derive(Debug, Deserialize)]
pub(crate) struct DocumentId {
    pub(crate) uri: String,
}

/// `list` (a JSON array's text) with `item` appended, without re-serializing
/// the server's items; `None` when `list` is not an array.
pub(crate) fn append_to_array(list: &str, item: &[u8]) -> Option<Vec<u8>> {
    let trimmed = list.trim_end();
    let inner = trimmed.strip_suffix(']')?;
    if !list.trim_start().starts_with('[') {
        return None;
    }
    let empty = inner.trim_start().strip_prefix('[')?.trim().is_empty();
    let mut out = Vec::with_capacity(list.len() + item.len() + 1);
    out.extend_from_slice(inner.as_bytes());
    if !empty {
        out.push(b',');
    }
    out.extend_from_slice(item);
    out.push(b']');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_and_uris() {
        let body = br#"{"jsonrpc":"2.0","id":"x","method":"textDocument/hover","params":{"a":1}}"#;
        let envelope = Envelope::parse(body).unwrap();
        assert_eq!(envelope.method.as_deref(), Some("textDocument/hover"));
        assert_eq!(envelope.request_id(), Some(Id::String("x".into())));
        assert!(Envelope::parse(b"{nope").is_none());
        let reply = response(envelope.id.unwrap(), b"null");
        assert_eq!(reply, br#"{"jsonrpc":"2.0","id":"x","result":null}"#);
    }

    #[test]
    fn document_params_are_parsed_with_the_envelope_when_the_method_comes_first() {
        let params =
            r#"{"textDocument":{"uri":"file:///a.c","languageId":"c","version":1,"text":"x"}}"#;
        let first =
            format!(r#"{{"jsonrpc":"2.0","method":"textDocument\/didOpen","params":{params}}}"#);
        let envelope = Envelope::parse(first.as_bytes()).unwrap();
        assert!(
            matches!(&envelope.parsed, Some(Parsed::DidOpen(p)) if p.text_document.text.0 == "x")
        );
        assert!(envelope.params.is_none());
        let last = format!(r#"{{"params":{params},"method":"textDocument/didOpen"}}"#);
        let envelope = Envelope::parse(last.as_bytes()).unwrap();
        assert!(envelope.parsed.is_none());
        assert_eq!(envelope.params.unwrap().get(), params);
        assert_eq!(envelope.method.as_deref(), Some("textDocument/didOpen"));
    }
}
