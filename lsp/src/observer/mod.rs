//! The observer: reads one LSP stream's traffic (one editor↔server pair)
//! and keeps an [`LspWorkspace`](crate::workspace::LspWorkspace) up to date.
//!
//! The proxy hands every message body to [`Observer::from_client`] (editor →
//! server) or [`Observer::from_server`] (server → editor) and then does what
//! the verdict says: forward the bytes it read unchanged, or (rarely) write
//! something else. The observer never fails: a body it cannot read is
//! forwarded and logged, a position out of range is clamped and logged, and
//! a panic inside it is caught, logged once, and costs only the state of the
//! document concerned.

mod client;
mod code_action;
mod envelope;
pub mod overlay;
mod overlay_merge;
mod replay;
mod server;
mod stream;

#[cfg(test)]
mod tests;

pub use code_action::{SEND_SELECTION_COMMAND, SEND_SELECTION_TITLE};
pub use overlay::{Decision, Interest, Overlay};
pub use replay::Replayed;
pub use stream::{ClientVerdict, MAX_TRACKED_REQUESTS, Observer, ObserverOptions, ServerVerdict};
