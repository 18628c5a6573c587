//! [`LspWorkspace`]: the IDE state that observers fill from LSP traffic and
//! the tools read.

mod diagnostics;
mod documents;
mod live;
mod open_file;
mod requests;
pub(crate) mod servers;
mod state;
mod stream;

#[cfg(test)]
pub(crate) use crate::live::OWN_COMMAND_PREFIX;
pub use diagnostics::SETTLE_QUIET;
pub use requests::{
    EDITOR_REQUEST_PREFIX, EDITOR_REQUEST_TIMEOUT, EditorCan, EditorRequest, EditorRequestError,
    OUTGOING_CAPACITY, OwnReload,
};
pub use servers::{
    NoRoute, SERVER_QUEUE_CAPACITY, SERVER_REQUEST_PREFIX, SERVER_REQUEST_TIMEOUT, ServerFacts,
    ServerRequestError, ServerRoute,
};
pub use state::{EVENT_CAPACITY, EditorInfo, LspWorkspace, WorkspaceEvent};
pub(crate) use state::{EditorKind, editor_display_name, process_name};
pub use stream::StreamId;
