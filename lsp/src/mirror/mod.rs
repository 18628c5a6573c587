//! The text mirror: `didChange` edits applied to a rope in O(log n + edit).
//!
//! The server picks the position encoding in its `initialize` answer
//! (`capabilities.positionEncoding`): `utf-16` when absent, `utf-8` or
//! `utf-32` when offered by the editor and chosen. Every position of the
//! session (edits, cursors, diagnostics) counts columns in it.
//!
//! Positions convert, and are clamped, as [`ide_mcp_tools::position`]
//! says; [`Clamped::clamped`] says when an edit's range needed it, so that
//! callers can log the edits they had to repair.
//!
//! [`Clamped::clamped`]: ide_mcp_tools::position::Clamped::clamped

mod edit;

#[cfg(test)]
mod tests;

pub use edit::apply_change;
