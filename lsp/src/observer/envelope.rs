//! The JSON-RPC envelope of an LSP message, read without reading the rest,
//! and the few bodies the observer writes itself.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

/// A message's envelope: its members, the large ones left unparsed.
#[derive(Debug, Deserialize)]
pub(crate) struct Envelope<'a> {
    #[serde(borrow, default)]
    pub(crate) method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(crate) id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) error: Option<&'a RawValue>,
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
}
