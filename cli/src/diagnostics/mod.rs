//! The host's diagnostics: every source behind the tools crate's
//! `DiagnosticsQuery` port, merged per document by [`CombinedDiagnostics`].
//!
//! The cargo source: `cargo check` run in the background, its compiler
//! messages converted to LSP diagnostics per file.
//!
//! - [`convert`]: rustc's JSON diagnostics → `lsp_types::Diagnostic`, with
//!   UTF-16 positions counted through rustc's own copy of each line.
//! - [`check`]: one `cargo check` run as a child process, with progress.
//! - [`manifest`]: a broken `Cargo.toml` as diagnostics on it.
//! - [`watch`]: which file changes can change a check.
//! - [`engine`]: [`CargoDiagnostics`], which re-checks when files change and
//!   lets a query wait, within a bound, for the running check.
//! - [`progress`]: long work, for the log and a terminal's progress line.
//! - [`lsp`]: the `--lsp` language servers as sources.
//! - [`sources`]: which sources the host starts.

pub mod check;
pub mod convert;
pub mod engine;
pub mod lsp;
pub mod manifest;
mod merge;
mod port;
pub mod progress;
pub mod sources;
pub mod watch;

pub use check::{CheckError, CheckOptions, run_check, run_check_reporting};
pub use convert::{Converter, DiagnosticsByFile};
pub use engine::{CargoDiagnostics, DIAGNOSTICS_WAIT, DiagnosticsSnapshot, EngineConfig};
pub use merge::CombinedDiagnostics;
pub use progress::{ProgressBoard, ProgressTask};
pub use watch::WatchFilter;
