//! Positions ↔ rope char offsets, in the three LSP position encodings: the
//! one place of the workspace that counts columns.
//!
//! A position's `character` counts UTF-16 code units (LSP's default, and
//! what the tools speak), UTF-8 bytes or Unicode scalar values (UTF-32: the
//! model's chars), as [`PositionEncoding`] says. Lines end at `\n`, `\r\n`
//! or `\r`, as in LSP (not at U+2028 or U+0085: ropey's `cr_lines`).
//!
//! # Clamping
//!
//! Editors send positions that are not clean (Neovim 0.7's range code action
//! ends one past the last selected character), so out-of-range input is
//! clamped as an editor would, never a panic and never half a character:
//! - a `character` past the end of its line means the end of the line,
//!   before its line break;
//! - a `line` past the last line means the end of the text;
//! - a `character` inside a character (between the two UTF-16 units of an
//!   emoji, between the bytes of `é` in UTF-8) means the start of it;
//! - a char offset past the end means the end.
//!
//! [`Clamped::clamped`] says when a position needed it, so that callers can
//! log the edits they had to repair; `{line: len_lines, character: 0}` is how
//! editors name the end, and needs none.
//!
//! # Cost
//!
//! A conversion is O(log n), and [`slice`](fn@slice) O(log n + selection): ropey's
//! tree finds a position's chunk (at most about a kilobyte), then counts
//! word-at-a-time from that chunk's start to the position's line, and only
//! the position's line is walked char by char. A rope of a single chunk is
//! the exception: its one leaf keeps no counts, so ropey recounts all of it
//! on every query. There the one recount that tells the rope is one chunk
//! is the only one: the position's line is found by `str_indices`' scans
//! (ropey's own), and a slice's end is looked for from its start's line.
//! The tests check both paths against the reference walk of
//! `ide-mcp-test-support`; the figures are BENCHMARKS.md § 4.

use lsp_types::{Position, PositionEncodingKind};
use ropey::{Rope, RopeSlice};
use serde::{Serialize, Serializer};
use str_indices::{chars, lines_crlf, utf16};

#[cfg(test)]
mod tests;

/// How a position's `character` counts: UTF-8 code units (bytes), UTF-16
/// code units (LSP's default) or Unicode scalar values (UTF-32).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PositionEncoding {
    /// UTF-8 code units (bytes).
    Utf8,
    /// UTF-16 code units: the default when the server names none.
    #[default]
    Utf16,
    /// Unicode scalar values (chars).
    Utf32,
}

impl PositionEncoding {
    /// The encoding a server's `positionEncoding` names; UTF-16 when it names
    /// none or one LSP does not define.
    pub fn from_kind(kind: Option<&PositionEncodingKind>) -> Self {
        Self::from_name(kind.map(PositionEncodingKind::as_str))
    }

    /// The encoding named `utf-8`, `utf-16` or `utf-32`; UTF-16 otherwise.
    pub fn from_name(name: Option<&str>) -> Self {
        match name {
            Some("utf-8") => Self::Utf8,
            Some("utf-32") => Self::Utf32,
            _ => Self::Utf16,
        }
    }

    /// The LSP name of the encoding.
    pub fn name(self) -> &'static str {
        match self {
            Self::Utf8 => "utf-8",
            Self::Utf16 => "utf-16",
            Self::Utf32 => "utf-32",
        }
    }

    /// How many of the encoding's units `c` takes.
    pub fn width(self, c: char) -> usize {
        match self {
            Self::Utf8 => c.len_utf8(),
            Self::Utf16 => c.len_utf16(),
            Self::Utf32 => 1,
        }
    }

    /// How many of the encoding's units `text` takes.
    pub fn len(self, text: &str) -> usize {
        match self {
            Self::Utf8 => text.len(),
            Self::Utf16 => utf16::count(text),
            Self::Utf32 => chars::count(text),
        }
    }

    /// The unit offset of char offset `char_idx` (at most the length).
    fn unit_of(self, text: &Rope, char_idx: usize) -> usize {
        match self {
            Self::Utf8 => text.char_to_byte(char_idx),
            Self::Utf16 => text.char_to_utf16_cu(char_idx),
            Self::Utf32 => char_idx,
        }
    }

    /// The char offset of unit offset `unit` (at most the length); a unit
    /// inside a char gives that char.
    fn char_of(self, text: &Rope, unit: usize) -> usize {
        match self {
            Self::Utf8 => text.byte_to_char(unit),
            Self::Utf16 => text.utf16_cu_to_char(unit),
            Self::Utf32 => unit,
        }
    }
}

/// A value, and whether the input had to be clamped to get it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clamped<T> {
    /// The value.
    pub value: T,
    /// Whether the input was out of range or inside a character.
    pub clamped: bool,
}

/// The char offset of `position` (columns counted in `encoding`) in `text`,
/// clamped as the [module documentation](self) says.
pub fn position_to_char(
    text: &Rope,
    position: Position,
    encoding: PositionEncoding,
) -> Clamped<usize> {
    if let Some(chunk) = single_chunk(text) {
        let found = locate_in(chunk, LineStart::FIRST, position, encoding);
        return Clamped {
            value: chars::count(&chunk[..found.byte]),
            clamped: found.clamped,
        };
    }
    position_to_char_tree(text, position, encoding)
}

/// The position of char offset `char_idx` (clamped to the end of `text`),
/// columns counted in `encoding`.
pub fn char_to_position(text: &Rope, char_idx: usize, encoding: PositionEncoding) -> Position {
    if let Some(chunk) = single_chunk(text) {
        return char_to_position_in(chunk, char_idx, encoding);
    }
    let char_idx = char_idx.min(text.len_chars());
    let line = text.char_to_line(char_idx);
    let start = text.line_to_char(line);
    let character = encoding.unit_of(text, char_idx) - encoding.unit_of(text, start);
    Position::new(saturate(line), saturate(character))
}

/// `position`, counted in `from`, as a position counted in `to`, clamped to
/// `text` as the [module documentation](self) says (when `from == to` too).
pub fn convert(
    text: &Rope,
    position: Position,
    from: PositionEncoding,
    to: PositionEncoding,
) -> Position {
    char_to_position(text, position_to_char(text, position, from).value, to)
}

/// The text between two UTF-16 positions (in either order), clamped as the
/// [module documentation](self) says, in O(log n + selection).
pub fn slice(text: &Rope, start: Position, end: Position) -> RopeSlice<'_> {
    let (start, end) = if end < start {
        (end, start)
    } else {
        (start, end)
    };
    let encoding = PositionEncoding::Utf16;
    if let Some(chunk) = single_chunk(text) {
        let from = locate_in(chunk, LineStart::FIRST, start, encoding);
        let to = match from.line_start {
            Some(line_start) => locate_in(chunk, line_start, end, encoding).byte,
            None => from.byte,
        };
        return RopeSlice::from(&chunk[from.byte..to.max(from.byte)]);
    }
    let from = position_to_char_tree(text, start, encoding).value;
    let to = position_to_char_tree(text, end, encoding).value.max(from);
    text.slice(from..to)
}

/// The char offset where line `line`'s content ends (before its line
/// break), given `start`, the char offset where the line starts. `line` must
/// be a line of `text` (`line < text.len_lines()`).
pub fn line_content_end(text: &Rope, line: usize, start: usize) -> usize {
    if line + 1 >= text.len_lines() {
        return text.len_chars();
    }
    // Every line but the last ends with a break of one char, or `\r\n`.
    let end = text.line_to_char(line + 1) - 1;
    if end > start && text.char(end) == '\n' && text.char(end - 1) == '\r' {
        end - 1
    } else {
        end
    }
}

/// The length of line `line` of `text` without its line break, in
/// `encoding`'s units; 0 past the last line.
pub fn line_length(text: &Rope, line: u32, encoding: PositionEncoding) -> u32 {
    let line = line as usize;
    if line >= text.len_lines() {
        return 0;
    }
    let start = text.line_to_char(line);
    let end = line_content_end(text, line, start);
    saturate(encoding.unit_of(text, end) - encoding.unit_of(text, start))
}

/// A position at most this many units into its line is found by walking
/// the line from its start: cheaper than the four more descents of ropey's
/// tree the conversions make, and still bounded (BENCHMARKS.md § 4).
const SCAN_UNITS: u32 = 256;

/// [`position_to_char`] through ropey's tree: O(log n).
fn position_to_char_tree(
    text: &Rope,
    position: Position,
    encoding: PositionEncoding,
) -> Clamped<usize> {
    let line = position.line as usize;
    if line >= text.len_lines() {
        let exact = line == text.len_lines() && position.character == 0;
        return Clamped {
            value: text.len_chars(),
            clamped: !exact,
        };
    }
    let start = text.line_to_char(line);
    let character = position.character as usize;
    if position.character <= SCAN_UNITS {
        let (units, idx, _) = walk_line(text.chars_at(start), character, encoding);
        return Clamped {
            value: start + idx,
            clamped: units != character,
        };
    }
    let end = line_content_end(text, line, start);
    let end_unit = encoding.unit_of(text, end);
    let target = encoding.unit_of(text, start).saturating_add(character);
    if target > end_unit {
        return Clamped {
            value: end,
            clamped: true,
        };
    }
    let value = encoding.char_of(text, target);
    Clamped {
        value,
        clamped: encoding.unit_of(text, value) != target,
    }
}

/// Walks a line's chars up to `character` units: stops at the line's
/// break, its end, or a char the position does not reach past (the
/// position is inside it). Returns the units, the chars and the bytes
/// walked; the position was clamped when the units are not `character`.
fn walk_line(
    line: impl Iterator<Item = char>,
    character: usize,
    encoding: PositionEncoding,
) -> (usize, usize, usize) {
    let (mut units, mut chars, mut bytes) = (0, 0, 0);
    for c in line {
        let width = encoding.width(c);
        if c == '\n' || c == '\r' || units + width > character {
            break;
        }
        units += width;
        chars += 1;
        bytes += c.len_utf8();
    }
    (units, chars, bytes)
}

/// The whole text of a rope held in a single chunk (a document of up to
/// about a kilobyte), where ropey recounts the leaf on every query; this
/// asking is one such count (ropey 1.6 cannot tell a leaf for less).
fn single_chunk(text: &Rope) -> Option<&str> {
    let mut chunks = text.chunks();
    match (chunks.next(), chunks.next()) {
        (Some(only), None) => Some(only),
        (None, _) => Some(""),
        _ => None,
    }
}

/// A line known to start at a byte offset of a small text.
#[derive(Clone, Copy)]
struct LineStart {
    line: u32,
    byte: usize,
}

impl LineStart {
    const FIRST: Self = Self { line: 0, byte: 0 };
}

/// A position found in a small text.
struct Found {
    /// Its byte offset.
    byte: usize,
    /// The start of its line, when the line is one of the text's.
    line_start: Option<LineStart>,
    clamped: bool,
}

/// Finds `position` (at or after line `from`) in a small text, clamped as
/// the [module documentation](self) says: the lines between are skipped by
/// `str_indices`, then the position's line is walked.
fn locate_in(text: &str, from: LineStart, position: Position, encoding: PositionEncoding) -> Found {
    let rest = &text[from.byte..];
    let lines_on = position.line.saturating_sub(from.line) as usize;
    let byte = from.byte + lines_crlf::to_byte_idx(rest, lines_on);
    if byte == text.len() {
        // The last line (when it is empty), or past it.
        let last = from.line as usize + lines_crlf::count_breaks(rest);
        let line = position.line as usize;
        let exact = position.character == 0 && (line == last || line == last + 1);
        let line_start = (line == last).then_some(LineStart {
            line: position.line,
            byte,
        });
        return Found {
            byte,
            line_start,
            clamped: !exact,
        };
    }
    let character = position.character as usize;
    let (units, _, walked) = walk_line(text[byte..].chars(), character, encoding);
    Found {
        byte: byte + walked,
        line_start: Some(LineStart {
            line: position.line,
            byte,
        }),
        clamped: units != character,
    }
}

/// [`char_to_position`] in a small text.
fn char_to_position_in(text: &str, char_idx: usize, encoding: PositionEncoding) -> Position {
    let byte = chars::to_byte_idx(text, char_idx);
    let bytes = text.as_bytes();
    // Between the `\r` and `\n` of a break, the `\r` still counts: the
    // offset is past it, on its line.
    let crlf_middle =
        byte > 0 && byte < bytes.len() && bytes[byte - 1] == b'\r' && bytes[byte] == b'\n';
    let before = if crlf_middle { byte - 1 } else { byte };
    let line_start = bytes[..before]
        .iter()
        .rposition(|b| *b == b'\n' || *b == b'\r')
        .map_or(0, |at| at + 1);
    let line = lines_crlf::count_breaks(&text[..line_start]);
    Position::new(
        saturate(line),
        saturate(encoding.len(&text[line_start..byte])),
    )
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A piece of a rope serialized as one JSON string, without first copying it
/// into a `String`.
#[derive(Clone, Copy, Debug)]
pub struct RopeText<'a>(pub RopeSlice<'a>);

impl Serialize for RopeText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.as_str() {
            Some(text) => serializer.serialize_str(text),
            None => serializer.collect_str(&self.0),
        }
    }
}
