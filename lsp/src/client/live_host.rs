//! The live LSP tools on the servers the host runs itself (`serve --lsp`):
//! [`OwnServers`] is their [`ServerHost`], on the disk's text.
//!
//! A question goes to the first server for the file's extension that
//! runs and provides the feature. It waits, at most [`START_WAIT`], for
//! the servers that could answer to be up (a lazy one is started); one
//! still starting, restarting or given up is a message for the model.
//! The file is asked about as the server has it: as the host last synced
//! it from disk, else read from disk and opened on the server for the
//! question ([`OpenDocuments::hold`](super::documents::OpenDocuments::hold)), closed when the last question
//! holding it is done (its diagnostics awaited meanwhile like a changed
//! file's, for `quickFixes`). A server that exits or is found hung fails its
//! questions at once; a new life of it never sees an earlier one's
//! documents.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use ide_mcp_tools::{DiagnosticsQuery as _, LanguageServers, LspFeature};
use lsp_types::Diagnostic;
use ropey::Rope;
use serde_json::Value;

use super::access::Running;
use super::connection::ServerLink;
use super::diagnostics::LspDiagnostics;
use crate::live::{
    Disk, Document, FileTexts, Live, ServerFacts, ServerHost, ServerRequestError, unsupported,
};

/// How long a question waits for a server that is starting or restarting.
pub const START_WAIT: Duration = Duration::from_secs(30);

/// A document opened on a server for a question: released when dropped.
pub(crate) struct Held {
    server: Arc<LspDiagnostics>,
    link: ServerLink,
    life: u64,
    path: Arc<Path>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let documents = &self.server.access.documents;
        if documents.release(&self.link, self.life, &self.path) {
            // Closed: no diagnostics of the question's text are awaited.
            self.server.store.unanswered(&self.path);
        }
    }
}

/// Where a question goes: one running server.
#[derive(Clone, Debug)]
pub(crate) struct OwnRoute {
    server: Arc<LspDiagnostics>,
    running: Running,
}

/// The servers the host runs, as the live tools' host; see the
/// [module documentation](self).
#[derive(Debug)]
pub(crate) struct OwnServers {
    servers: Vec<Arc<LspDiagnostics>>,
    folders: Vec<PathBuf>,
}

impl OwnServers {
    pub(crate) fn new(servers: Vec<Arc<LspDiagnostics>>, folders: Vec<PathBuf>) -> Self {
        Self { servers, folders }
    }

    /// The servers for `path`'s extension (every server for `None`).
    fn handling(&self, path: Option<&Path>) -> Vec<&Arc<LspDiagnostics>> {
        self.servers
            .iter()
            .filter(|server| path.is_none_or(|path| server.kind.handles(path)))
            .collect()
    }

    fn route(server: &Arc<LspDiagnostics>) -> Option<OwnRoute> {
        Some(OwnRoute {
            server: Arc::clone(server),
            running: server.access.running()?,
        })
    }
}

impl FileTexts for OwnServers {
    /// The disk's.
    fn text_of(&self, path: &Path) -> Option<Rope> {
        Disk.text_of(path)
    }
}

impl ServerHost for OwnServers {
    type Route = OwnRoute;
    type Held = Held;

    fn facts(route: &OwnRoute) -> &ServerFacts {
        &route.running.facts
    }

    async fn ready(&self, path: Option<&Path>) {
        let servers = self.handling(path);
        for server in &servers {
            server.start_if_lazy();
        }
        let settled = join_all(servers.iter().map(|server| server.access.settled()));
        // Past the bound, the route says which server is not up.
        let _ = tokio::time::timeout(START_WAIT, settled).await;
    }

    fn route_for(&self, path: &Path, feature: LspFeature) -> Result<OwnRoute, String> {
        let servers = self.handling(Some(path));
        if servers.is_empty() {
            return Err(format!(
                "no language server run by this host (`serve --lsp`) handles {}: add `--lsp` with a server for its language",
                path.display()
            ));
        }
        let routes: Vec<OwnRoute> = servers.iter().filter_map(|s| Self::route(s)).collect();
        let Some(first) = routes.first() else {
            let names: Vec<&str> = servers.iter().map(|s| s.kind.name.as_str()).collect();
            return Err(format!(
                "the language server for {} ({}) is not running: it is starting or restarting, or failed too often (see the host's log)",
                path.display(),
                names.join(", ")
            ));
        };
        routes
            .iter()
            .find(|route| route.running.facts.provider(feature).is_some())
            .cloned()
            .ok_or_else(|| unsupported(path, first.running.facts.name.as_deref(), feature))
    }

    fn routes_providing(&self, feature: LspFeature) -> Vec<OwnRoute> {
        self.servers
            .iter()
            .filter_map(Self::route)
            .filter(|route| route.running.facts.provider(feature).is_some())
            .collect()
    }

    fn none_provides(&self, feature: LspFeature) -> String {
        format!(
            "no language server run by this host (`serve --lsp`) provides {}",
            feature.what()
        )
    }

    async fn send(
        &self,
        route: &OwnRoute,
        method: &str,
        params: &Value,
    ) -> Result<Value, ServerRequestError> {
        route.running.link.request(method, params.clone()).await
    }

    fn document(&self, route: &OwnRoute, path: &Path, uri: &str) -> Result<Document<Held>, String> {
        let Running { link, life, .. } = &route.running;
        let server = &route.server;
        let asked = server.access.documents.hold(link, *life, path, uri)?;
        let path: Arc<Path> = Arc::from(path);
        if asked.opened {
            // Its diagnostics (`quickFixes`) are awaited like a change's.
            server.store.opened_for_question(&path);
        }
        let held = asked.held.then(|| Held {
            server: Arc::clone(server),
            link: link.clone(),
            life: *life,
            path,
        });
        Ok(Document {
            text: asked.text,
            version: asked.version,
            held,
        })
    }

    fn version_of(&self, route: &OwnRoute, path: &Path) -> Option<i32> {
        route.server.access.documents.version(path)
    }

    /// Once the server published for the texts it was sent (within the
    /// host's bound, `--diagnostics-wait`).
    async fn published(&self, route: &OwnRoute, path: &Path) -> Option<Arc<[Diagnostic]>> {
        let store = &route.server.store;
        if let Some(settled) = store.settle() {
            settled.await;
        }
        store.for_file(path)
    }

    fn folders(&self) -> Vec<PathBuf> {
        self.folders.clone()
    }
}

/// The live LSP tools' port over `servers` (run by this host), on the
/// disk's text; `folders` are the workspace folders diffs are relative to.
pub fn language_servers(
    servers: &[Arc<LspDiagnostics>],
    folders: &[PathBuf],
) -> Arc<dyn LanguageServers> {
    let host = OwnServers::new(servers.to_vec(), folders.to_vec());
    Arc::new(Live(Arc::new(host)))
}
