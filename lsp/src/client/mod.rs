//! The host as an LSP client: [`LspDiagnostics`] starts a language server,
//! keeps it told of the files that change on disk, and serves what it
//! publishes as the tools' `DiagnosticsQuery` port (`ide-mcp serve --lsp`).
//!
//! - Start: `initialize` with the workspace folders and what the host really
//!   does (publishDiagnostics with `versionSupport`, work-done progress,
//!   `workspace/configuration` answered, UTF-16 positions), `initialized`,
//!   then `didOpen` for the files to open up front.
//! - Changes: each file changed on disk that the server diagnoses is opened
//!   (`didOpen`) or updated (`didChange` with the whole text, `didSave`);
//!   a query waits, within its bound, for the server's publish of that new
//!   version or for the end of its work-done progress.
//! - Liveness: while it runs, the server is asked `$/ide-mcp/ping`
//!   ([`PROBE_METHOD`]) every [`Probe::interval`]. No server knows that
//!   method, and LSP requires a `$/` request it does not know to be answered
//!   with `MethodNotFound` (-32601): any answer, result or error, proves it
//!   alive (pyright and clangd do, in milliseconds; pyright in a second or
//!   two while it indexes a large workspace). A probe unanswered past
//!   [`Probe::timeout`] declares the server hung, unless it sent something
//!   else meanwhile: a busy server is given another deadline,
//!   [`PROBE_BUSY_WINDOWS`] at most.
//! - Failure: a server that cannot start, exits, does not answer
//!   `initialize` or is declared hung is logged with the tail of its stderr
//!   (a hung one is killed first; the requests it left unanswered fail at
//!   once) and started again after a growing pause ([`MAX_RESTARTS`] in a
//!   row at most); its diagnostics are dropped meanwhile, never served
//!   stale, and queries stop waiting for its fresh ones.
//! - Exit: [`LspDiagnostics::shutdown`] sends `shutdown` and `exit`, each
//!   bounded, and kills a server that hangs; dropping the handle kills it.
//! - Questions: [`language_servers`] serves the live LSP tools from the
//!   running servers, on the disk's text (`live_host`).

mod access;
mod connection;
mod diagnostics;
mod documents;
mod known;
mod live_host;
mod liveness;
mod options;
mod state;
mod supervisor;

pub use diagnostics::LspDiagnostics;
pub use documents::language_id;
pub use known::ServerKind;
pub use live_host::{START_WAIT, language_servers};
pub use options::{
    FIRST_BACKOFF, INITIALIZE_TIMEOUT, LspServerOptions, MAX_BACKOFF, MAX_RESTARTS,
    PROBE_BUSY_WINDOWS, PROBE_INTERVAL, PROBE_METHOD, PROBE_TIMEOUT, Probe, ProgressCallback,
    SHUTDOWN_TIMEOUT,
};
