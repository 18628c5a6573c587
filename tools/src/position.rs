//! Rope char offsets ↔ LSP positions (zero-based line, UTF-16 character).
//!
//! Lines end at `\n`, `\r\n` or `\r`, as in LSP. Every conversion is
//! O(log n) in the document (ropey keeps UTF-16 and line counts in its tree),
//! so a selection is found in a 100 MB document as fast as in a small one.
//!
//! Out-of-range input is clamped, never a panic:
//! - a `character` past the end of its line means the end of the line (the
//!   LSP rule), before the line break;
//! - a `line` past the last line means the end of the document;
//! - a `character` inside a surrogate pair (the middle of an astral char such
//!   as an emoji) means the start of that char;
//! - a char offset past the end means the end.

use lsp_types::Position;
use ropey::{Rope, RopeSlice};
use serde::{Serialize, Serializer};

/// The whole text of a rope held in a single chunk (a document of up to
/// about a kilobyte). ropey recomputes a leaf's counts on every query of a
/// rope that is one leaf, so there one scan of the text beats the several
/// tree queries a conversion makes.
fn single_chunk(text: &Rope) -> Option<&str> {
    let mut chunks = text.chunks();
    match (chunks.next(), chunks.next()) {
        (Some(only), None) => Some(only),
        (None, _) => Some(""),
        _ => None,
    }
}

/// The LSP position of char offset `char_idx` (clamped to the end of `text`).
pub fn char_to_position(text: &Rope, char_idx: usize) -> Position {
    if let Some(text) = single_chunk(text) {
        return char_to_position_in(text, char_idx);
    }
    let char_idx = char_idx.min(text.len_chars());
    let line = text.char_to_line(char_idx);
    let line_start = text.line_to_char(line);
    let character = text.char_to_utf16_cu(char_idx) - text.char_to_utf16_cu(line_start);
    Position::new(saturate(line), saturate(character))
}

/// The char offset of LSP position `position` in `text`, clamped as the
/// [module documentation](self) says.
pub fn position_to_char(text: &Rope, position: Position) -> usize {
    if let Some(text) = single_chunk(text) {
        return position_to_char_in(text, position);
    }
    position_to_char_tree(text, position)
}

/// A position at most this many UTF-16 units into its line is found by
/// scanning the line from its start: cheaper than the four more descents of
/// ropey's tree the conversions make, and still bounded.
const SCAN_UNITS: u32 = 256;

/// [`position_to_char`] through ropey's tree: O(log n).
fn position_to_char_tree(text: &Rope, position: Position) -> usize {
    let line = position.line as usize;
    if line >= text.len_lines() {
        return text.len_chars();
    }
    let start = text.line_to_char(line);
    if position.character <= SCAN_UNITS {
        // As `locate_in` does: stop at the line's break, the end, or a
        // char the position does not reach past (inside a surrogate pair).
        let mut units = 0_u32;
        let mut idx = start;
        for c in text.chars_at(start) {
            let width = c.len_utf16() as u32;
            if c == '\n' || c == '\r' || units + width > position.character {
                break;
            }
            units += width;
            idx += 1;
        }
        return idx;
    }
    let end = line_content_end(text, line, start);
    let start_cu = text.char_to_utf16_cu(start);
    let end_cu = text.char_to_utf16_cu(end);
    let target = start_cu
        .saturating_add(position.character as usize)
        .min(end_cu);
    text.utf16_cu_to_char(target)
}

/// The text between two positions (in either order), in O(log n + selection).
pub fn slice(text: &Rope, start: Position, end: Position) -> RopeSlice<'_> {
    let (start, end) = if end < start {
        (end, start)
    } else {
        (start, end)
    };
    if let Some(chunk) = single_chunk(text) {
        let from = locate_in(chunk, start).1;
        let to = locate_in(chunk, end).1.max(from);
        return RopeSlice::from(&chunk[from..to]);
    }
    let from = position_to_char_tree(text, start);
    let to = position_to_char_tree(text, end).max(from);
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

/// [`char_to_position`] by one scan of a small text.
fn char_to_position_in(text: &str, char_idx: usize) -> Position {
    let (mut line, mut character) = (0_u32, 0_u32);
    let mut chars = text.chars().peekable();
    for _ in 0..char_idx {
        let Some(c) = chars.next() else { break };
        match c {
            '\n' => (line, character) = (line + 1, 0),
            // The `\r` of a `\r\n` breaks nothing itself: the pair breaks
            // at its `\n` (an offset between them is the line's end + 1).
            '\r' if chars.peek() != Some(&'\n') => (line, character) = (line + 1, 0),
            c => character += c.len_utf16() as u32,
        }
    }
    Position::new(line, character)
}

/// [`position_to_char`] by one scan of a small text.
fn position_to_char_in(text: &str, position: Position) -> usize {
    locate_in(text, position).0
}

/// The char and byte offsets of `position` in `text`, by one scan, clamped
/// as the [module documentation](self) says.
fn locate_in(text: &str, position: Position) -> (usize, usize) {
    let mut chars = text.char_indices().peekable();
    let mut idx = 0;
    let mut line = 0;
    while line < position.line {
        match chars.next() {
            None => return (idx, text.len()),
            Some((_, '\n')) => line += 1,
            Some((_, '\r')) => {
                if matches!(chars.peek(), Some((_, '\n'))) {
                    chars.next();
                    idx += 1;
                }
                line += 1;
            }
            Some(_) => {}
        }
        idx += 1;
    }
    let mut units = 0_u32;
    while let Some(&(at, c)) = chars.peek() {
        let width = c.len_utf16() as u32;
        if c == '\n' || c == '\r' || units + width > position.character {
            return (idx, at);
        }
        units += width;
        idx += 1;
        chars.next();
    }
    (idx, text.len())
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use ide_mcp_test_support::position::{self as reference, Units};

    /// The reference position of a char offset (UTF-16, as the tools count).
    fn naive_position(chars: &[char], char_idx: usize) -> Position {
        let (line, character) = reference::position(chars, char_idx, Units::Utf16);
        Position::new(line, character)
    }

    /// The reference char offset of a position (UTF-16).
    fn naive_offset(chars: &[char], position: Position) -> usize {
        reference::offset(chars, position.line, position.character, Units::Utf16)
    }

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(&reference::HARD_CHARS[..]), 0..60)
            .prop_map(|chars| chars.into_iter().collect())
    }

    proptest! {
        #[test]
        fn char_to_position_matches_the_reference(text in text(), idx in 0usize..70) {
            let chars: Vec<char> = text.chars().collect();
            let rope = Rope::from_str(&text);
            prop_assert_eq!(char_to_position(&rope, idx), naive_position(&chars, idx.min(chars.len())));
        }

        #[test]
        fn position_to_char_matches_the_reference(text in text(), line in 0u32..25, character in 0u32..40) {
            let chars: Vec<char> = text.chars().collect();
            let rope = Rope::from_str(&text);
            let position = Position::new(line, character);
            prop_assert_eq!(position_to_char(&rope, position), naive_offset(&chars, position));
        }

        #[test]
        fn the_tree_path_matches_the_reference(text in text(), line in 0u32..25, character in 0u32..40) {
            let chars: Vec<char> = text.chars().collect();
            let rope = Rope::from_str(&text);
            let position = Position::new(line, character);
            prop_assert_eq!(position_to_char_tree(&rope, position), naive_offset(&chars, position));
        }

        #[test]
        fn multi_chunk_ropes_match_the_reference(text in text(), line in 0u32..25, character in 0u32..40, idx in 0usize..70) {
            // Repeated past one leaf, so that the tree path is taken.
            let text = text.repeat(200);
            let chars: Vec<char> = text.chars().collect();
            let rope = Rope::from_str(&text);
            let position = Position::new(line, character);
            prop_assert_eq!(position_to_char(&rope, position), naive_offset(&chars, position));
            let idx = idx * 37;
            prop_assert_eq!(char_to_position(&rope, idx), naive_position(&chars, idx.min(chars.len())));
            let end = Position::new(line + 3, character);
            let (x, y) = (naive_offset(&chars, position), naive_offset(&chars, end));
            let expected: String = chars[x.min(y)..x.max(y)].iter().collect();
            prop_assert_eq!(slice(&rope, position, end).to_string(), expected);
        }

        #[test]
        fn positions_far_into_long_lines_match_the_reference(
            text in text(),
            line in 0u32..4,
            character in 0u32..1500,
        ) {
            // Lines of hundreds of chars, across leaves: positions past
            // `SCAN_UNITS` go through the tree, the others are scanned.
            let text = text.replace(['\n', '\r'], "x").repeat(20) + "\n";
            let text = text.repeat(3);
            let chars: Vec<char> = text.chars().collect();
            let rope = Rope::from_str(&text);
            let position = Position::new(line, character);
            prop_assert_eq!(position_to_char_tree(&rope, position), naive_offset(&chars, position));
            prop_assert_eq!(position_to_char(&rope, position), naive_offset(&chars, position));
        }

        #[test]
        fn positions_of_offsets_lead_back_to_them(text in text(), idx in 0usize..70) {
            let rope = Rope::from_str(&text);
            let idx = idx.min(rope.len_chars());
            // Except between `\r` and `\n`, which is no position of its own.
            let inside_crlf = idx > 0 && idx < rope.len_chars() && rope.char(idx - 1) == '\r' && rope.char(idx) == '\n';
            prop_assume!(!inside_crlf);
            prop_assert_eq!(position_to_char(&rope, char_to_position(&rope, idx)), idx);
        }

        #[test]
        fn slices_are_the_text_between(text in text(), a in (0u32..25, 0u32..40), b in (0u32..25, 0u32..40)) {
            let chars: Vec<char> = text.chars().collect();
            let rope = Rope::from_str(&text);
            let (a, b) = (Position::new(a.0, a.1), Position::new(b.0, b.1));
            let (x, y) = (naive_offset(&chars, a), naive_offset(&chars, b));
            let expected: String = chars[x.min(y)..x.max(y)].iter().collect();
            prop_assert_eq!(slice(&rope, a, b).to_string(), expected.clone());
            prop_assert_eq!(serde_json::to_string(&RopeText(slice(&rope, b, a))).unwrap(), serde_json::to_string(&expected).unwrap());
        }
    }

    #[test]
    fn examples() {
        let rope = Rope::from_str("a😀b\r\nc\rd\n");
        assert_eq!(char_to_position(&rope, 2), Position::new(0, 3));
        assert_eq!(
            position_to_char(&rope, Position::new(0, 2)),
            1,
            "inside the emoji → its start"
        );
        assert_eq!(
            position_to_char(&rope, Position::new(0, 99)),
            3,
            "past the line → before \\r\\n"
        );
        assert_eq!(position_to_char(&rope, Position::new(2, 0)), 7);
        assert_eq!(
            position_to_char(&rope, Position::new(3, 5)),
            9,
            "the empty last line"
        );
        assert_eq!(
            position_to_char(&rope, Position::new(u32::MAX, u32::MAX)),
            9
        );
        assert_eq!(char_to_position(&rope, usize::MAX), Position::new(3, 0));
        assert_eq!(
            slice(&rope, Position::new(1, 0), Position::new(0, 1)).to_string(),
            "😀b\r\n"
        );
    }

    #[test]
    fn lsp_lines_only_break_at_cr_and_lf() {
        // U+2028 and U+0085 are not LSP line breaks (ropey's `unicode_lines` is off).
        let rope = Rope::from_str("a\u{2028}b\u{85}c\nd");
        assert_eq!(char_to_position(&rope, 5), Position::new(0, 5));
        assert_eq!(position_to_char(&rope, Position::new(1, 0)), 6);
    }
}
