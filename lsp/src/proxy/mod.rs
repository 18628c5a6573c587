//! `ide-mcp lsp-proxy`: the process between an editor and its language
//! server, serving what it observes to Claude Code as an IDE.
//!
//! ```text
//!  editor ──stdin──► [pump thread] ──► server stdin      (bytes unchanged)
//!  editor ◄─stdout── [pump thread] ◄── server stdout     (bytes unchanged)
//!                        │ in order, through a queue
//!                        ▼
//!                  observer thread
//!                        │
//!                        ▼
//!                  this stream's LspWorkspace (the verdicts)
//!                        │ replay, then every message (its buffer shared)
//!                        ▼ Unix socket (private directory)
//!                  the workspace's IDE host (crate::host): WebSocket + lockfile
//! ```
//!
//! # Forwarding
//!
//! Two threads with blocking I/O (the shortest path for a message) read
//! frames with [`SyncMessageReader`](crate::framing::SyncMessageReader) and
//! write each frame's bytes exactly as read, unframed bytes included; an
//! editor message of 1 MiB or more (a large `didOpen`) is forwarded piece
//! by piece as it arrives, read into a few reused 1 MiB buffers, and put
//! together for the observer on its own thread; the proxy asks for 1 MiB
//! pipes (Linux). The
//! [`Observer`](crate::Observer) reads each body on a thread of its own,
//! both directions in order through a bounded queue
//! ([`HandOff`](handoff::HandOff)), so that observing never holds up
//! forwarding. The few messages whose verdict matters are observed inline,
//! after what is queued before them: the observer says which
//! ([`Interest`](crate::observer::Interest): our commands, the editor's
//! answers to the IDE's requests, the answers to code action, pull
//! diagnostic and `initialize` requests, and, while a review of Claude's
//! edit is pending, code action requests and pushed diagnostics); the
//! forwarding loop names no LSP method. A panic in the observer is caught
//! at one boundary, the observer's own (`Observer::from_client`,
//! `from_server`): it costs that message's verdict and the document's
//! state, never forwarding. The proxy writes nothing else to its
//! stdout; logs go to stderr or `--log FILE` (see the CLI), never blocking,
//! never panicking on a broken pipe. BENCHMARKS.md ("LSP proxy") has the added
//! latency and the pass-through rate.
//!
//! # Lifecycle
//!
//! The proxy ends with the server and exits with its status (a signal `n`
//! as `128 + n`): after forwarding `exit`, or when its stdin ends (the
//! editor is gone), it waits [`EXIT_GRACE`](child::EXIT_GRACE) for the
//! server, then kills it; on SIGTERM, SIGINT or SIGHUP it closes the
//! server's input and kills it after a second. When the server dies, its
//! last output still reaches the editor. Then it detaches from its host;
//! the proxy owns no file.
//!
//! # One IDE per workspace
//!
//! The proxy serves no IDE itself: once the editor's `initialize` names the
//! workspace, it attaches to the workspace's [host](crate::host), starting
//! one when none serves (through the [`Launcher`](crate::host::Launcher)
//! of its options), replays its observer's state into it and copies every
//! message it observes there; the IDE's requests for the editor come back
//! the same way. Several servers of one editor, and several editors on one
//! workspace, share the host's one IDE. The host is never on the editor's
//! path: when it goes away the proxy keeps forwarding and attaches to a
//! new one.

mod attach;
pub mod child;
pub mod handoff;
mod options;
mod process;
pub mod pump;
pub mod relay;
pub mod shared;
mod sink;
mod tap;

pub use options::{Observation, ProxyOptions};
pub use process::run;
