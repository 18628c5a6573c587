//! Gemini CLI's IDE companion: the face that serves `gemini` (0.61.0) the
//! editor this host holds, in that CLI's own protocol (PROTOCOL.md,
//! "Gemini CLI's IDE companion").
//!
//! A face is a thin adapter over the host's one state: it reads the same
//! [`EditorPorts`](crate::EditorPorts) as every other face and owns only
//! what its protocol needs: its listener (MCP Streamable HTTP on
//! 127.0.0.1, [`face`]), its discovery file ([`discovery`]), its tools
//! (`openDiff` and `closeDiff`, registered with `face = "gemini"` and
//! listed on this face only, [`diff`]) and its notification
//! (`ide/contextUpdate`, [`context`]).

pub mod context;
pub mod diff;
pub mod discovery;
pub mod face;
pub mod filter;

pub use face::{ContextTrigger, GeminiFace, GeminiOptions};
pub use filter::{FACE, PathFilter};
