//! How a language server is run: its command, folders, probe and bounds.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How long `initialize` may take before the server counts as hung.
pub const INITIALIZE_TIMEOUT: Duration = Duration::from_mins(1);
/// How long `shutdown` and then the exit may each take before a kill.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);
/// The first pause before a restart; it doubles with each failure in a row.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest pause before a restart.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Failures in a row after which the server is given up.
pub const MAX_RESTARTS: u32 = 8;
/// A server that ran this long had no failure "in a row".
pub(super) const STABLE: Duration = Duration::from_mins(1);
/// The liveness probe's request: a method no server knows, which LSP
/// requires to be answered with `MethodNotFound` (`$/` methods).
pub const PROBE_METHOD: &str = "$/ide-mcp/ping";
/// How often a running server is probed, by default.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(30);
/// How long the probe's answer may take, by default.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// How many deadlines in a row a server that keeps sending other messages
/// may leave the probe unanswered before it is declared hung all the same
/// (two minutes at the default timeout).
pub const PROBE_BUSY_WINDOWS: u32 = 12;

/// How a running server is checked for answers; see the
/// [module documentation](super).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The pause between one probe's answer and the next probe.
    pub interval: Duration,
    /// How long an answer may take before the server counts as hung.
    pub timeout: Duration,
}

impl Default for Probe {
    fn default() -> Self {
        Self {
            interval: PROBE_INTERVAL,
            timeout: PROBE_TIMEOUT,
        }
    }
}

/// How one language server is run.
#[derive(Clone, Debug)]
pub struct LspServerOptions {
    /// The program and its arguments, e.g. `["pyright-langserver", "--stdio"]`.
    pub command: Vec<String>,
    /// The workspace folders (absolute); the server runs in the first.
    pub folders: Vec<PathBuf>,
    /// Files to open at start (absolute); those the server does not
    /// diagnose are left out.
    pub open: Vec<PathBuf>,
    /// The bound of a query's wait for fresh diagnostics.
    pub wait: Duration,
    /// Whether the server starts only when diagnostics are first asked for.
    pub lazy: bool,
    /// The liveness probe; `None` never probes (a hung server then stays).
    pub probe: Option<Probe>,
}

impl LspServerOptions {
    /// Parses `SERVER [ARGS...]` (split at whitespace; quotes group words).
    pub fn parse_command(text: &str) -> Result<Vec<String>, String> {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut quote = None;
        let mut any = false;
        for c in text.chars() {
            match (quote, c) {
                (None, '\'' | '"') => {
                    quote = Some(c);
                    any = true;
                }
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() => {
                    if any {
                        words.push(std::mem::take(&mut word));
                        any = false;
                    }
                }
                (_, c) => {
                    word.push(c);
                    any = true;
                }
            }
        }
        if quote.is_some() {
            return Err(format!("unclosed quote in `{text}`"));
        }
        if any {
            words.push(word);
        }
        if words.is_empty() {
            return Err("expected `SERVER [ARGS...]`, got nothing".to_owned());
        }
        Ok(words)
    }
}

/// Hears about the server's work-done progress: `Some(line)` while it works,
/// `None` when it is done.
pub type ProgressCallback = Arc<dyn Fn(Option<String>) + Send + Sync>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_at_whitespace_with_quotes() {
        let parse = LspServerOptions::parse_command;
        assert_eq!(
            parse("pyright-langserver  --stdio").unwrap(),
            ["pyright-langserver", "--stdio"]
        );
        assert_eq!(
            parse(r#"clangd "--query-driver=/usr/bin/*" ''"#).unwrap(),
            ["clangd", "--query-driver=/usr/bin/*", ""]
        );
        assert!(parse("  ").is_err());
        assert!(parse("a 'b").is_err());
    }
}
