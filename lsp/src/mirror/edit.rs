//! One `didChange` content change applied to a rope.

use lsp_types::TextDocumentContentChangeEvent;
use ropey::Rope;

use ide_mcp_tools::position::{Clamped, PositionEncoding, position_to_char};

/// Applies one content change of a `didChange` to `text`: a replacement of
/// `range` (counted in `encoding`, clamped as the
/// [module documentation](super) says; a reversed range is put in order), or
/// of the whole document when `range` is absent. Returns whether the range
/// had to be clamped.
///
/// O(log n + edit): only the rope's nodes along the edit are rebuilt, so a
/// keystroke in a 50 MB document costs about what it costs in a small one.
pub fn apply_change(
    text: &mut Rope,
    change: &TextDocumentContentChangeEvent,
    encoding: PositionEncoding,
) -> Clamped<()> {
    let Some(range) = change.range else {
        *text = Rope::from_str(&change.text);
        return Clamped {
            value: (),
            clamped: false,
        };
    };
    let start = position_to_char(text, range.start, encoding);
    let end = position_to_char(text, range.end, encoding);
    let (from, to) = if end.value < start.value {
        (end.value, start.value)
    } else {
        (start.value, end.value)
    };
    if from < to {
        text.remove(from..to);
    }
    if !change.text.is_empty() {
        text.insert(from, &change.text);
    }
    Clamped {
        value: (),
        clamped: start.clamped || end.clamped || end.value < start.value,
    }
}
