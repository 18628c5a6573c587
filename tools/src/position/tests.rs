use super::*;
use proptest::prelude::*;

use ide_mcp_test_support::position::{self as reference, Units};

const UTF16: PositionEncoding = PositionEncoding::Utf16;

const ENCODINGS: [PositionEncoding; 3] = [
    PositionEncoding::Utf8,
    PositionEncoding::Utf16,
    PositionEncoding::Utf32,
];

fn units(encoding: PositionEncoding) -> Units {
    match encoding {
        PositionEncoding::Utf8 => Units::Utf8,
        PositionEncoding::Utf16 => Units::Utf16,
        PositionEncoding::Utf32 => Units::Utf32,
    }
}

/// The reference position of a char offset.
fn naive_position(chars: &[char], char_idx: usize, encoding: PositionEncoding) -> Position {
    let (line, character) = reference::position(chars, char_idx.min(chars.len()), units(encoding));
    Position::new(line, character)
}

/// The reference char offset of a position.
fn naive_offset(chars: &[char], position: Position, encoding: PositionEncoding) -> usize {
    reference::offset(chars, position.line, position.character, units(encoding))
}

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(&reference::HARD_CHARS[..]), 0..60)
        .prop_map(|chars| chars.into_iter().collect())
}

/// Positions of lines below `lines` and characters below `characters`.
fn position(lines: u32, characters: u32) -> impl Strategy<Value = Position> {
    (0..lines, 0..characters).prop_map(|(line, character)| Position::new(line, character))
}

fn encoding() -> impl Strategy<Value = PositionEncoding> {
    proptest::sample::select(&ENCODINGS[..])
}

/// The reference text between two positions (in either order).
fn naive_slice(chars: &[char], a: Position, b: Position) -> String {
    let (x, y) = (naive_offset(chars, a, UTF16), naive_offset(chars, b, UTF16));
    chars[x.min(y)..x.max(y)].iter().collect()
}

/// Whether char offset `idx` is between the `\r` and `\n` of a break,
/// which is no position of its own.
fn inside_crlf(chars: &[char], idx: usize) -> bool {
    idx > 0 && idx < chars.len() && chars[idx - 1] == '\r' && chars[idx] == '\n'
}

/// Finds `position` in `text`, checks the offset against the reference,
/// and returns the rope, what was found and the position of that offset.
fn found_as_the_reference(
    text: &str,
    position: Position,
    encoding: PositionEncoding,
) -> Result<(Rope, Clamped<usize>, Position), TestCaseError> {
    let chars: Vec<char> = text.chars().collect();
    let rope = Rope::from_str(text);
    let found = position_to_char(&rope, position, encoding);
    prop_assert_eq!(found.value, naive_offset(&chars, position, encoding));
    let back = char_to_position(&rope, found.value, encoding);
    Ok((rope, found, back))
}

proptest! {
    #[test]
    fn char_to_position_matches_the_reference(text in text(), idx in 0usize..70, encoding in encoding()) {
        let chars: Vec<char> = text.chars().collect();
        let rope = Rope::from_str(&text);
        prop_assert_eq!(char_to_position(&rope, idx, encoding), naive_position(&chars, idx, encoding));
    }

    #[test]
    fn position_to_char_matches_the_reference(text in text(), position in position(25, 40), encoding in encoding()) {
        let (rope, found, back) = found_as_the_reference(&text, position, encoding)?;
        // The tree path agrees, to the clamping flag.
        prop_assert_eq!(position_to_char_tree(&rope, position, encoding), found);
        // A position read back from an offset names that offset, unclamped.
        let chars: Vec<char> = text.chars().collect();
        if !inside_crlf(&chars, found.value) {
            prop_assert_eq!(position_to_char(&rope, back, encoding), Clamped { value: found.value, clamped: false });
        }
        if (position.line as usize) < rope.len_lines() {
            prop_assert_eq!(found.clamped, back != position);
        }
    }

    #[test]
    fn multi_chunk_ropes_match_the_reference(
        text in text(),
        position in position(25, 40),
        idx in 0usize..70,
        encoding in encoding(),
    ) {
        // Repeated past one leaf, so that the tree path is taken.
        let text = text.repeat(200);
        let chars: Vec<char> = text.chars().collect();
        let rope = Rope::from_str(&text);
        prop_assert_eq!(position_to_char(&rope, position, encoding).value, naive_offset(&chars, position, encoding));
        let idx = idx * 37;
        prop_assert_eq!(char_to_position(&rope, idx, encoding), naive_position(&chars, idx, encoding));
        let end = Position::new(position.line + 3, position.character);
        prop_assert_eq!(slice(&rope, position, end).to_string(), naive_slice(&chars, position, end));
    }

    #[test]
    fn positions_far_into_long_lines_match_the_reference(text in text(), position in position(4, 1500), encoding in encoding()) {
        // Lines of hundreds of chars, across leaves: positions past
        // `SCAN_UNITS` go through the tree, the others are walked.
        let text = text.replace(['\n', '\r'], "x").repeat(20) + "\n";
        let text = text.repeat(3);
        let (_, found, back) = found_as_the_reference(&text, position, encoding)?;
        prop_assert_eq!(found.clamped, back != position);
    }

    #[test]
    fn positions_of_offsets_lead_back_to_them(text in text(), idx in 0usize..70, encoding in encoding()) {
        let chars: Vec<char> = text.chars().collect();
        let rope = Rope::from_str(&text);
        let idx = idx.min(rope.len_chars());
        prop_assume!(!inside_crlf(&chars, idx));
        prop_assert_eq!(position_to_char(&rope, char_to_position(&rope, idx, encoding), encoding).value, idx);
    }

    #[test]
    fn conversions_agree_with_offsets(
        text in text(),
        position in position(12, 20),
        from in encoding(),
        to in encoding(),
    ) {
        let rope = Rope::from_str(&text);
        let at = position_to_char(&rope, position, from).value;
        let there = convert(&rope, position, from, to);
        prop_assert_eq!(position_to_char(&rope, there, to).value, at);
        prop_assert_eq!(position_to_char(&rope, convert(&rope, there, to, from), from).value, at);
    }

    #[test]
    fn line_lengths_are_the_units_before_the_break(text in text(), line in 0u32..25, encoding in encoding()) {
        let chars: Vec<char> = text.chars().collect();
        let rope = Rope::from_str(&text);
        let expected = reference::lines(&chars).get(line as usize).map_or(0, |&(start, len)| {
            chars[start..start + len].iter().map(|c| reference::width(*c, units(encoding))).sum()
        });
        prop_assert_eq!(line_length(&rope, line, encoding), expected);
    }

    #[test]
    fn slices_are_the_text_between(text in text(), a in position(25, 40), b in position(25, 40)) {
        let chars: Vec<char> = text.chars().collect();
        let rope = Rope::from_str(&text);
        let expected = naive_slice(&chars, a, b);
        prop_assert_eq!(slice(&rope, a, b).to_string(), expected.clone());
        prop_assert_eq!(serde_json::to_string(&RopeText(slice(&rope, b, a))).unwrap(), serde_json::to_string(&expected).unwrap());
    }
}

#[test]
fn examples() {
    let rope = Rope::from_str("a😀b\r\nc\rd\n");
    let offset = |line, character| position_to_char(&rope, Position::new(line, character), UTF16);
    assert_eq!(char_to_position(&rope, 2, UTF16), Position::new(0, 3));
    assert_eq!(offset(0, 2).value, 1, "inside the emoji → its start");
    assert_eq!(offset(0, 99).value, 3, "past the line → before \\r\\n");
    assert_eq!(offset(2, 0).value, 7);
    assert_eq!(offset(3, 5).value, 9, "the empty last line");
    assert_eq!(offset(u32::MAX, u32::MAX).value, 9);
    assert_eq!(
        char_to_position(&rope, usize::MAX, UTF16),
        Position::new(3, 0)
    );
    assert_eq!(
        slice(&rope, Position::new(1, 0), Position::new(0, 1)).to_string(),
        "😀b\r\n"
    );
}

#[test]
fn lsp_lines_only_break_at_cr_and_lf() {
    // U+2028 and U+0085 are not LSP line breaks (ropey's `unicode_lines` is off).
    let rope = Rope::from_str("a\u{2028}b\u{85}c\nd");
    assert_eq!(char_to_position(&rope, 5, UTF16), Position::new(0, 5));
    assert_eq!(position_to_char(&rope, Position::new(1, 0), UTF16).value, 6);
}

#[test]
fn positions_inside_a_character_are_clamped_to_its_start() {
    let rope = Rope::from_str("é😀\n");
    let at = |character, encoding| position_to_char(&rope, Position::new(0, character), encoding);
    let clamped = |value| Clamped {
        value,
        clamped: true,
    };
    let clean = |value| Clamped {
        value,
        clamped: false,
    };
    assert_eq!(
        at(1, PositionEncoding::Utf8),
        clamped(0),
        "inside é's two bytes"
    );
    assert_eq!(
        at(4, PositionEncoding::Utf8),
        clamped(1),
        "inside the emoji's four bytes"
    );
    assert_eq!(at(6, PositionEncoding::Utf8), clean(2));
    assert_eq!(
        at(2, PositionEncoding::Utf16),
        clamped(1),
        "between the emoji's two units"
    );
    assert_eq!(at(2, PositionEncoding::Utf32), clean(2));
}

#[test]
fn the_end_of_the_document_is_a_clean_position() {
    for text in ["a\nb", &"a\nb".repeat(1000)] {
        let rope = Rope::from_str(text);
        let last = u32::try_from(rope.len_lines()).unwrap();
        let at = |line, character| position_to_char(&rope, Position::new(line, character), UTF16);
        let end = Clamped {
            value: rope.len_chars(),
            clamped: false,
        };
        assert_eq!(at(last, 0), end);
        assert!(at(last, 1).clamped);
        assert!(at(last + 7, 0).clamped);
    }
}

#[test]
fn encodings_are_read_from_their_names() {
    for encoding in ENCODINGS {
        assert_eq!(PositionEncoding::from_name(Some(encoding.name())), encoding);
    }
    assert_eq!(
        PositionEncoding::from_name(Some("utf-7")),
        PositionEncoding::Utf16
    );
    assert_eq!(PositionEncoding::from_kind(None), PositionEncoding::Utf16);
    assert_eq!(
        PositionEncoding::from_kind(Some(&lsp_types::PositionEncodingKind::UTF8)),
        PositionEncoding::Utf8
    );
}
