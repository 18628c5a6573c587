//! The seam between the live tools and the language servers they ask:
//! [`ServerHost`], which the LSP proxy's workspace implements over the
//! editor's servers (`workspace/live.rs`) and the LSP client over the
//! servers `serve --lsp` runs itself (`client/live_host.rs`).

use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ide_mcp_tools::LspFeature;
use lsp_types::Diagnostic;
use ropey::Rope;
use serde_json::Value;

use ide_mcp_tools::position::PositionEncoding;

/// How long a request toward a server waits for its answer.
pub const SERVER_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a request toward a server failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerRequestError {
    /// The server's queue is full or closed.
    NotSent,
    /// No answer within [`SERVER_REQUEST_TIMEOUT`].
    TimedOut,
    /// The server answered with an error.
    Failed(String),
    /// The server exited, or was found hung, before it answered (it is
    /// being started again).
    Gone,
}

impl fmt::Display for ServerRequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotSent => f.write_str("the request could not be sent to the language server"),
            Self::TimedOut => write!(
                f,
                "the language server did not answer within {} s",
                SERVER_REQUEST_TIMEOUT.as_secs()
            ),
            Self::Failed(message) => {
                write!(f, "the language server answered with an error: {message}")
            }
            Self::Gone => f.write_str(
                "the language server stopped before it answered (it is being restarted): ask again",
            ),
        }
    }
}

impl std::error::Error for ServerRequestError {}

/// What a server said of itself that a question needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerFacts {
    /// The server's name (`serverInfo.name`).
    pub name: Option<String>,
    /// The position encoding it counts in.
    pub encoding: PositionEncoding,
    /// Its capabilities for the live LSP tools (`initialize`'s, and those
    /// registered since, with their options).
    pub capabilities: Value,
}

impl ServerFacts {
    /// The server's provider of `feature` (`true` or its options, such as
    /// `{"prepareProvider": true}`); `None` when it does not provide it.
    pub fn provider(&self, feature: LspFeature) -> Option<&Value> {
        provider(&self.capabilities, feature)
    }

    /// Whether the provider of `feature` has option `option` set
    /// (`renameProvider.prepareProvider`, `codeActionProvider.resolveProvider`).
    pub fn provider_option(&self, feature: LspFeature, option: &str) -> bool {
        self.provider(feature)
            .is_some_and(|p| p[option] == Value::Bool(true))
    }
}

/// The provider of `feature` in `capabilities` (`true` or its options);
/// `None` when absent or `false`.
pub(crate) fn provider(capabilities: &Value, feature: LspFeature) -> Option<&Value> {
    capabilities
        .get(feature.capability())
        .filter(|p| !matches!(p, Value::Null | Value::Bool(false)))
}

/// The message saying that the server for `path` does not provide
/// `feature`.
pub(crate) fn unsupported(path: &Path, server: Option<&str>, feature: LspFeature) -> String {
    match server {
        Some(name) => format!(
            "the language server for {} ({name}) does not provide {}",
            path.display(),
            feature.what()
        ),
        None => format!(
            "the language server for {} does not provide {}",
            path.display(),
            feature.what()
        ),
    }
}

/// The texts of files, for the answers' line texts and diffs.
pub(crate) trait FileTexts: Sync {
    /// The text of `path` as the host has it; `None` when it cannot be read.
    fn text_of(&self, path: &Path) -> Option<Rope>;
}

/// The disk's texts.
pub(crate) struct Disk;

impl FileTexts for Disk {
    fn text_of(&self, path: &Path) -> Option<Rope> {
        std::fs::read_to_string(path).ok().map(Rope::from)
    }
}

/// The file a question is about, as its server has it.
pub(crate) struct Document<H> {
    /// The text the question is asked on (and positions are counted in).
    pub(crate) text: Rope,
    /// The version of `text` the server has; `None` when the host does
    /// not have the file open (the server then has it as the disk does).
    pub(crate) version: Option<i32>,
    /// The file opened on the server for the question, when the server
    /// did not have it: closed when the last question holding it drops
    /// it, answered or not.
    pub(crate) held: Option<H>,
}

/// A host's language servers, as the live tools ask them: which server a
/// question goes to, the texts it is asked on, and the server's wire.
/// Everything else (positions, answers, edits) is the tools' logic, the
/// same for every host.
pub(crate) trait ServerHost: FileTexts + Send + Sync + 'static {
    /// Where a request goes: one server.
    type Route: Clone + Send + Sync;
    /// A document opened on a server for a question (see [`Document`]).
    type Held: Send + Sync;

    /// What `route`'s server said of itself.
    fn facts(route: &Self::Route) -> &ServerFacts;

    /// Resolves when the servers that could answer about `path` (every
    /// server, for `None`) are up, or when waiting longer would not help;
    /// a host whose servers are always there answers at once.
    fn ready(&self, path: Option<&Path>) -> impl Future<Output = ()> + Send {
        let _ = path;
        std::future::ready(())
    }

    /// The server for `feature` on `path`; the message for the model when
    /// there is none, or it does not provide `feature`.
    fn route_for(&self, path: &Path, feature: LspFeature) -> Result<Self::Route, String>;

    /// Every server that provides `feature` (workspace symbols).
    fn routes_providing(&self, feature: LspFeature) -> Vec<Self::Route>;

    /// The message for the model when no server provides `feature`.
    fn none_provides(&self, feature: LspFeature) -> String;

    /// Sends request `method` with `params` to `route`'s server and waits,
    /// at most [`SERVER_REQUEST_TIMEOUT`], for its `result`; dropped or
    /// timed out, the server gets `$/cancelRequest`.
    fn send(
        &self,
        route: &Self::Route,
        method: &str,
        params: &Value,
    ) -> impl Future<Output = Result<Value, ServerRequestError>> + Send;

    /// `path` as `route`'s server has it for a question, opened on it
    /// (text from disk) when it does not have it; `uri` is its URI.
    fn document(
        &self,
        route: &Self::Route,
        path: &Path,
        uri: &str,
    ) -> Result<Document<Self::Held>, String>;

    /// The version of `path` the host has open for `route`'s server, which
    /// a server's edit of it must be computed on.
    fn version_of(&self, route: &Self::Route, path: &Path) -> Option<i32>;

    /// The diagnostics `route`'s server published for `path`, positions in
    /// UTF-16, each with its `source` (the server's name when it left it
    /// out); a host that knows the server is still at work on its latest
    /// texts waits for them, within its bound.
    fn published(
        &self,
        route: &Self::Route,
        path: &Path,
    ) -> impl Future<Output = Option<Arc<[Diagnostic]>>> + Send;

    /// The workspace folders, which diffs name their files relative to.
    fn folders(&self) -> Vec<PathBuf>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_the_file_and_the_server() {
        let path = Path::new("/w/a.c");
        assert_eq!(
            unsupported(path, Some("clangd"), LspFeature::References),
            "the language server for /w/a.c (clangd) does not provide references"
        );
        assert_eq!(
            unsupported(path, None, LspFeature::Hover),
            "the language server for /w/a.c does not provide hover"
        );
    }
}
