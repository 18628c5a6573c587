//! `close_tab` and `closeAllDiffTabs`: the `claude` CLI withdraws the
//! reviews `openDiff` started through them.
//!
//! After every permission prompt the CLI calls `close_tab {tab_name}`, also
//! when the user answered in the terminal, and at the start of every turn
//! `closeAllDiffTabs {}`. Both withdraw pending reviews through the
//! [`DiffReview`] port (their `openDiff` calls answer
//! `DIFF_REJECTED`); a host without the port has none to withdraw.

use ide_mcp_runtime::CallToolResult;

use crate::context::EditorPorts;
use crate::ports::DiffReview;

/// `closeAllDiffTabs`' answer when no diff tab was open.
pub const CLOSED_NO_DIFF_TABS: &str = "CLOSED_0_DIFF_TABS";

/// `close_tab`'s answer, whether or not a review was pending.
pub const TAB_CLOSED: &str = "TAB_CLOSED";

/// `closeAllDiffTabs`' answer after closing `n` diff tabs: `CLOSED_<n>_DIFF_TABS`.
pub fn closed_diff_tabs_result(n: usize) -> CallToolResult {
    CallToolResult::text(format!("CLOSED_{n}_DIFF_TABS"))
}

/// Closes every diff tab the IDE opened for Claude's proposed edits, each
/// pending review counting as rejected, and answers `CLOSED_<n>_DIFF_TABS`
/// with the number closed.
#[ide_mcp_runtime::mcp_tool(idempotent)]
pub fn close_all_diff_tabs(cx: &EditorPorts) -> CallToolResult {
    closed_diff_tabs_result(cx.review().map_or(0, DiffReview::close_all))
}

/// Closes the diff tab `tab_name` that `openDiff` opened, its pending review
/// counting as rejected; answers `TAB_CLOSED`, also when no such tab was open.
#[ide_mcp_runtime::mcp_tool(name = "close_tab", idempotent)]
pub fn close_tab(
    cx: &EditorPorts,
    #[arg(
        rename = "tab_name",
        description = "The `tab_name` given to `openDiff`"
    )]
    tab_name: String,
) -> CallToolResult {
    if let Some(review) = cx.review() {
        let was_pending = review.close_tab(&tab_name);
        tracing::debug!(%tab_name, was_pending, "close_tab");
    }
    CallToolResult::text(TAB_CLOSED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_to_close_without_a_review_port() {
        let cx = EditorPorts::empty();
        assert_eq!(
            close_all_diff_tabs(&cx),
            CallToolResult::text("CLOSED_0_DIFF_TABS")
        );
        assert_eq!(
            closed_diff_tabs_result(0),
            CallToolResult::text(CLOSED_NO_DIFF_TABS)
        );
        assert_eq!(
            closed_diff_tabs_result(12),
            CallToolResult::text("CLOSED_12_DIFF_TABS")
        );
        assert_eq!(
            close_tab(&cx, "tab".into()),
            CallToolResult::text("TAB_CLOSED")
        );
    }
}
