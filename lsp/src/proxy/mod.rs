//! `ide-mcp lsp-proxy`: the process between an editor and its language
//! server.

pub mod child;
mod coordinate;
pub mod editor;
pub mod host;
mod process;
pub mod pump;
pub mod relay;
pub mod rendezvous;
mod sink;
mod tap;

pub use process::{ProxyOptions, run};
