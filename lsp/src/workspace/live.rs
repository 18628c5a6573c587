//! The editor's own servers as the live tools' [`ServerHost`]: a question
//! goes to the server of a stream that has the file open, else of one
//! whose editor opened files of its language
//! ([`ServerRequests::route_for`]), on the editor's text (unsaved edits
//! included), else the file's. A file the server does not have open is
//! opened on it for the question (text from disk) through the proxy only:
//! neither the editor nor the host's observer sees it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ide_mcp_tools::{BufferStore, LspFeature};
use lsp_types::Diagnostic;
use ropey::Rope;
use serde_json::{Value, json};

use super::servers::{NoRoute, ServerRequests, ServerRoute};
use super::state::LspWorkspace;
use crate::live::{
    Disk, Document, FileTexts, ServerFacts, ServerHost, ServerRequestError, unsupported,
};

/// The message for the model when no route was found.
fn no_route(error: NoRoute, path: &Path, feature: LspFeature) -> String {
    match error {
        NoRoute::NoServer => format!(
            "no language server of the editor's handles {}: open a file of its language in the editor first",
            path.display()
        ),
        NoRoute::Unsupported(name) => unsupported(path, name.as_deref(), feature),
    }
}

/// A document the IDE opened on a server for a question: closed when the
/// last question using it is done (dropped, answered or not).
pub(crate) struct OpenedForUs {
    servers: Arc<ServerRequests>,
    route: ServerRoute,
    path: PathBuf,
    uri: String,
}

impl Drop for OpenedForUs {
    fn drop(&mut self) {
        if self.servers.release_open(self.route.stream, &self.path) {
            let params = json!({"textDocument": {"uri": self.uri}});
            self.route.notify("textDocument/didClose", &params);
        }
    }
}

impl LspWorkspace {
    /// Opens `path` on `route`'s server unless its editor has it open there.
    fn open_for_us(
        &self,
        route: &ServerRoute,
        path: &Path,
        uri: &str,
        text: &Rope,
    ) -> Result<Option<OpenedForUs>, String> {
        if self.documents.openers(path).contains(&route.stream) {
            return Ok(None);
        }
        let opened = OpenedForUs {
            servers: Arc::clone(&self.servers),
            route: route.clone(),
            path: path.to_path_buf(),
            uri: uri.to_owned(),
        };
        if self.servers.hold_open(route.stream, path) {
            let params = json!({"textDocument": {
                "uri": uri,
                "languageId": route.language_id.as_deref().unwrap_or_default(),
                "version": 0,
                "text": text.to_string(),
            }});
            if !route.notify("textDocument/didOpen", &params) {
                return Err("the document could not be opened on the language server".into());
            }
        }
        Ok(Some(opened))
    }
}

impl FileTexts for LspWorkspace {
    /// The editor's text when open, else the file's.
    fn text_of(&self, path: &Path) -> Option<Rope> {
        match self.handle_for_path(path) {
            Some(handle) => Some(handle.snapshot().text.clone()),
            None => Disk.text_of(path),
        }
    }
}

impl ServerHost for LspWorkspace {
    type Route = ServerRoute;
    type Held = OpenedForUs;

    fn facts(route: &ServerRoute) -> &ServerFacts {
        &route.server
    }

    fn route_for(&self, path: &Path, feature: LspFeature) -> Result<ServerRoute, String> {
        self.servers
            .route_for(path, &self.documents.openers(path), feature)
            .map_err(|error| no_route(error, path, feature))
    }

    fn routes_providing(&self, feature: LspFeature) -> Vec<ServerRoute> {
        self.servers.routes_providing(feature)
    }

    fn none_provides(&self, feature: LspFeature) -> String {
        format!(
            "no language server of the editor's provides {}",
            feature.what()
        )
    }

    async fn send(
        &self,
        route: &ServerRoute,
        method: &str,
        params: &Value,
    ) -> Result<Value, ServerRequestError> {
        self.servers.send(route, method, params).await
    }

    fn document(
        &self,
        route: &ServerRoute,
        path: &Path,
        uri: &str,
    ) -> Result<Document<OpenedForUs>, String> {
        let (text, version) = if let Some(handle) = self.handle_for_path(path) {
            let snapshot = handle.snapshot();
            (snapshot.text.clone(), Some(snapshot.version))
        } else {
            let text = std::fs::read_to_string(path)
                .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
            (Rope::from(text), None)
        };
        let held = self.open_for_us(route, path, uri, &text)?;
        Ok(Document {
            text,
            version,
            held,
        })
    }

    /// The editor's current version, whichever stream it opened it on.
    fn version_of(&self, _route: &ServerRoute, path: &Path) -> Option<i32> {
        self.handle_for_path(path)
            .map(|handle| handle.snapshot().version)
    }

    /// As the server published them to the editor, on its own stream, at
    /// once.
    async fn published(&self, route: &ServerRoute, path: &Path) -> Option<Arc<[Diagnostic]>> {
        self.diagnostics.of_stream(route.stream, path)
    }

    fn folders(&self) -> Vec<PathBuf> {
        self.workspace_folders()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wording of an unsupported feature is [`unsupported`]'s (tested
    /// with it); no server at all has its own.
    #[test]
    fn refusals_name_the_file_and_the_server() {
        let path = Path::new("/w/a.c");
        for server in [Some("clangd"), None] {
            let refusal = NoRoute::Unsupported(server.map(Into::into));
            let expected = unsupported(path, server, LspFeature::References);
            assert_eq!(no_route(refusal, path, LspFeature::References), expected);
        }
        assert_eq!(
            no_route(NoRoute::NoServer, path, LspFeature::Hover),
            "no language server of the editor's handles /w/a.c: open a file of its language in the editor first"
        );
    }
}
