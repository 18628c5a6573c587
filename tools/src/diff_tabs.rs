//! `closeAllDiffTabs`: the `claude` CLI calls it at the start of every turn.
//!
//! Our hosts open no diff tabs (a headless host must not offer `openDiff`,
//! which blocks until a person answers), so there is never one to close:
//! the answer is the IDE extensions' `CLOSED_<n>_DIFF_TABS` with `n = 0`.

use ide_mcp_runtime::CallToolResult;

/// The answer: no diff tab was open.
pub const CLOSED_NO_DIFF_TABS: &str = "CLOSED_0_DIFF_TABS";

/// Closes every diff tab the IDE opened for Claude's proposed edits and
/// answers `CLOSED_<n>_DIFF_TABS`; this host opens none, so `n` is 0.
#[ide_mcp_runtime::mcp_tool(idempotent)]
pub fn close_all_diff_tabs() -> CallToolResult {
    CallToolResult::text(CLOSED_NO_DIFF_TABS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_to_close() {
        assert_eq!(
            close_all_diff_tabs(),
            CallToolResult::text("CLOSED_0_DIFF_TABS")
        );
    }
}
