//! Which LSP stream of a workspace a message, a document or a request is of.

/// One LSP stream (one editor↔server pair) of a workspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub u64);
