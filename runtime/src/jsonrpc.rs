//! JSON-RPC 2.0 framing: parsing one message from bytes without building a
//! `serde_json::Value` tree, and writing responses into a reused buffer.
//!
//! Ids and params stay borrowed [`RawValue`]s of the input, so a request id is
//! echoed byte for byte and params are decoded once, by whoever needs them.
//! Nesting depth is bounded: the envelope is parsed with `serde_json`'s
//! recursion limit (128) and raw values are skipped iteratively, so a deeply
//! nested message is an error, never a stack overflow.

use std::borrow::Cow;
use std::fmt::Display;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::result::write_display_escaped;

/// Invalid JSON was received.
pub const PARSE_ERROR: i32 = -32700;
/// The JSON sent is not a valid request object (or is not allowed right now).
pub const INVALID_REQUEST: i32 = -32600;
/// The method does not exist.
pub const METHOD_NOT_FOUND: i32 = -32601;
/// Invalid method parameters (including an unknown tool name).
pub const INVALID_PARAMS: i32 = -32602;
/// Internal error (including a panicking tool).
pub const INTERNAL_ERROR: i32 = -32603;
/// Server error: the request was refused because the connection already has
/// [`MAX_IN_FLIGHT`](crate::MAX_IN_FLIGHT) calls running. Nothing was done;
/// retry once some are answered. `data`:
/// `{"reason": "tooManyRequestsInFlight", "limit": 64}`.
pub const SERVER_OVERLOADED: i32 = -32030;
/// Server error: the call was running when the server shut down or the
/// client's input ended, and was stopped before it finished. Its effect, if
/// any, is unknown; a read may be retried on a new connection. `data`:
/// `{"reason": "shutdown"}` or `{"reason": "inputEnded"}`.
pub const REQUEST_CANCELLED: i32 = -32031;

/// A JSON-RPC request id (a string or a number), kept as its raw JSON text so
/// that it is echoed exactly as the client wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestId<'a>(&'a str);

impl<'a> RequestId<'a> {
    /// The id's JSON text, e.g. `7` or `"abc"`.
    pub fn as_json(&self) -> &'a str {
        self.0
    }

    /// An id from JSON text already checked by [`parse`].
    pub(crate) fn from_json(json: &'a str) -> Self {
        Self(json)
    }

    /// Checks that `raw` is a string or a number, the only ids MCP allows.
    fn parse(raw: &'a RawValue) -> Option<Self> {
        match raw.get().as_bytes().first()? {
            b'"' | b'-' | b'0'..=b'9' => Some(Self(raw.get())),
            _ => None,
        }
    }
}

impl Display for RequestId<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// One incoming JSON-RPC message, borrowing from the input bytes.
#[derive(Debug)]
pub enum Message<'a> {
    /// A request: answered exactly once.
    Request {
        /// Echoed in the response.
        id: RequestId<'a>,
        /// The method name.
        method: Cow<'a, str>,
        /// The raw params, when present.
        params: Option<&'a RawValue>,
    },
    /// A notification: never answered.
    Notification {
        /// The method name.
        method: Cow<'a, str>,
        /// The raw params, when present.
        params: Option<&'a RawValue>,
    },
    /// A response or error from the client (this server sends no requests, so
    /// it is ignored).
    Response,
}

/// Why a message could not be accepted; answered with an error response.
#[derive(Debug, PartialEq, Eq)]
pub struct Rejection<'a> {
    /// The id to answer with, `None` for `null` (when it could not be read).
    pub id: Option<RequestId<'a>>,
    /// The JSON-RPC error code.
    pub code: i32,
    /// What was wrong, for a person.
    pub message: String,
}

// A message's members as read, before `finish` checks them. Members of a
// wrong type are kept (raw, or as `Text::Other`), so that they are reported
// by us with a clear message rather than by serde as a parse failure.
// `jsonrpc` and `method` are read as strings in the one pass. Serde's name
// for it stays `Envelope`: clients read "expected struct Envelope".
#[derive(Deserialize)]
#[serde(expecting = "struct Envelope")]
struct Members<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Text<'a>>,
    // `"id": null` must stay visible (an invalid id), not read as no id.
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Text<'a>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// A member that should be a string: the string (borrowed unless it has
/// escapes), or `Other` for any other JSON value (skipped).
enum Text<'a> {
    Str(Cow<'a, str>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> serde::de::Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Text<'de>, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Text::Other)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Text<'de>, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Text::Other)
            }
        }
        de.deserialize_any(TextVisitor)
    }
}

/// Reads a member that is present as its raw value, `null` included (a
/// plain `Option` would read `null` as absent).
pub(crate) fn present<'de, D: serde::Deserializer<'de>>(
    de: D,
) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(de).map(Some)
}

/// Reads a member that is present as its raw JSON text, `null` included.
pub(crate) fn present_text<'de, D: serde::Deserializer<'de>>(
    de: D,
) -> Result<Option<&'de str>, D::Error> {
    <&RawValue>::deserialize(de).map(|raw| Some(raw.get()))
}

/// Parses one message.
pub fn parse(bytes: &[u8]) -> Result<Message<'_>, Rejection<'_>> {
    if bytes.trim_ascii_start().first() == Some(&b'[') {
        // MCP 2025-06-18 dropped JSON-RPC batches; still tell invalid JSON apart.
        return Err(
            match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
                Ok(_) => Rejection {
                    id: None,
                    code: INVALID_REQUEST,
                    message: "batches are not supported: send one JSON-RPC message at a time"
                        .to_owned(),
                },
                Err(err) => reject_unparsed(&err),
            },
        );
    }
    // One UTF-8 check of the whole message; parsing from `str` then borrows
    // strings and raw values without checking each again.
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            return Err(Rejection {
                id: None,
                code: PARSE_ERROR,
                message: format!(
                    "invalid JSON: the message is not UTF-8 (at byte {})",
                    err.valid_up_to()
                ),
            });
        }
    };
    let envelope: Members<'_> = match serde_json::from_str(text) {
        Ok(envelope) => envelope,
        Err(err) => return Err(reject_unparsed(&err)),
    };
    let response = envelope.result.is_some() || envelope.error.is_some();
    finish(
        envelope.jsonrpc.as_ref(),
        envelope.id,
        envelope.method,
        envelope.params,
        response,
    )
}

/// The checks of an envelope once its members are read.
fn finish<'a>(
    jsonrpc: Option<&Text<'a>>,
    id: Option<&'a RawValue>,
    method: Option<Text<'a>>,
    params: Option<&'a RawValue>,
    response: bool,
) -> Result<Message<'a>, Rejection<'a>> {
    let id = match id {
        None => None,
        Some(raw) => match RequestId::parse(raw) {
            Some(id) => Some(id),
            None => {
                return Err(Rejection {
                    id: None,
                    code: INVALID_REQUEST,
                    message: format!(
                        "`id` must be a string or a number, not `{}`",
                        clip(raw.get())
                    ),
                });
            }
        },
    };
    let invalid = |message: String| Rejection {
        id,
        code: INVALID_REQUEST,
        message,
    };
    if !matches!(jsonrpc, Some(Text::Str(v)) if v == "2.0") {
        return Err(invalid(r#"`jsonrpc` must be "2.0""#.to_owned()));
    }
    let Some(method) = method else {
        if response {
            return Ok(Message::Response);
        }
        return Err(invalid("a request needs a `method`".to_owned()));
    };
    let Text::Str(method) = method else {
        return Err(invalid("`method` must be a string".to_owned()));
    };
    if let Some(params) = params
        && !matches!(params.get().as_bytes().first(), Some(b'{' | b'['))
    {
        return Err(invalid("`params` must be an object or an array".to_owned()));
    }
    Ok(match id {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method, params },
    })
}

fn reject_unparsed<'a>(err: &serde_json::Error) -> Rejection<'a> {
    use serde_json::error::Category;
    match err.classify() {
        Category::Data => Rejection {
            id: None,
            code: INVALID_REQUEST,
            message: format!("not a JSON-RPC message: {err}"),
        },
        Category::Io | Category::Syntax | Category::Eof => Rejection {
            id: None,
            code: PARSE_ERROR,
            message: format!("invalid JSON: {err}"),
        },
    }
}

/// At most 64 bytes of `text`, for error messages quoting client input.
pub(crate) fn clip(text: &str) -> &str {
    let mut end = text.len().min(64);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn write_id(out: &mut Vec<u8>, id: Option<RequestId<'_>>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.map_or("null", |id| id.0).as_bytes());
}

/// Appends `{"jsonrpc":"2.0","id":<id>,"result":`; the caller then appends the
/// result and [`RESULT_CLOSE`].
pub fn write_result_open(out: &mut Vec<u8>, id: RequestId<'_>) {
    write_id(out, Some(id));
    out.extend_from_slice(br#","result":"#);
}

/// Closes what [`write_result_open`] opened.
pub const RESULT_CLOSE: u8 = b'}';

/// Appends a whole response with the given result bytes.
pub fn write_result(out: &mut Vec<u8>, id: RequestId<'_>, result: &[u8]) {
    write_result_open(out, id);
    out.extend_from_slice(result);
    out.push(RESULT_CLOSE);
}

/// Appends `{"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":<message>}}`.
pub fn write_error(out: &mut Vec<u8>, id: Option<RequestId<'_>>, code: i32, message: &dyn Display) {
    write_error_open(out, id, code, message);
    out.extend_from_slice(b"}}");
}

/// Like [`write_error`], with `"data":<data>`; `data` must be JSON text.
pub fn write_error_with_data(
    out: &mut Vec<u8>,
    id: Option<RequestId<'_>>,
    code: i32,
    message: &dyn Display,
    data: &str,
) {
    debug_assert!(serde_json::from_str::<&RawValue>(data).is_ok(), "{data}");
    write_error_open(out, id, code, message);
    out.extend_from_slice(br#","data":"#);
    out.extend_from_slice(data.as_bytes());
    out.extend_from_slice(b"}}");
}

/// Appends `{"jsonrpc":"2.0","id":<id>,"error":<error>}`: an error object
/// another server answered, passed on; `error` must be a JSON object.
pub fn write_error_raw(out: &mut Vec<u8>, id: RequestId<'_>, error: &[u8]) {
    debug_assert!(serde_json::from_slice::<&RawValue>(error).is_ok());
    write_id(out, Some(id));
    out.extend_from_slice(br#","error":"#);
    out.extend_from_slice(error);
    out.push(b'}');
}

fn write_error_open(
    out: &mut Vec<u8>,
    id: Option<RequestId<'_>>,
    code: i32,
    message: &dyn Display,
) {
    use std::io::Write as _;
    write_id(out, id);
    out.extend_from_slice(br#","error":{"code":"#);
    let _ = write!(out, "{code}"); // into a `Vec`: cannot fail
    out.extend_from_slice(br#","message":""#);
    write_display_escaped(out, message);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(input: &str) -> (Option<String>, i32, String) {
        let r = parse(input.as_bytes()).unwrap_err();
        (r.id.map(|id| id.as_json().to_owned()), r.code, r.message)
    }

    #[test]
    fn messages_that_are_not_utf8_are_parse_errors() {
        let r = parse(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}").unwrap_err();
        assert_eq!(r.id, None);
        assert_eq!(r.code, PARSE_ERROR);
        assert_eq!(
            r.message,
            "invalid JSON: the message is not UTF-8 (at byte 35)"
        );
    }

    #[test]
    fn jsonrpc_and_method_of_other_types_are_named() {
        assert_eq!(
            rejected(r#"{"jsonrpc":2.0,"id":1,"method":"ping"}"#),
            (
                Some("1".into()),
                INVALID_REQUEST,
                r#"`jsonrpc` must be "2.0""#.into()
            )
        );
        assert_eq!(
            rejected(r#"{"jsonrpc":"2.0","id":1,"method":{"a":[1,{}]}}"#),
            (
                Some("1".into()),
                INVALID_REQUEST,
                "`method` must be a string".into()
            )
        );
    }

    #[test]
    fn requests_keep_raw_ids_and_params() {
        let Message::Request { id, method, params } =
            parse(br#"{"jsonrpc":"2.0","id":"a\"b","method":"x\u0079","params":{"k":[1]}}"#)
                .unwrap()
        else {
            panic!("not a request")
        };
        assert_eq!(id.as_json(), r#""a\"b""#);
        assert_eq!(method, "xy");
        assert_eq!(params.unwrap().get(), r#"{"k":[1]}"#);
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"n"}"#).unwrap(),
            Message::Notification { params: None, .. }
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap(),
            Message::Response
        ));
    }

    #[test]
    fn bad_messages_are_rejected_with_the_right_code() {
        assert_eq!(rejected("{").1, PARSE_ERROR);
        assert_eq!(rejected("[{}]").1, INVALID_REQUEST);
        assert_eq!(rejected("7").1, INVALID_REQUEST);
        assert_eq!(
            rejected(r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#).0,
            None
        );
        assert_eq!(
            rejected(r#"{"jsonrpc":"1.0","id":4,"method":"m"}"#),
            (
                Some("4".into()),
                INVALID_REQUEST,
                r#"`jsonrpc` must be "2.0""#.into()
            )
        );
        assert_eq!(
            rejected(r#"{"jsonrpc":"2.0","id":4,"method":3}"#).1,
            INVALID_REQUEST
        );
        assert_eq!(
            rejected(r#"{"jsonrpc":"2.0","id":4,"method":"m","params":3}"#).1,
            INVALID_REQUEST
        );
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(rejected(&deep).1, INVALID_REQUEST);
        assert_eq!(rejected("[1,").1, PARSE_ERROR);
        let deep_params = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(parse(deep_params.as_bytes()).is_ok());
    }

    #[test]
    fn responses_are_written_exactly() {
        let mut out = Vec::new();
        write_result(&mut out, RequestId("7"), b"{}");
        write_error(&mut out, None, PARSE_ERROR, &"bad \"x\"");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"jsonrpc":"2.0","id":7,"result":{}}{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad \"x\""}}"#
        );
    }
}
