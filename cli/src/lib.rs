//! The headless ide-mcp host: serves a workspace, its open files and its live
//! cargo diagnostics to Claude Code and other MCP clients, with no editor.
//!
//! The binary `ide-mcp` is a thin command line over this library; the
//! library is public so the end-to-end tests (and embedders that want real
//! cargo diagnostics) can drive the same pieces.
//!
//! ```no_run
//! # async fn demo() {
//! use ide_mcp::diagnostics::{CargoDiagnostics, EngineConfig};
//!
//! let engine = CargoDiagnostics::start(EngineConfig::new("path/to/workspace"));
//! if let Some(settled) = engine.settle_future() {
//!     settled.await; // the running check finished, or the bound elapsed
//! }
//! for (path, diagnostics) in engine.snapshot().files() {
//!     eprintln!("{}: {} problems", path.display(), diagnostics.len());
//! }
//! # }
//! ```
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::dbg_macro))]

pub mod args;
pub mod bridge;
pub mod diagnostics;
pub mod headless;
#[cfg(unix)]
pub mod logging;
#[cfg(unix)]
pub mod lsp_record;
#[cfg(unix)]
pub mod proxy;
pub mod run;
#[cfg(test)]
mod test_util;
