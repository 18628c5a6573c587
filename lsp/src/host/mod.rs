//! The IDE host: one process per user and workspace that serves Claude Code
//! the IDE of every editor on that workspace, and outlives them.
//!
//! ```text
//!  editor ─► lsp-proxy ─► server      editor ─► lsp-proxy ─► server
//!                │                                 │
//!                └───── Unix socket (private) ─────┘   attach, replay, copies
//!                               ▼
//!                            host ──► IDE WebSocket + <port>.lock ──► claude
//! ```
//!
//! The first proxy of a workspace starts the host detached ([`Launcher`]),
//! or finds it running; every proxy attaches over the host's socket in a
//! [private directory](place::private_dir) of ours and sends it a replay of
//! what it has observed, then a copy of every message ([`link`]). The host
//! observes each proxy's stream into one workspace, so the tools answer
//! with the union of every editor's documents and diagnostics, and the
//! selection of the one used last; it serves the WebSocket and writes the
//! one lockfile (its `pid` is the host's). Requests for an editor
//! (`window/showDocument` for `openFile`) go down the link of a proxy
//! whose editor supports them.
//!
//! A proxy forwards its LSP bytes whether or not a host is there: a host
//! that crashes or is killed costs the editor nothing, and its proxies start
//! a new one and replay into it at once. When the last proxy detaches, the
//! host goes on serving (no open editors, no selection, the detached
//! servers' diagnostics dropped) for its linger time, so that an editor
//! restarted within it finds the same port and token and the CLI, which
//! never reconnects by itself, stays connected; then it removes its lockfile
//! and exits. SIGTERM or SIGINT ends it at once, lockfile removed.

mod apply;
mod feed;
mod launch;
pub mod link;
mod options;
pub mod place;
pub mod reload;
pub mod review;
mod run;
pub mod serve;

pub use launch::Launcher;
pub use options::{DEFAULT_LINGER, HostOptions};
pub use place::{HostKey, Place, private_dir};
pub use run::{Ending, serve};
