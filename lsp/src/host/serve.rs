//! What a host serves: its workspace as the IDE's tools see it, with the
//! selection and `at_mentioned` pushed to connected clients.

use std::sync::Arc;

use ide_mcp_runtime::Server;
use ide_mcp_tools::SelectionPublisher;
use ide_mcp_tools::gemini::ContextTrigger;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

use super::review::Reviews;
use crate::workspace::{LspWorkspace, WorkspaceEvent};

/// The MCP server over `ws`'s ports, with `reviews` for `openDiff`.
pub fn server(
    ws: &Arc<LspWorkspace>,
    reviews: &Reviews,
) -> Result<Server, ide_mcp_runtime::BuildError> {
    Server::builder("ide-mcp lsp-proxy", env!("CARGO_PKG_VERSION"))
        .state(ws.editor_ports().review(Arc::new(reviews.clone())).build())
        .build()
}

/// Pushes `ws`'s events to `server`'s clients: `selection_changed`
/// (debounced) and `at_mentioned`; and tells the Gemini and Copilot faces,
/// when there are, of each change of the open files and the selection. Runs until the
/// task is aborted.
pub fn push_events(
    server: &Server,
    ws: &Arc<LspWorkspace>,
    gemini: Option<ContextTrigger>,
    copilot: Option<Arc<SelectionPublisher>>,
) -> JoinHandle<()> {
    let publisher = SelectionPublisher::spawn(server.notifier().clone(), ws.editor_ports().build());
    let mut events = ws.subscribe();
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(WorkspaceEvent::SelectionChanged) | Err(RecvError::Lagged(_)) => {
                    publisher.selection_changed();
                    if let Some(gemini) = &gemini {
                        gemini.changed();
                    }
                    if let Some(copilot) = &copilot {
                        copilot.selection_changed();
                    }
                }
                Ok(WorkspaceEvent::AtMentioned {
                    path,
                    line_start,
                    line_end,
                }) => {
                    publisher.at_mentioned(&path, Some(line_start), Some(line_end));
                }
                Ok(
                    WorkspaceEvent::Review(_)
                    | WorkspaceEvent::Edited { .. }
                    | WorkspaceEvent::Saved { .. },
                ) => {}
                Err(RecvError::Closed) => return,
            }
        }
    })
}
