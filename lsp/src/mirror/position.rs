//! Positions in the three encodings, and their conversions on a rope.

use ide_mcp_tools::position::{char_to_position, line_content_end};
use lsp_types::{Position, PositionEncodingKind};
use ropey::Rope;

/// How a position's `character` counts: UTF-8 bytes, UTF-16 code units
/// (LSP's default) or Unicode scalar values (UTF-32).
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
/// clamped as the [module documentation](super) says. O(log n).
pub fn position_to_char(
    text: &Rope,
    position: Position,
    encoding: PositionEncoding,
) -> Clamped<usize> {
    let line = position.line as usize;
    if line >= text.len_lines() {
        // `{line: len_lines, character: 0}` is how editors name the end.
        let exact = line == text.len_lines() && position.character == 0;
        return Clamped {
            value: text.len_chars(),
            clamped: !exact,
        };
    }
    let start = text.line_to_char(line);
    let end = line_content_end(text, line, start);
    let character = position.character as usize;
    let (value, clamped) = match encoding {
        PositionEncoding::Utf32 => {
            let target = start.saturating_add(character);
            (target.min(end), target > end)
        }
        PositionEncoding::Utf16 => within(
            text.char_to_utf16_cu(start),
            text.char_to_utf16_cu(end),
            character,
            |unit| text.utf16_cu_to_char(unit),
            |c| text.char_to_utf16_cu(c),
        ),
        PositionEncoding::Utf8 => within(
            text.char_to_byte(start),
            text.char_to_byte(end),
            character,
            |byte| text.byte_to_char(byte),
            |c| text.char_to_byte(c),
        ),
    };
    Clamped { value, clamped }
}

/// The char at `character` units past `start_unit`, for an encoding whose
/// unit offsets `to_char` and `to_unit` convert (`to_char` of a unit inside
/// a char gives that char).
fn within(
    start_unit: usize,
    end_unit: usize,
    character: usize,
    to_char: impl Fn(usize) -> usize,
    to_unit: impl Fn(usize) -> usize,
) -> (usize, bool) {
    let target = start_unit.saturating_add(character);
    if target > end_unit {
        return (to_char(end_unit), true);
    }
    let c = to_char(target);
    (c, to_unit(c) != target)
}

/// The position of char offset `char_idx` (clamped to the end of `text`),
/// columns counted in `encoding`. O(log n).
pub fn char_to_position_in(text: &Rope, char_idx: usize, encoding: PositionEncoding) -> Position {
    let char_idx = char_idx.min(text.len_chars());
    let line = text.char_to_line(char_idx);
    let start = text.line_to_char(line);
    let character = match encoding {
        PositionEncoding::Utf32 => char_idx - start,
        PositionEncoding::Utf16 => return char_to_position(text, char_idx),
        PositionEncoding::Utf8 => text.char_to_byte(char_idx) - text.char_to_byte(start),
    };
    Position::new(line as u32, u32::try_from(character).unwrap_or(u32::MAX))
}

/// `position`, counted in `encoding`, as the UTF-16 position the tools
/// speak, clamped to `text` (in every encoding, UTF-16 included).
pub fn to_utf16(text: &Rope, position: Position, encoding: PositionEncoding) -> Position {
    char_to_position(text, position_to_char(text, position, encoding).value)
}

/// A UTF-16 `position` as a position counted in `encoding` (clamped to `text`).
pub fn from_utf16(text: &Rope, position: Position, encoding: PositionEncoding) -> Position {
    if encoding == PositionEncoding::Utf16 {
        return position;
    }
    let at = position_to_char(text, position, PositionEncoding::Utf16).value;
    char_to_position_in(text, at, encoding)
}
