use ide_mcp_test_support::position::{self as reference, Units};
use ide_mcp_tools::position::PositionEncoding;
use lsp_types::{Position, Range, TextDocumentContentChangeEvent};
use proptest::prelude::*;
use ropey::Rope;

use super::*;

const ENCODINGS: [PositionEncoding; 3] = [
    PositionEncoding::Utf8,
    PositionEncoding::Utf16,
    PositionEncoding::Utf32,
];

/// The reference char offset of `position`, by a linear walk.
fn naive_offset(chars: &[char], position: Position, encoding: PositionEncoding) -> usize {
    let units = match encoding {
        PositionEncoding::Utf8 => Units::Utf8,
        PositionEncoding::Utf16 => Units::Utf16,
        PositionEncoding::Utf32 => Units::Utf32,
    };
    reference::offset(chars, position.line, position.character, units)
}

fn naive_apply(
    chars: &mut Vec<char>,
    change: &TextDocumentContentChangeEvent,
    encoding: PositionEncoding,
) {
    let Some(range) = change.range else {
        *chars = change.text.chars().collect();
        return;
    };
    let a = naive_offset(chars, range.start, encoding);
    let b = naive_offset(chars, range.end, encoding);
    let (a, b) = (a.min(b), a.max(b));
    chars.splice(a..b, change.text.chars());
}

fn alphabet() -> impl Strategy<Value = char> {
    proptest::sample::select(&reference::HARD_CHARS[..])
}

fn text(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(alphabet(), 0..max).prop_map(|c| c.into_iter().collect())
}

fn position() -> impl Strategy<Value = Position> {
    // Lines and characters past the end are as likely as valid ones.
    (0u32..12, 0u32..20).prop_map(|(line, character)| Position::new(line, character))
}

fn change() -> impl Strategy<Value = TextDocumentContentChangeEvent> {
    prop_oneof![
        10 => (position(), position(), text(6)).prop_map(|(start, end, text)| TextDocumentContentChangeEvent {
            range: Some(Range::new(start, end)),
            range_length: None,
            text,
        }),
        1 => text(30).prop_map(|text| TextDocumentContentChangeEvent { range: None, range_length: None, text }),
    ]
}

fn encoding() -> impl Strategy<Value = PositionEncoding> {
    prop_oneof![Just(ENCODINGS[0]), Just(ENCODINGS[1]), Just(ENCODINGS[2])]
}

proptest! {
    #[test]
    fn edits_match_the_reference(
        start in text(40),
        repeat in prop_oneof![Just(1usize), Just(300)],
        changes in proptest::collection::vec(change(), 1..12),
        encoding in encoding(),
    ) {
        // Repeated past one rope leaf, so that the tree paths are taken too.
        let start = start.repeat(repeat);
        let mut rope = Rope::from_str(&start);
        let mut chars: Vec<char> = start.chars().collect();
        for change in &changes {
            apply_change(&mut rope, change, encoding);
            naive_apply(&mut chars, change, encoding);
        }
        prop_assert_eq!(rope.to_string(), chars.iter().collect::<String>());
    }
}

fn edit(range: ((u32, u32), (u32, u32)), text: &str) -> TextDocumentContentChangeEvent {
    TextDocumentContentChangeEvent {
        range: Some(Range::new(
            Position::new(range.0.0, range.0.1),
            Position::new(range.1.0, range.1.1),
        )),
        range_length: None,
        text: text.into(),
    }
}

#[test]
fn unclean_ranges_are_clamped_and_never_split_a_character() {
    // Neovim 0.7's range ends one past the line, or inside the emoji.
    let mut rope = Rope::from_str("ab😀\r\ncd\n");
    let change = apply_change(
        &mut rope,
        &edit(((0, 3), (0, 9)), "X"),
        PositionEncoding::Utf16,
    );
    assert!(change.clamped);
    assert_eq!(
        rope.to_string(),
        "abX\r\ncd\n",
        "from the emoji's start to the line's end"
    );

    let mut rope = Rope::from_str("é😀\n");
    assert!(
        !apply_change(
            &mut rope,
            &edit(((0, 1), (0, 2)), ""),
            PositionEncoding::Utf32
        )
        .clamped
    );
    assert_eq!(rope.to_string(), "é\n");
}

#[test]
fn reversed_ranges_are_put_in_order() {
    let mut rope = Rope::from_str("hello");
    assert!(
        apply_change(
            &mut rope,
            &edit(((0, 4), (0, 1)), "-"),
            PositionEncoding::Utf16
        )
        .clamped
    );
    assert_eq!(rope.to_string(), "h-o");
}
