//! What the Gemini face shows: its name among the registry's faces, and
//! which files it may show an agent.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// The face's name: its tools carry `#[mcp_tool(face = "gemini")]`.
pub const FACE: &str = "gemini";

/// Which files the face may show an agent: the hook of the user's deny
/// rules (a file it refuses is left out of every context update, and its
/// review refused). [`GeminiOptions::default`](super::GeminiOptions::default) shows every file.
#[derive(Clone)]
pub struct PathFilter(pub Arc<dyn Fn(&Path) -> bool + Send + Sync>);

impl PathFilter {
    /// Shows every file.
    pub fn all() -> Self {
        Self(Arc::new(|_| true))
    }
}

impl std::ops::Deref for PathFilter {
    type Target = dyn Fn(&Path) -> bool + Send + Sync;
    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl fmt::Debug for PathFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PathFilter")
    }
}
