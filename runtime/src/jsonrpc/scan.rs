//! A `tools/call` read as clients write it, in one pass over its bytes
//! without serde: `jsonrpc`, `id` and `method` before `params`, plain
//! strings where the envelope and the call's params are read. Everything
//! the pass skips (arguments, unknown members, `_meta`'s client info) is
//! still checked to be valid JSON.
//!
//! It reads less than serde would accept: anything else (escapes in a
//! member name or in the values it reads, a member twice, `params` before
//! `method`, a number or an id it is unsure of, deep nesting) makes it give
//! up with `None`, and the caller reads the message with the general
//! parser, which also says what is wrong with it. It never accepts what
//! that parser refuses (a property test checks the two against each other).

use std::borrow::Cow;
use std::cell::RefCell;

use serde_json::value::RawValue;

use super::RequestId;
use crate::session::CallParams;
use crate::tool::Arguments;

/// How deep a skipped value may nest before the general parser takes over.
const MAX_DEPTH: usize = 64;

/// The id and params of `text` when it is a `tools/call` request of the
/// common shape; `None` for anything else.
pub(super) fn tools_call(text: &str) -> Option<(RequestId<'_>, CallParams<'_>)> {
    let mut at = Cursor { text, pos: 0 };
    let (mut jsonrpc, mut id, mut method, mut call) = (false, None, false, None);
    at.object(|at, key| {
        match key {
            "jsonrpc" if !jsonrpc => {
                jsonrpc = true;
                at.str_is("2.0")?.then_some(())
            }
            "id" if id.is_none() => {
                id = Some(at.id()?);
                Some(())
            }
            "method" if !method => {
                method = true;
                at.str_is("tools/call")?.then_some(())
            }
            // `params` after `method`, as the general parser reads it.
            "params" if method && call.is_none() => {
                call = Some(at.call_params()?);
                Some(())
            }
            // A response's members, a member twice, `params` first.
            "jsonrpc" | "id" | "method" | "params" | "result" | "error" => None,
            _ => at.skip_value(),
        }
    })?;
    at.skip_ws();
    if at.pos != text.len() || !jsonrpc {
        return None;
    }
    Some((id?, call?))
}

/// Hands each member of the JSON object `text` to `member`, with its name
/// and its value's JSON text; `None` (having handed out some members,
/// perhaps) when `text` is not an object whose member names are plain
/// strings, or not JSON: read it with the general parser then.
pub(crate) fn object_members<'a>(
    text: &'a str,
    mut member: impl FnMut(&'a str, &'a str),
) -> Option<()> {
    let mut at = Cursor { text, pos: 0 };
    at.object(|at, name| {
        member(name, at.raw_text()?);
        Some(())
    })?;
    at.skip_ws();
    (at.pos == text.len()).then_some(())
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes().get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next byte after whitespace, not taken.
    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes().get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.bytes()[self.pos..]
            .starts_with(word)
            .then(|| self.pos += word.len())
    }

    /// An object, each member handed to `member` with its name (plain);
    /// `member` reads the value.
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.pos += 1;
            return Some(());
        }
        loop {
            let key = self.key()?;
            self.eat(b':')?;
            member(self, key)?;
            match self.peek()? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A member name: the ones this reads by a compare, others as
    /// [`plain_str`](Self::plain_str).
    fn key(&mut self) -> Option<&'a str> {
        self.skip_ws();
        let rest = &self.bytes()[self.pos..];
        let known: &'static str = match rest.get(1)? {
            b'j' => "\"jsonrpc\"",
            b'i' => "\"id\"",
            b'm' => "\"method\"",
            b'p' => "\"params\"",
            b'n' => "\"name\"",
            b'a' => "\"arguments\"",
            b'_' => "\"_meta\"",
            _ => return self.plain_str(),
        };
        if rest.starts_with(known.as_bytes()) {
            self.pos += known.len();
            return Some(&known[1..known.len() - 1]);
        }
        self.plain_str()
    }

    /// Whether the next value is the string `expected` (written plain).
    fn str_is(&mut self, expected: &str) -> Option<bool> {
        self.skip_ws();
        let rest = &self.bytes()[self.pos..];
        let len = expected.len();
        if rest.first() == Some(&b'"')
            && rest.get(1..=len) == Some(expected.as_bytes())
            && rest.get(len + 1) == Some(&b'"')
        {
            self.pos += len + 2;
            return Some(true);
        }
        Some(self.plain_str()? == expected)
    }

    /// A string with no escapes: its contents.
    fn plain_str(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.pos;
        let end = special(self.bytes(), start)?;
        if self.bytes()[end] != b'"' {
            return None;
        }
        self.pos = end + 1;
        // Both ends are ASCII quotes: char boundaries.
        Some(&self.text[start..end])
    }

    /// Any string, its escapes checked as JSON defines them.
    fn skip_str(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            let at = special(self.bytes(), self.pos)?;
            self.pos = at + 1;
            match self.bytes()[at] {
                b'"' => return Some(()),
                b'\\' => {}
                _ => return None, // a control character
            }
            match *self.bytes().get(self.pos)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.pos += 1,
                b'u' => {
                    let hex = self.bytes().get(self.pos + 1..self.pos + 5)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    self.pos += 5;
                }
                _ => return None,
            }
        }
    }

    /// A number as JSON writes it: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn skip_number(&mut self) -> Option<()> {
        let bytes = self.bytes();
        let digits = |pos: &mut usize| {
            let start = *pos;
            while bytes.get(*pos).is_some_and(u8::is_ascii_digit) {
                *pos += 1;
            }
            *pos > start
        };
        let mut pos = self.pos;
        if bytes.get(pos) == Some(&b'-') {
            pos += 1;
        }
        match bytes.get(pos)? {
            b'0' => pos += 1,
            b'1'..=b'9' => {
                digits(&mut pos);
            }
            _ => return None,
        }
        if bytes.get(pos) == Some(&b'.') {
            pos += 1;
            if !digits(&mut pos) {
                return None;
            }
        }
        if let Some(b'e' | b'E') = bytes.get(pos) {
            pos += 1;
            if let Some(b'+' | b'-') = bytes.get(pos) {
                pos += 1;
            }
            if !digits(&mut pos) {
                return None;
            }
        }
        self.pos = pos;
        Some(())
    }

    /// Any JSON value, checked and skipped; nesting is followed without
    /// recursion, up to [`MAX_DEPTH`].
    fn skip_value(&mut self) -> Option<()> {
        // Whether each open container is an object.
        let mut open = [false; MAX_DEPTH];
        let mut depth = 0;
        loop {
            // A value.
            match self.peek()? {
                b'"' => self.skip_str()?,
                b'-' | b'0'..=b'9' => self.skip_number()?,
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                open_byte @ (b'{' | b'[') => {
                    self.pos += 1;
                    let object = open_byte == b'{';
                    let close = if object { b'}' } else { b']' };
                    if self.peek()? == close {
                        self.pos += 1;
                    } else {
                        *open.get_mut(depth)? = object;
                        depth += 1;
                        if object {
                            self.skip_str()?;
                            self.eat(b':')?;
                        }
                        continue;
                    }
                }
                _ => return None,
            }
            // After a value: the next one in its container, or the
            // container's end.
            loop {
                if depth == 0 {
                    return Some(());
                }
                let object = open[depth - 1];
                match self.peek()? {
                    b',' => {
                        self.pos += 1;
                        if object {
                            self.skip_str()?;
                            self.eat(b':')?;
                        }
                        break;
                    }
                    b'}' if object => {}
                    b']' if !object => {}
                    _ => return None,
                }
                self.pos += 1;
                depth -= 1;
            }
        }
    }

    /// A value's JSON text.
    fn raw_text(&mut self) -> Option<&'a str> {
        self.skip_ws();
        let start = self.pos;
        self.skip_value()?;
        Some(&self.text[start..self.pos])
    }

    /// A value kept as raw JSON.
    fn raw_value(&mut self) -> Option<&'a RawValue> {
        // Checked by `raw_text`: this second reading of the value's text is
        // short for all but large arguments, and cannot fail.
        serde_json::from_str(self.raw_text()?).ok()
    }

    /// `null` as no value, as serde reads an `Option`; anything else as
    /// `read` reads it. (The outer `None` is giving up, as everywhere here.)
    #[allow(clippy::option_option)]
    fn or_null<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            return Some(None);
        }
        read(self).map(Some)
    }

    /// A request id: a plain string or an integer, as written.
    fn id(&mut self) -> Option<RequestId<'a>> {
        let start = match self.peek()? {
            b'"' => {
                let text = self.plain_str()?;
                // Including its quotes.
                return Some(RequestId::from_json(
                    &self.text[self.pos - text.len() - 2..self.pos],
                ));
            }
            b'-' | b'0'..=b'9' => self.pos,
            _ => return None,
        };
        self.skip_number()?;
        Some(RequestId::from_json(&self.text[start..self.pos]))
    }

    /// A `tools/call`'s params.
    fn call_params(&mut self) -> Option<CallParams<'a>> {
        self.skip_ws();
        let start = self.pos;
        let (mut name, mut arguments, mut meta) = (None, None, None);
        self.object(|at, key| match key {
            "name" if name.is_none() => {
                name = Some(at.plain_str()?);
                Some(())
            }
            "arguments" if arguments.is_none() => {
                // Checked as they are skipped.
                arguments = Some(at.or_null(|at| at.raw_text().map(Arguments::checked))?);
                Some(())
            }
            "_meta" if meta.is_none() => {
                meta = Some(at.or_null(Self::meta)?);
                Some(())
            }
            "name" | "arguments" | "_meta" => None,
            _ => at.skip_value(),
        })?;
        let (progress_token, version) = meta.flatten().unwrap_or_default();
        Some(CallParams::new(
            &self.text[start..self.pos],
            Cow::Borrowed(name?),
            arguments.flatten(),
            progress_token,
            version,
        ))
    }

    /// `_meta`: its progress token and protocol version.
    fn meta(&mut self) -> Option<(Option<&'a RawValue>, Option<&'a str>)> {
        let start = self.pos;
        if let Some((len, version)) =
            LAST_META.with_borrow(|memo| memo.reads(&self.bytes()[start..]))
        {
            self.pos = start + len;
            let version = version.map(|(from, to)| &self.text[start + from..start + to]);
            return Some((None, version));
        }
        let (mut token, mut version) = (None, None);
        self.object(|at, key| match key {
            "progressToken" if token.is_none() => {
                token = Some(at.or_null(Self::raw_value)?);
                Some(())
            }
            // `null` stays visible: not a string, not no version.
            crate::era::META_PROTOCOL_VERSION if version.is_none() => {
                version = Some(at.raw_text()?);
                Some(())
            }
            "progressToken" | crate::era::META_PROTOCOL_VERSION => None,
            _ => at.skip_value(),
        })?;
        let token = token.flatten();
        if token.is_none() {
            let text = &self.text[start..self.pos];
            LAST_META.with_borrow_mut(|memo| memo.keep(text, version));
        }
        Some((token, version))
    }
}

thread_local! {
    /// The last `_meta` read on this thread.
    static LAST_META: RefCell<MetaMemo> = const { RefCell::new(MetaMemo { text: Vec::new(), version: None }) };
}

/// A `_meta` read in full, kept to read the same one again in a compare:
/// 2026-07-28 clients send the same `_meta` (their protocol version, info
/// and capabilities) with every request. One with a progress token (new
/// with each call) is not kept.
struct MetaMemo {
    /// The object's JSON text; empty: none kept.
    text: Vec<u8>,
    /// Where the protocol version's JSON text is in it.
    version: Option<(usize, usize)>,
}

impl MetaMemo {
    /// The longest `_meta` kept.
    const MAX: usize = 4096;

    /// When `rest` starts with the kept object, its length and where its
    /// version is. (An object ends where its bytes say: the same bytes are
    /// the same object, read the same way.)
    fn reads(&self, rest: &[u8]) -> Option<(usize, Option<(usize, usize)>)> {
        (!self.text.is_empty() && rest.starts_with(&self.text))
            .then_some((self.text.len(), self.version))
    }

    fn keep(&mut self, text: &str, version: Option<&str>) {
        if text.len() > Self::MAX {
            return;
        }
        self.text.clear();
        self.text.extend_from_slice(text.as_bytes());
        // The version's text lies inside the object's.
        self.version = version.map(|v| {
            let from = v.as_ptr() as usize - text.as_ptr() as usize;
            (from, from + v.len())
        });
    }
}

/// Where the first byte from `from` on is special in a JSON string: a
/// quote, a backslash or a control character. Eight bytes at a time.
fn special(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of each byte that is zero (the lowest one found is exact).
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut at = from;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let found = zero(x ^ (ONES * u64::from(b'"')))
            | zero(x ^ (ONES * u64::from(b'\\')))
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGH);
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = bytes.get(at..)?;
    let i = rest
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    Some(at + i)
}

/// What a message reads as, for tests and the fuzz target: the general
/// parser's message, and for a `tools/call` its params as the session
/// reads them.
pub(crate) fn general_reading(text: &str) -> String {
    match super::parse(text.as_bytes()) {
        Ok(super::Message::Request { id, method, params }) if method == "tools/call" => {
            match CallParams::read(params) {
                Ok(call) => call_reading(id, &call),
                Err(why) => format!("invalid params {id}: {why}"),
            }
        }
        other => format!("{other:?}"),
    }
}

/// The same, read by [`parse_call`](super::parse_call).
pub(crate) fn one_pass_reading(text: &str) -> String {
    match super::parse_call(text.as_bytes()) {
        Ok((super::Message::Request { id, .. }, Some(call))) => call_reading(id, &call),
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

#[cfg(test)]
mod tests {
    use crate::tool::Arguments;
    use proptest::prelude::*;

    fn general(text: &str) -> String {
        super::general_reading(text)
    }

    fn one_pass(text: &str) -> String {
        super::one_pass_reading(text)
    }

    #[test]
    fn the_common_shape_is_read_in_one_pass() {
        let text = r#"{"jsonrpc":"2.0","id":"a\"","method":"tools/call","params":{"name":"t","arguments":{"s":"x\n\u00e9","n":[1,-2.5e3,true,null,{}]},"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"0"}}},"extra":[]}"#;
        // An id with an escape: read by the general parser.
        assert!(super::tools_call(text).is_none());
        let text = text.replace(r#""a\"""#, r#" "a" "#);
        let (id, call) = super::tools_call(&text).expect("the common shape");
        assert_eq!(id.as_json(), r#""a""#);
        assert_eq!(
            (
                &*call.name,
                call.arguments.map(Arguments::json),
                call.meta_json()
            ),
            (
                "t",
                Some(r#"{"s":"x\n\u00e9","n":[1,-2.5e3,true,null,{}]}"#),
                (Some("7"), Some(r#""2026-07-28""#))
            )
        );
        assert_eq!(one_pass(&text), general(&text));
    }

    /// Valid JSON text: strings with every kind of escape, numbers of
    /// every form, nesting.
    fn valid_value() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            any::<bool>().prop_map(|b| b.to_string()),
            "-?(0|[1-9][0-9]{0,3})(\\.[0-9]{1,2})?([eE][+-]?[0-9]{1,2})?",
            "[a-z\"\\\\/\u{1}\n\t é😀]{0,8}".prop_map(|s| serde_json::to_string(&s).unwrap()),
            Just(r#""a\"b\\c\/\b\f\n\r\t\u00E9\ud800""#.to_owned()),
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(("[a-z_]{1,3}", inner), 0..4).prop_map(|members| {
                    let members: Vec<_> = members
                        .iter()
                        .map(|(k, v)| format!("\"{k}\" : {v}"))
                        .collect();
                    format!("{{{}}}", members.join(" ,"))
                }),
            ]
        })
    }

    #[test]
    fn a_meta_read_before_is_read_again_by_a_compare() {
        let call = |meta: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","_meta":{meta},"arguments":{{"a":1}}}}}}"#
            )
        };
        let version = |meta: &str| {
            let text = call(meta);
            let (_, call) = super::tools_call(&text).expect("read in one pass");
            call.meta_json().1.map(str::to_owned)
        };
        let kept = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c"}}"#;
        assert_eq!(version(kept).as_deref(), Some(r#""2026-07-28""#));
        // Kept: read by a compare, the version found where it was.
        assert_eq!(version(kept).as_deref(), Some(r#""2026-07-28""#));
        // The same start, another object: read in full.
        let other = kept.replace("2026-07-28", "2026-07-29");
        assert_eq!(version(&other).as_deref(), Some(r#""2026-07-29""#));
        let longer = kept.replace(r#""c"}}"#, r#""c"},"x":1}"#);
        assert_eq!(version(&longer).as_deref(), Some(r#""2026-07-28""#));
        assert_eq!(version(r#"{"x":1}"#), None);
        // Broken after a kept object's bytes: refused as before.
        let text = call(r#"{"x":1}"#).replace(r#""arguments":{"a":1}"#, r#""arguments":{"a":}"#);
        assert!(super::tools_call(&text).is_none());
        // A progress token (new with each call) is not kept.
        let token = r#"{"progressToken":7}"#;
        let text = call(token);
        let (_, read) = super::tools_call(&text).unwrap();
        assert_eq!(read.meta_json(), (Some("7"), None));
        super::LAST_META.with_borrow(|memo| assert_eq!(memo.text, br#"{"x":1}"#));
    }

    /// Pieces of JSON text, valid and not, that the scan must tell apart.
    fn value() -> impl Strategy<Value = String> {
        let broken = prop::sample::select(vec![
            "fals",
            "nul",
            "01",
            "1.",
            "-",
            "1e",
            ".5",
            "+1",
            r#""bad \x escape""#,
            r#""\u12G4""#,
            "\"tab\there\"",
            "\"unterminated",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "[1 2]",
            "{1:2}",
            "[[[[",
        ])
        .prop_map(str::to_owned);
        prop_oneof![
            4 => valid_value(),
            1 => broken,
            1 => (valid_value(), broken_piece()).prop_map(|(v, b)| format!("[{v},{b}]")),
        ]
    }

    fn broken_piece() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["01", "tru", "\"\\q\"", "{,}", "]"]).prop_map(str::to_owned)
    }

    /// `usual` twelve times, then each of `others` once: the values a
    /// member is drawn from, mostly the usual one.
    fn mostly(usual: &'static str, others: &[&'static str]) -> Vec<&'static str> {
        std::iter::repeat_n(usual, 12)
            .chain(others.iter().copied())
            .collect()
    }

    fn member(name: &'static str, values: Vec<&'static str>) -> impl Strategy<Value = String> {
        prop::sample::select(values).prop_map(move |v| format!("\"{name}\":{v}"))
    }

    /// `_meta`: the progress token, the protocol version, client info.
    fn meta() -> impl Strategy<Value = String> {
        prop_oneof![
            1 => Just("null".to_owned()),
            1 => Just("7".to_owned()),
            8 => (
                prop::option::weighted(0.5, member("progressToken", vec!["1", "\"p\"", "null", "{}"])),
                prop::option::weighted(
                    0.8,
                    member(
                        "io.modelcontextprotocol/protocolVersion",
                        vec!["\"2026-07-28\"", "\"2026-07-28\"", "\"2025-11-25\"", "null", "3"]
                    )
                ),
                prop::option::weighted(
                    0.7,
                    value().prop_map(|v| format!("\"io.modelcontextprotocol/clientInfo\":{v}"))
                ),
                prop::bool::weighted(0.1),
            )
                .prop_map(|(token, version, info, twice)| {
                    let mut members: Vec<_> = [token, version, info].into_iter().flatten().collect();
                    if twice && let Some(first) = members.first().cloned() {
                        members.push(first);
                    }
                    format!("{{{}}}", members.join(","))
                }),
        ]
    }

    /// A `tools/call`'s params and their variations.
    fn params() -> impl Strategy<Value = String> {
        let arguments = || value().prop_map(|v| format!("\"arguments\":{v}"));
        let call = (
            member(
                "name",
                mostly("\"getDiagnostics\"", &["\"t\\u0041\"", "3", "null"]),
            ),
            prop::option::weighted(0.8, arguments()),
            prop::option::weighted(0.7, meta().prop_map(|m| format!("\"_meta\":{m}"))),
            prop::option::weighted(0.2, value().prop_map(|v| format!("\"other\":{v}"))),
            any::<bool>(),
        )
            .prop_map(|(name, arguments, meta, other, reversed)| {
                let mut members: Vec<_> = [Some(name), arguments, meta, other]
                    .into_iter()
                    .flatten()
                    .collect();
                if reversed {
                    members.reverse();
                }
                format!("{{{}}}", members.join(","))
            });
        prop_oneof![
            1 => Just("7".to_owned()),
            1 => Just("null".to_owned()),
            1 => Just("[\"t\",{}]".to_owned()),
            8 => call,
            2 => prop::collection::vec(
                prop_oneof![
                    member("name", vec!["\"getDiagnostics\"", "3"]),
                    arguments(),
                    meta().prop_map(|m| format!("\"_meta\":{m}")),
                ],
                0..5
            )
            .prop_map(|m| format!("{{{}}}", m.join(","))),
        ]
    }

    /// A `tools/call` and its variations: members in any order, repeated or
    /// missing, of other types, with other members beside them.
    fn message() -> impl Strategy<Value = String> {
        let jsonrpc = || {
            member(
                "jsonrpc",
                mostly("\"2.0\"", &["\"1.0\"", "2", "\"2\\u002e0\""]),
            )
        };
        let id = || {
            member(
                "id",
                vec![
                    "1",
                    "-3",
                    "1.5",
                    "0",
                    "\"a\"",
                    "7",
                    "\"b-1\"",
                    "12345",
                    "\"a\\\"\"",
                    "null",
                    "{}",
                    "01",
                ],
            )
        };
        let method = || {
            member(
                "method",
                mostly("\"tools/call\"", &["\"tools\\/call\"", "\"ping\"", "3"]),
            )
        };
        let params = || params().prop_map(|p| format!("\"params\":{p}"));
        let other = || {
            prop_oneof![
                1 => value().prop_map(|v| format!("\"result\":{v}")),
                6 => value().prop_map(|v| format!("\"x\":{v}")),
                1 => jsonrpc(),
                1 => id(),
                1 => method(),
            ]
        };
        // Mostly in the order clients write, with a member of anything
        // beside them; sometimes any members in any order.
        let members = prop_oneof![
            3 => (jsonrpc(), id(), method(), params(), prop::collection::vec(other(), 0..2), any::<prop::sample::Index>())
                .prop_map(|(j, i, m, p, extra, at)| {
                    let mut members = vec![j, i, m, p];
                    for e in extra {
                        members.insert(at.index(members.len() + 1), e);
                    }
                    members
                }),
            1 => prop::collection::vec(prop_oneof![jsonrpc(), id(), method(), params(), other()], 0..7),
        ];
        (
            members,
            prop::sample::select(vec!["", " ", "\n\t", "\r\n "]),
            prop::bool::weighted(0.1),
        )
            .prop_map(|(members, ws, trailing)| {
                let body = members.join(&format!(",{ws}"));
                format!("{ws}{{{ws}{body}{ws}}}{}", if trailing { " x" } else { ws })
            })
    }

    /// An object's members with their values' JSON text, in order, as
    /// serde reads them (an object only).
    #[derive(Debug)]
    struct Members(Vec<(String, String)>);

    impl<'de> serde::Deserialize<'de> for Members {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Visitor;
            impl<'de> serde::de::Visitor<'de> for Visitor {
                type Value = Members;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<M: serde::de::MapAccess<'de>>(
                    self,
                    mut map: M,
                ) -> Result<Members, M::Error> {
                    let mut members = Vec::new();
                    while let Some((name, value)) =
                        map.next_entry::<String, &'de serde_json::value::RawValue>()?
                    {
                        members.push((name, value.get().to_owned()));
                    }
                    Ok(Members(members))
                }
            }
            deserializer.deserialize_map(Visitor)
        }
    }

    /// The one pass reads exactly what the general parser and the
    /// session's params reading make of a message, and never accepts one
    /// they refuse.
    #[test]
    fn one_pass_reads_what_the_general_parser_reads() {
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(4000));
        let read = std::cell::Cell::new(0);
        runner
            .run(&message(), |text| {
                prop_assert_eq!(one_pass(&text), general(&text), "{}", text);
                // Again: a `_meta` kept from the first reading is read the same.
                prop_assert_eq!(one_pass(&text), general(&text), "{}", text);
                read.set(read.get() + usize::from(super::tools_call(&text).is_some()));
                Ok(())
            })
            .unwrap();
        // The cases exercise the one pass, not only its giving up.
        let read = read.get();
        // About 5 % are read in one pass (the rest are checked to be read
        // by the general parser alone).
        assert!(read > 100, "{read} of 4000 read in one pass");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The eight-at-a-time search finds what a byte-by-byte one does.
        #[test]
        fn special_bytes_are_found_as_one_at_a_time(
            bytes in prop::collection::vec(prop_oneof![4 => 0x20u8..=0xff, 1 => Just(b'"'), 1 => Just(b'\\'), 1 => 0u8..0x20], 0..40),
            from in 0usize..40,
        ) {
            let naive = bytes
                .iter()
                .enumerate()
                .skip(from)
                .find(|(_, b)| **b == b'"' || **b == b'\\' || **b < 0x20)
                .map(|(i, _)| i);
            prop_assert_eq!(super::special(&bytes, from), naive);
        }

        /// An object's members as the hand reading hands them out are
        /// serde's, in order, when it reads them at all; it reads the
        /// objects of plain member names.
        #[test]
        fn object_members_are_serde_members(text in value()) {
            let mut members = Vec::new();
            let read = super::object_members(&text, |name, value| {
                members.push((name.to_owned(), value.to_owned()));
            });
            let serde = serde_json::from_str::<Members>(&text);
            if read.is_some() {
                prop_assert_eq!(members, serde.unwrap().0, "{}", text);
            } else if let Ok(Members(members)) = serde {
                // Only an escape in a member name makes it give up.
                prop_assert!(
                    text.trim_start().starts_with('{') && members.iter().any(|(name, _)| !text.contains(&format!("\"{name}\""))),
                    "{}", text
                );
            }
        }

        /// The canonical shape with any arguments: read in one pass
        /// whenever the general parser accepts it.
        #[test]
        fn a_call_with_any_arguments(arguments in value()) {
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"t","arguments":{arguments},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}}}"#
            );
            prop_assert_eq!(one_pass(&text), general(&text), "{}", text);
            let valid = serde_json::from_str::<serde::de::IgnoredAny>(&arguments).is_ok();
            prop_assert_eq!(super::tools_call(&text).is_some(), valid, "{}", text);
        }
    }
}
