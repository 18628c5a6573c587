//! Claude's proposed edit as line hunks, and the text the user's choice makes.
//!
//! `openDiff` hands over the whole file as Claude would write it. An editor
//! host shows the difference from the text it holds as [`hunks`] (one
//! diagnostic each, worded by [`Hunk::message`]), lets the user accept or
//! reject each, and answers with [`compose`]: the old text with the accepted
//! hunks applied. The CLI writes that text itself.
//!
//! The live LSP tools show a server's edits as a [`unified_diff`].
//!
//! Pure functions of their arguments: no I/O, no state.
//!
//! ```
//! use ide_mcp_tools::review::{compose, hunks};
//!
//! let old = "fn a() {}\nfn b() {}\nfn c() {}\n";
//! let new = "fn a() {}\nfn b2() {}\nfn c() {}\nfn d() {}\n";
//! let h = hunks(old, new);
//! assert_eq!(h.len(), 2);
//! assert_eq!(h[0].message(), "Claude: replace 1 line with 1 — fn b2() {}");
//! assert_eq!(h[1].message(), "Claude: insert 1 line — fn d() {}");
//! // The user keeps `b` and takes `d`.
//! assert_eq!(
//!     compose(old, &h, &[false, true]),
//!     "fn a() {}\nfn b() {}\nfn c() {}\nfn d() {}\n"
//! );
//! ```

mod compose;
mod hunks;
mod lines;
mod unified;

pub use compose::compose;
pub use hunks::{Hunk, hunks};
pub use unified::{CONTEXT_LINES, unified_diff};

#[cfg(test)]
mod tests;
