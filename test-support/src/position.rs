//! The reference LSP positions: a linear walk over a text's chars, against
//! which the position helpers of the tools and the LSP mirror (and the fuzz
//! targets) are checked. Lines end at `\n`, `\r\n` and a lone `\r`; a
//! character offset counts the line's code units of the chosen encoding.
//!
//! ```
//! use ide_mcp_test_support::position::{Units, offset, position};
//!
//! let chars: Vec<char> = "a😀\r\nb".chars().collect();
//! assert_eq!(position(&chars, 2, Units::Utf16), (0, 3));
//! assert_eq!(offset(&chars, 1, 0, Units::Utf16), 4);
//! assert_eq!(offset(&chars, 0, 2, Units::Utf16), 1, "inside the emoji: before it");
//! ```

/// The characters that make positions hard, for generated texts: one
/// byte, two, three and four in UTF-8 (the last two also two UTF-16 units),
/// and the three line breaks' parts.
pub const HARD_CHARS: [char; 8] = ['a', 'é', '中', '😀', '𝄞', '\n', '\r', ' '];

/// The code units an LSP position's `character` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Units {
    /// Bytes of UTF-8.
    Utf8,
    /// UTF-16 code units (the LSP default).
    Utf16,
    /// Unicode scalar values.
    Utf32,
}

/// How many `units` `c` takes.
pub fn width(c: char, units: Units) -> u32 {
    match units {
        Units::Utf8 => c.len_utf8() as u32,
        Units::Utf16 => c.len_utf16() as u32,
        Units::Utf32 => 1,
    }
}

/// The lines of `chars`: each line's first char and its length without
/// the line break; a text ending in a break has an empty last line.
pub fn lines(chars: &[char]) -> Vec<(usize, usize)> {
    let (mut lines, mut start, mut i) = (vec![], 0, 0);
    while i < chars.len() {
        let step = match chars[i] {
            '\r' if chars.get(i + 1) == Some(&'\n') => 2,
            '\n' | '\r' => 1,
            _ => {
                i += 1;
                continue;
            }
        };
        lines.push((start, i - start));
        i += step;
        start = i;
    }
    lines.push((start, chars.len() - start));
    lines
}

/// The char offset of (`line`, `character`): past the end of the text for
/// a line past the last, the line's end for a character past it, and the
/// start of a character whose code units it falls inside.
pub fn offset(chars: &[char], line: u32, character: u32, units: Units) -> usize {
    let Some(&(start, len)) = lines(chars).get(line as usize) else {
        return chars.len();
    };
    let mut counted = 0;
    let mut offset = start;
    for &c in &chars[start..start + len] {
        counted += width(c, units);
        if counted > character {
            break;
        }
        offset += 1;
    }
    offset
}

/// The (line, character) of char offset `idx` (at most `chars.len()`).
/// Between the `\r` and `\n` of a break, the `\r` still counts: the
/// offset is past it, on its line.
pub fn position(chars: &[char], idx: usize, units: Units) -> (u32, u32) {
    let (mut line, mut character) = (0, 0);
    for (i, &c) in chars.iter().enumerate().take(idx) {
        if c == '\n' || (c == '\r' && chars.get(i + 1) != Some(&'\n')) {
            line += 1;
            character = 0;
        } else {
            character += width(c, units);
        }
    }
    (line, character)
}
