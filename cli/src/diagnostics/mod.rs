//! Cargo diagnostics: `cargo check` run in the background, its compiler
//! messages converted to LSP diagnostics per file.
//!
//! - [`convert`]: rustc's JSON diagnostics → `lsp_types::Diagnostic`, with
//!   UTF-16 positions.
//! - [`check`]: one `cargo check` run as a child process.
//! - [`engine`]: [`CargoDiagnostics`], which re-checks when files change and
//!   lets a query wait, within a bound, for the running check.

pub mod check;
pub mod convert;
pub mod engine;

pub use check::{CheckError, CheckOptions, run_check};
pub use convert::{Converter, DiagnosticsByFile};
pub use engine::{CargoDiagnostics, DIAGNOSTICS_WAIT, DiagnosticsSnapshot, EngineConfig};
