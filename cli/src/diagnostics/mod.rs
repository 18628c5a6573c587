//! Cargo diagnostics: `cargo check` run in the background, its compiler
//! messages converted to LSP diagnostics per file.
//!
//! - [`convert`]: rustc's JSON diagnostics → `lsp_types::Diagnostic`, with
//!   UTF-16 positions.
//! - [`check`]: one `cargo check` run as a child process.
//! - [`engine`]: [`CargoDiagnostics`], which re-checks when files change and
//!   lets a query wait, within a bound, for the running check; it is the
//!   tools crate's `DiagnosticsQuery` port ([`CombinedDiagnostics`] for
//!   several workspaces).

pub mod check;
pub mod convert;
pub mod engine;
mod port;

pub use check::{CheckError, CheckOptions, run_check};
pub use convert::{Converter, DiagnosticsByFile};
pub use engine::{CargoDiagnostics, DIAGNOSTICS_WAIT, DiagnosticsSnapshot, EngineConfig};
pub use port::CombinedDiagnostics;
