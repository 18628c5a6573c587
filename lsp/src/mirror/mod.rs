//! The text mirror: LSP positions in any of the three position encodings,
//! and `didChange` edits applied to a rope in O(log n + edit).
//!
//! The server picks the encoding in its `initialize` answer
//! (`capabilities.positionEncoding`): `utf-16` when absent, `utf-8` or
//! `utf-32` when offered by the editor and chosen. Every position of the
//! session (edits, cursors, diagnostics) counts columns in it.
//!
//! Positions convert, and are clamped, as [`ide_mcp_tools::position`]
//! says; [`Clamped::clamped`] says when a position needed it, so that
//! callers can log the edits they had to repair.

mod edit;

#[cfg(test)]
mod tests;

pub use edit::apply_change;
pub use ide_mcp_tools::position::{Clamped, PositionEncoding};
