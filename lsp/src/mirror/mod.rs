//! The text mirror: LSP positions in any of the three position encodings,
//! and `didChange` edits applied to a rope in O(log n + edit).
//!
//! The server picks the encoding in its `initialize` answer
//! (`capabilities.positionEncoding`): `utf-16` when absent, `utf-8` or
//! `utf-32` when offered by the editor and chosen. Every position of the
//! session (edits, cursors, diagnostics) counts columns in it.
//!
//! # Clamping
//!
//! Editors send positions that are not clean (Neovim 0.7's range code action
//! ends one past the last selected character), so positions are clamped as
//! an editor would, never a panic and never half a character:
//! - a `line` past the last line means the end of the document;
//! - a `character` past the end of its line means the end of the line,
//!   before its line break;
//! - a `character` inside a character (between the two UTF-16 units of an
//!   emoji, between the bytes of `é` in UTF-8) means the start of it.
//!
//! [`Clamped::clamped`] says when a position needed it, so that callers can
//! log the edits they had to repair.

mod edit;
mod position;

#[cfg(test)]
mod tests;

pub use edit::apply_change;
pub use position::{
    Clamped, PositionEncoding, char_to_position_in, from_utf16, position_to_char, to_utf16,
};
