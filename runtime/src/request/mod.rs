//! A request as the session serves it, read from a message's bytes below
//! everything that serves it: the envelope ([`jsonrpc`]), the era its
//! `_meta` names ([`era`](crate::era)), and for `tools/call` the call's params, each
//! read once. A `tools/call` of the usual shape is read in one pass with
//! its envelope ([`one_pass`]); anything else by the general parser.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::jsonrpc::{self, Message, Rejection, RequestId};
use crate::tool::Arguments;

mod call;
mod one_pass;

pub(crate) use call::CallParams;

use crate::era::{Era, Unsupported, era_of, era_of_version};

/// A message as [`parse`] reads it.
pub(crate) enum Parsed<'a> {
    /// A request, with what the session needs of it read.
    Request(Request<'a>),
    /// A notification or a response, as [`jsonrpc::parse`] reads it.
    Other(Message<'a>),
}

/// Parses one message like [`jsonrpc::parse`]; a `tools/call` of the
/// common shape (see [`one_pass`]) is read in one pass with its params.
/// Anything else is read by [`jsonrpc::parse`], which says what is wrong.
pub(crate) fn parse(bytes: &[u8]) -> Result<Parsed<'_>, Rejection<'_>> {
    let call = std::str::from_utf8(bytes)
        .ok()
        .and_then(one_pass::tools_call);
    if let Some((id, call)) = call {
        return Ok(Parsed::Request(Request::of_call(id, call)));
    }
    Ok(match jsonrpc::parse(bytes)? {
        Message::Request { id, method, params } => {
            Parsed::Request(Request::read(id, method, params))
        }
        other => Parsed::Other(other),
    })
}

/// Not public API (the fuzz target `jsonrpc`): panics when [`parse`]
/// reads `bytes` otherwise than [`jsonrpc::parse`] and the session's
/// reading of a call's params do.
#[doc(hidden)]
pub fn __check_one_pass(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert_eq!(one_pass_reading(&text), general_reading(&text), "{text}");
}

/// What a message reads as, for tests and the fuzz target: the general
/// parser's message, and for a `tools/call` its params as the session
/// reads them.
fn general_reading(text: &str) -> String {
    match jsonrpc::parse(text.as_bytes()) {
        Ok(Message::Request { id, method, params }) if method == "tools/call" => {
            match CallParams::read(params) {
                Ok(call) => call_reading(id, &call),
                Err(why) => format!("invalid params {id}: {why}"),
            }
        }
        other => format!("{other:?}"),
    }
}

/// The same, read by [`parse`].
fn one_pass_reading(text: &str) -> String {
    match parse(text.as_bytes()) {
        Ok(Parsed::Request(Request {
            id,
            body: Body::Call(Ok(call)),
            ..
        })) => call_reading(id, &call),
        _ => general_reading(text),
    }
}

fn call_reading(id: RequestId<'_>, call: &CallParams<'_>) -> String {
    format!(
        "call {} {:?} {:?} {:?} {:?}",
        id.as_json(),
        call.name,
        call.arguments.map(Arguments::json),
        call.meta_json(),
        call.json
    )
}

/// The `requestId` (JSON text) that `notifications/cancelled`'s params
/// name, if they name one.
pub(crate) fn cancelled_request(params: Option<&RawValue>) -> Option<&str> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow, rename = "requestId")]
        request_id: &'a RawValue,
    }
    let params: Params<'_> = serde_json::from_str(params?.get()).ok()?;
    Some(params.request_id.get())
}

/// One request as a session serves it: the envelope's parts, the era, and
/// for `tools/call` its params, each read once. A transport that must look
/// at the era or the tool before serving (HTTP's header check) reads the
/// same `Request` the session then serves.
pub(crate) struct Request<'a> {
    pub(crate) id: RequestId<'a>,
    pub(crate) method: Cow<'a, str>,
    /// What follows the method.
    pub(crate) body: Body<'a>,
    /// The era its `_meta` names, or why it names none this server speaks.
    pub(crate) era: Result<Era, Unsupported<'a>>,
}

/// A request's params: a `tools/call`'s read, any other method's as
/// written.
pub(crate) enum Body<'a> {
    /// A `tools/call`'s params, or what is wrong with them.
    Call(Result<CallParams<'a>, String>),
    /// Another method's params.
    Params(Option<&'a RawValue>),
}

impl<'a> Request<'a> {
    /// The request of a parsed message: one pass over a `tools/call`'s
    /// params for its tool, arguments, progress token and version;
    /// `_meta`'s version alone for other methods.
    pub(crate) fn read(
        id: RequestId<'a>,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    ) -> Self {
        if method != "tools/call" {
            return Self {
                id,
                method,
                era: era_of(params),
                body: Body::Params(params),
            };
        }
        match CallParams::read(params) {
            Ok(call) => Self::of_call(id, call),
            Err(why) => Self {
                id,
                method,
                // Invalid params: the era still decides which error comes first.
                era: era_of(params),
                body: Body::Call(Err(why)),
            },
        }
    }

    /// A `tools/call` whose params are read.
    fn of_call(id: RequestId<'a>, call: CallParams<'a>) -> Self {
        Self {
            id,
            method: Cow::Borrowed("tools/call"),
            era: era_of_version(call.meta.as_ref().and_then(|m| m.version)),
            body: Body::Call(Ok(call)),
        }
    }

    /// The params of a `tools/call`, or the message saying why they are invalid.
    pub(crate) fn call(&self) -> Result<&CallParams<'a>, &str> {
        match &self.body {
            Body::Call(Ok(call)) => Ok(call),
            Body::Call(Err(why)) => Err(why),
            Body::Params(_) => Err("not a `tools/call`"),
        }
    }

    /// The params of a method other than `tools/call` (whose are
    /// [`call`](Self::call)).
    pub(crate) fn params(&self) -> Option<&'a RawValue> {
        match self.body {
            Body::Params(params) => params,
            Body::Call(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_read_with_its_envelope_and_anything_else_as_parse_reads_it() {
        // Read in one pass: the method comes before the params.
        let text = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":{"a":[1]},"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","x":{}}},"extra":null}"#;
        assert!(one_pass::tools_call(std::str::from_utf8(text).unwrap()).is_some());
        let Ok(Parsed::Request(request)) = parse(text) else {
            panic!("a request")
        };
        assert_eq!(
            (request.id.as_json(), &*request.method),
            ("4", "tools/call")
        );
        let call = request.call().expect("read in the same pass");
        assert_eq!(
            (&*call.name, call.arguments.map(Arguments::json)),
            ("t", Some(r#"{"a":[1]}"#))
        );

        // Everything else reads as the general parser reads it.
        for text in [
            r#"{"jsonrpc":"2.0","id":4,"method":"tools\/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"params":{"name":"t"},"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":["t",{}]}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":3}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","_meta":7}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":7}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","id":5,"params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t"}} x"#,
            r#"{"jsonrpc":"1.0","id":4,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"name":"t"}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            "42",
            "{",
        ] {
            assert_eq!(one_pass_reading(text), general_reading(text), "{text}");
        }
    }
}
