//! The documents the host has opened in the server, and their sync: the
//! whole text on every change (servers accept full sync whatever they
//! prefer), `didSave` when the server wants it, pulls when it offers them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::connection::{Connection, folder_name};
use super::state::Store;
use ide_mcp_tools::uri::encoded_file_uri;

/// How long a pull (`textDocument/diagnostic`) may take.
const PULL_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug)]
struct Document {
    version: i32,
    text: String,
}

/// The host's documents in one server; kept across restarts (a restarted
/// server gets them all again).
#[derive(Debug, Default)]
pub(crate) struct Documents {
    open: HashMap<Arc<Path>, Document>,
    /// Opened at the next (re)start.
    wanted: Vec<Arc<Path>>,
    save: bool,
    pull: bool,
}

impl Documents {
    pub(crate) fn new<'a>(open: impl Iterator<Item = &'a PathBuf>) -> Self {
        Self {
            wanted: open.map(|path| Arc::from(path.as_path())).collect(),
            ..Self::default()
        }
    }

    /// Changes seen while the server was down: opened when it is back.
    pub(crate) fn noted(&mut self, paths: Vec<Arc<Path>>) {
        for path in paths {
            if !self.wanted.contains(&path) && !self.open.contains_key(&path) {
                self.wanted.push(path);
            }
        }
    }

    /// Reads what the server's `initialize` answer offers.
    pub(crate) fn set_capabilities(&mut self, capabilities: &Value) {
        let sync = capabilities.get("textDocumentSync");
        self.save = sync
            .and_then(|sync| sync.get("save"))
            .is_some_and(|save| save.as_bool() != Some(false));
        self.pull = capabilities
            .get("diagnosticProvider")
            .is_some_and(|provider| !provider.is_null());
    }

    /// A new server: every known document is opened again.
    pub(crate) async fn reopen_all(&mut self, connection: &Connection, store: &Store) {
        let mut paths: Vec<Arc<Path>> = std::mem::take(&mut self.wanted);
        for path in self.open.keys() {
            if !paths.contains(path) {
                paths.push(Arc::clone(path));
            }
        }
        let versions: HashMap<Arc<Path>, i32> = self
            .open
            .drain()
            .map(|(path, doc)| (path, doc.version))
            .collect();
        for path in paths {
            store.changed(&path);
            match tokio::fs::read_to_string(&*path).await {
                Ok(text) => {
                    let version = versions.get(&path).map_or(1, |v| v + 1);
                    self.open_document(connection, store, path, version, text);
                }
                Err(error) => {
                    tracing::debug!(path = %path.display(), %error, "cannot open a document");
                    store.not_sent(&path);
                }
            }
        }
        self.pull_all(connection, store).await;
    }

    /// Files changed on disk: open, update or close them in the server.
    pub(crate) async fn sync(
        &mut self,
        connection: &Connection,
        store: &Store,
        paths: Vec<Arc<Path>>,
    ) {
        let mut pulls = Vec::new();
        for path in paths {
            let uri = encoded_file_uri(&path);
            match tokio::fs::read_to_string(&*path).await {
                Ok(text) => match self.open.get_mut(&path) {
                    Some(doc) if doc.text == text => store.not_sent(&path),
                    Some(doc) => {
                        doc.version += 1;
                        doc.text = text;
                        connection.notify(
                            "textDocument/didChange",
                            &json!({"textDocument": {"uri": uri, "version": doc.version},
                                   "contentChanges": [{"text": doc.text}]}),
                        );
                        if self.save {
                            connection.notify(
                                "textDocument/didSave",
                                &json!({"textDocument": {"uri": uri}}),
                            );
                        }
                        store.sent(&path, doc.version);
                        pulls.push(path);
                    }
                    None => {
                        self.open_document(connection, store, Arc::clone(&path), 1, text);
                        pulls.push(path);
                    }
                },
                Err(_) if !path.exists() => {
                    if self.open.remove(&path).is_some() {
                        connection.notify(
                            "textDocument/didClose",
                            &json!({"textDocument": {"uri": uri}}),
                        );
                    }
                    connection.notify(
                        "workspace/didChangeWatchedFiles",
                        &json!({"changes": [{"uri": uri, "type": 3}]}),
                    );
                    store.not_sent(&path);
                    // A deleted file has no problems left.
                    store.publish(path, None, Vec::new());
                }
                Err(error) => {
                    tracing::debug!(path = %path.display(), %error, "cannot read a changed file");
                    store.not_sent(&path);
                }
            }
        }
        if self.pull {
            for path in pulls {
                self.pull(connection, store, path).await;
            }
        }
    }

    fn open_document(
        &mut self,
        connection: &Connection,
        store: &Store,
        path: Arc<Path>,
        version: i32,
        text: String,
    ) {
        connection.notify(
            "textDocument/didOpen",
            &json!({"textDocument": {"uri": encoded_file_uri(&path), "languageId": language_id(&path),
                                    "version": version, "text": text}}),
        );
        store.sent(&path, version);
        self.open.insert(path, Document { version, text });
    }

    async fn pull_all(&self, connection: &Connection, store: &Store) {
        if !self.pull {
            return;
        }
        let paths: Vec<Arc<Path>> = self.open.keys().cloned().collect();
        for path in paths {
            self.pull(connection, store, path).await;
        }
    }

    /// Pulls one document's diagnostics (`textDocument/diagnostic`).
    async fn pull(&self, connection: &Connection, store: &Store, path: Arc<Path>) {
        let Some(version) = self.open.get(&path).map(|doc| doc.version) else {
            return;
        };
        let params = json!({"textDocument": {"uri": encoded_file_uri(&path)}});
        match connection
            .request("textDocument/diagnostic", params, PULL_TIMEOUT)
            .await
        {
            Ok(report) => {
                let items = match report.get("kind").and_then(Value::as_str) {
                    Some("full") => report
                        .get("items")
                        .cloned()
                        .and_then(|items| serde_json::from_value(items).ok())
                        .unwrap_or_default(),
                    // "unchanged": what was published stands.
                    _ => store.for_path(&path),
                };
                store.publish(path, Some(version), items);
            }
            Err(error) => {
                tracing::debug!(path = %path.display(), %error, "pull diagnostics failed");
                store.unanswered(&path);
            }
        }
    }
}

/// The `initialize` params: the folders, and only the capabilities the host
/// really has.
pub(crate) fn initialize_params(folders: &[PathBuf]) -> Value {
    let workspace_folders: Vec<Value> = folders
        .iter()
        .map(|folder| json!({"uri": encoded_file_uri(folder), "name": folder_name(folder)}))
        .collect();
    let root = folders.first();
    json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "ide-mcp", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": root.map(|folder| encoded_file_uri(folder)),
        "rootPath": root.map(|folder| folder.display().to_string()),
        "workspaceFolders": workspace_folders,
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "window": {"workDoneProgress": true},
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "didChangeConfiguration": {"dynamicRegistration": false},
                "didChangeWatchedFiles": {"dynamicRegistration": false},
            },
            "textDocument": {
                "synchronization": {"didSave": true, "dynamicRegistration": false},
                "publishDiagnostics": {
                    "versionSupport": true,
                    "tagSupport": {"valueSet": [1, 2]},
                    "codeDescriptionSupport": true,
                },
                "diagnostic": {"dynamicRegistration": false, "relatedDocumentSupport": false},
            },
        },
    })
}

/// The LSP language identifier for a file, by its extension.
pub fn language_id(path: &Path) -> &'static str {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    match extension.as_str() {
        "rs" => "rust",
        "toml" => "toml",
        "md" => "markdown",
        "json" => "json",
        "yaml" | "yml" => "yaml",
        "py" | "pyi" => "python",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" => "cpp",
        "m" => "objective-c",
        "mm" => "objective-cpp",
        "java" => "java",
        "sh" | "bash" => "shellscript",
        "html" | "htm" => "html",
        "css" => "css",
        _ => "plaintext",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_ids_are_lsp_identifiers() {
        assert_eq!(language_id(Path::new("/a/b.rs")), "rust");
        assert_eq!(language_id(Path::new("/a/B.TSX")), "typescriptreact");
        assert_eq!(language_id(Path::new("/a/x.pyi")), "python");
        assert_eq!(language_id(Path::new("/a/Makefile")), "plaintext");
    }
}
