//! JSON text read by hand, forwards, without serde: member names and plain
//! strings borrowed, everything skipped still checked to be valid JSON
//! (strings eight bytes at a time, numbers by the grammar, nesting without
//! recursion).
//!
//! Every reading here gives up with `None` on what it is unsure of (an
//! escape where it reads a name, deep nesting, invalid JSON); the caller
//! then reads the text with serde, which also says what is wrong. Two
//! readers use it, each behind its own fallback and with a property test
//! against serde: a `tools/call` read in one pass
//! ([`request::one_pass`](crate::request)), and a tool's arguments split
//! into members ([`object_members`], for `ArgsObject`). BENCHMARKS.md § 1
//! measures what the first buys.

use serde_json::value::RawValue;

/// How deep a skipped value may nest before the general parser takes over.
const MAX_DEPTH: usize = 64;

/// Hands each member of the JSON object `text` to `member`, with its name
/// and its value's JSON text; `None` (having handed out some members,
/// perhaps) when `text` is not an object whose member names are plain
/// strings, or not JSON: read it with the general parser then.
pub(crate) fn object_members<'a>(
    text: &'a str,
    mut member: impl FnMut(&'a str, &'a str),
) -> Option<()> {
    let mut at = Cursor::new(text);
    at.object(|at, name| {
        member(name, at.raw_text()?);
        Some(())
    })?;
    at.at_end().then_some(())
}

/// A position in JSON text, read forwards.
pub(crate) struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    /// Whether only whitespace is left.
    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.pos == self.text.len()
    }

    /// Where the cursor is, a byte offset into the text.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// The text from `start` up to the cursor.
    pub(crate) fn since(&self, start: usize) -> &'a str {
        &self.text[start..self.pos]
    }

    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    pub(crate) fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes().get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next byte after whitespace, not taken.
    pub(crate) fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes().get(self.pos).copied()
    }

    pub(crate) fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    pub(crate) fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.bytes()[self.pos..]
            .starts_with(word)
            .then(|| self.pos += word.len())
    }

    /// An object, each member handed to `member` with its name (plain);
    /// `member` reads the value.
    pub(crate) fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
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

    /// A member name, written plain (no escapes).
    pub(crate) fn key(&mut self) -> Option<&'a str> {
        self.plain_str()
    }

    /// Whether the next value is the string `expected` (written plain).
    pub(crate) fn str_is(&mut self, expected: &str) -> Option<bool> {
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
    pub(crate) fn plain_str(&mut self) -> Option<&'a str> {
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
    pub(crate) fn skip_str(&mut self) -> Option<()> {
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
    pub(crate) fn skip_number(&mut self) -> Option<()> {
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
    pub(crate) fn skip_value(&mut self) -> Option<()> {
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
    pub(crate) fn raw_text(&mut self) -> Option<&'a str> {
        self.skip_ws();
        let start = self.pos;
        self.skip_value()?;
        Some(&self.text[start..self.pos])
    }

    /// A value kept as raw JSON.
    pub(crate) fn raw_value(&mut self) -> Option<&'a RawValue> {
        // Checked by `raw_text`: this second reading of the value's text is
        // short for all but large arguments, and cannot fail.
        serde_json::from_str(self.raw_text()?).ok()
    }

    /// `null` as no value, as serde reads an `Option`; anything else as
    /// `read` reads it. (The outer `None` is giving up, as everywhere here.)
    #[allow(clippy::option_option)]
    pub(crate) fn or_null<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<Option<T>> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            return Some(None);
        }
        read(self).map(Some)
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

#[cfg(test)]
pub(crate) mod tests {
    use proptest::prelude::*;

    /// Valid JSON text: strings with every kind of escape, numbers of
    /// every form, nesting.
    pub(crate) fn valid_value() -> impl Strategy<Value = String> {
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

    /// Pieces of JSON text, valid and not, that the scan must tell apart.
    pub(crate) fn value() -> impl Strategy<Value = String> {
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

    }
}
