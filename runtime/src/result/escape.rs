//! Escaping for the inside of a JSON string: a result's `text` is JSON
//! written inside a JSON string, serialized once, escaped on the way.

use std::fmt::Display;
use std::io;

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
                // `\u00XX` with its backslash escaped once more.
                writer.write_all(b"\\")?;
                return writer.write_all(&unicode_escape(byte));
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

/// The JSON escape of a control character: `\u00XX`, in lowercase hex.
fn unicode_escape(byte: u8) -> [u8; 6] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    [
        b'\\',
        b'u',
        b'0',
        b'0',
        HEX[usize::from(byte >> 4)],
        HEX[usize::from(byte & 0xf)],
    ]
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
                    self.out.extend_from_slice(&unicode_escape(b));
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
