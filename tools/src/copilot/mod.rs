//! GitHub Copilot CLI's IDE connection: the face that serves `copilot`
//! (1.0.102) the editor this host holds, in that CLI's own protocol
//! (PROTOCOL.md, "Copilot CLI's `/ide`").
//!
//! A thin adapter over the host's one state, like the Gemini face: its
//! listener (MCP Streamable HTTP over a Unix socket in a private 0700
//! directory, `Authorization: Nonce <secret>`, [`face`]), its lockfile
//! ([`lockfile`]), its tools (`get_selection`, `get_diagnostics`,
//! `open_diff`, `close_diff`, registered with `face = "copilot"` and
//! listed on this face only, [`tools`]) and its notification
//! (`selection_changed`, sent by the same
//! [`SelectionPublisher`](crate::selection::SelectionPublisher) as
//! Claude's).

pub mod face;
pub mod lockfile;
pub mod tools;

pub use face::{CopilotFace, CopilotOptions, FACE};
