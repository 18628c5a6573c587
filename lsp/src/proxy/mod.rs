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
//!                  LspWorkspace ──► leader: IDE WebSocket + lockfile
//!                        ▲               (tools, selection_changed, at_mentioned)
//!                        └── relay ◄── followers' copies (Unix socket)
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
//! after what is queued before them: our code action's
//! `workspace/executeCommand` (kept from the server and answered by the
//! proxy), the editor's answers to the proxy's requests, and the server's
//! answers to code action requests (extended with ours). A panic in the
//! observer costs only its verdict. The proxy writes nothing else to its
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
//! last output still reaches the editor. Then the IDE it served shuts down
//! and its lockfile and rendezvous files are removed.
//!
//! # One IDE per editor
//!
//! An editor often runs several servers for one workspace; their proxies
//! present one IDE. Once the editor's `initialize` names it
//! (`processId`, else the proxy's parent), the proxies of one editor pid and
//! one set of workspace folders meet in the lockfile directory
//! ([`rendezvous`]): the one holding an exclusive `flock` on
//! `lsp-<pid>-<hash>.lock` is the *leader*: it serves the IDE WebSocket and
//! writes the lockfile (its `pid` is the leader's), and listens on
//! `lsp-<pid>-<hash>.sock`. The others are *followers*: each connects and
//! sends a [replay](crate::Observer::replay) of its observer's state, then a
//! copy of every message it observes, tagged by direction ([`relay`]); the
//! leader observes each follower's stream into the same workspace, so the
//! tools answer with the union of every stream's documents and diagnostics.
//! A follower that leaves takes its stream's documents and diagnostics with
//! it. When the leader ends, the kernel releases its lock: the followers
//! see their connection close and run the election again; one wins, writes
//! its lockfile and serves, and the others replay into it (an MCP client
//! reconnects to the new port).

pub mod child;
mod coordinate;
pub mod handoff;
pub mod host;
mod process;
pub mod pump;
pub mod relay;
pub mod rendezvous;
mod sink;
mod tap;

pub use process::{Observation, ProxyOptions, run};
