//! The documents open on the server, and their sync: the whole text on
//! every change (servers accept full sync whatever they prefer),
//! `didSave` when the server wants it, pulls when it offers them.
//!
//! The table of open documents ([`OpenDocuments`]) is shared by the
//! supervisor, which keeps the host's documents in sync with the disk, and
//! the live tools' questions, which open others on the server for as long
//! as they ask ([`OpenDocuments::hold`]). Every `didOpen`, `didChange` and
//! `didClose` is sent under its lock, so that the server hears of each
//! document in the order the table changed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ropey::Rope;
use serde_json::{Value, json};

use super::connection::{Connection, ServerLink, folder_name};
use super::state::Store;
use crate::sync::lock;
use ide_mcp_tools::uri::encoded_file_uri;

/// How long a pull (`textDocument/diagnostic`) may take.
const PULL_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug)]
struct Document {
    version: i32,
    text: String,
    /// The host's: opened at start or changed on disk, kept open and in
    /// sync (else only questions hold it open).
    synced: bool,
    /// How many questions hold it open.
    held: usize,
}

#[derive(Debug, Default)]
struct Table {
    documents: HashMap<Arc<Path>, Document>,
    /// Bumped at each start of the server: a question of an earlier life
    /// neither opens nor closes documents on the new one.
    life: u64,
}

/// The documents open on one server, and the life of the server they are
/// open on; see the [module documentation](self).
#[derive(Debug, Default)]
pub(crate) struct OpenDocuments(Mutex<Table>);

/// A question's document: the text it is asked on, its version when the
/// host has it open, and whether the question holds it open (it must then
/// [`release`](OpenDocuments::release) it) and opened it.
#[derive(Debug)]
pub(crate) struct Asked {
    pub(crate) text: Rope,
    pub(crate) version: Option<i32>,
    pub(crate) held: bool,
    /// Opened on the server for this question (as version 0).
    pub(crate) opened: bool,
}

impl OpenDocuments {
    fn table(&self) -> MutexGuard<'_, Table> {
        lock(&self.0)
    }

    /// The life the documents are open in.
    pub(crate) fn life(&self) -> u64 {
        self.table().life
    }

    /// A new server: the documents only questions held are gone with the
    /// old one; the host's, with their versions, are to be opened again.
    fn begin_life(&self) -> HashMap<Arc<Path>, i32> {
        let mut table = self.table();
        table.life += 1;
        table
            .documents
            .drain()
            .filter(|(_, doc)| doc.synced)
            .map(|(path, doc)| (path, doc.version))
            .collect()
    }

    /// Whether the host keeps `path` open and in sync.
    fn is_synced(&self, path: &Path) -> bool {
        self.table().documents.get(path).is_some_and(|d| d.synced)
    }

    /// The version of `path` open on the server.
    pub(crate) fn version(&self, path: &Path) -> Option<i32> {
        self.table().documents.get(path).map(|doc| doc.version)
    }

    /// Makes `path` the host's, with `text`: opened as `first_version`
    /// when it is not open, changed (and saved, with `save`) when its text
    /// differs; the version sent, `None` when the server has that text.
    fn sync_text(
        &self,
        link: &ServerLink,
        path: &Arc<Path>,
        text: String,
        save: bool,
        first_version: i32,
    ) -> Option<i32> {
        let mut table = self.table();
        let uri = encoded_file_uri(path);
        match table.documents.get_mut(path) {
            Some(doc) if doc.text == text => {
                doc.synced = true;
                None
            }
            Some(doc) => {
                doc.synced = true;
                doc.version += 1;
                doc.text = text;
                link.notify(
                    "textDocument/didChange",
                    &json!({"textDocument": {"uri": uri, "version": doc.version},
                           "contentChanges": [{"text": doc.text}]}),
                );
                if save {
                    link.notify(
                        "textDocument/didSave",
                        &json!({"textDocument": {"uri": uri}}),
                    );
                }
                Some(doc.version)
            }
            None => {
                link.notify(
                    "textDocument/didOpen",
                    &json!({"textDocument": {"uri": uri, "languageId": language_id(path),
                                            "version": first_version, "text": text}}),
                );
                let doc = Document {
                    version: first_version,
                    text,
                    synced: true,
                    held: 0,
                };
                table.documents.insert(Arc::clone(path), doc);
                Some(first_version)
            }
        }
    }

    /// `path` is gone from disk: closed on the server if it was open.
    fn close(&self, link: &ServerLink, path: &Path) {
        let mut table = self.table();
        if table.documents.remove(path).is_some() {
            let uri = encoded_file_uri(path);
            link.notify(
                "textDocument/didClose",
                &json!({"textDocument": {"uri": uri}}),
            );
        }
    }

    /// `path` for a question on the server of life `life`, through
    /// `link`: as the server has it when open, else read from disk and
    /// opened on the server (`uri`, version 0) until the last question
    /// holding it [releases](Self::release) it.
    pub(crate) fn hold(
        &self,
        link: &ServerLink,
        life: u64,
        path: &Path,
        uri: &str,
    ) -> Result<Asked, String> {
        if let Some(asked) = self.hold_open(life, path)? {
            return Ok(asked);
        }
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        // Read without the lock: another question, or the host, may have
        // opened it meanwhile.
        if let Some(asked) = self.hold_open(life, path)? {
            return Ok(asked);
        }
        let mut table = self.table();
        if table.life != life {
            return Err(restarted());
        }
        link.notify(
            "textDocument/didOpen",
            &json!({"textDocument": {"uri": uri, "languageId": language_id(path),
                                    "version": 0, "text": text}}),
        );
        let asked = Asked {
            text: Rope::from(text.as_str()),
            version: None,
            held: true,
            opened: true,
        };
        let doc = Document {
            version: 0,
            text,
            synced: false,
            held: 1,
        };
        table.documents.insert(Arc::from(path), doc);
        Ok(asked)
    }

    /// `path` as the server has it, held by one more question unless the
    /// host keeps it open; `None` when it is not open.
    fn hold_open(&self, life: u64, path: &Path) -> Result<Option<Asked>, String> {
        let mut table = self.table();
        if table.life != life {
            return Err(restarted());
        }
        let Some(doc) = table.documents.get_mut(path) else {
            return Ok(None);
        };
        let held = !doc.synced;
        if held {
            doc.held += 1;
        }
        Ok(Some(Asked {
            text: Rope::from(doc.text.as_str()),
            version: doc.synced.then_some(doc.version),
            held,
            opened: false,
        }))
    }

    /// A question of life `life` is done with `path`: closed on the server
    /// when it was the last to hold it and the host does not keep it;
    /// whether it was closed.
    pub(crate) fn release(&self, link: &ServerLink, life: u64, path: &Path) -> bool {
        let mut table = self.table();
        if table.life != life {
            return false;
        }
        let Some(doc) = table.documents.get_mut(path) else {
            return false;
        };
        doc.held = doc.held.saturating_sub(1);
        if doc.held > 0 || doc.synced {
            return false;
        }
        table.documents.remove(path);
        let uri = encoded_file_uri(path);
        link.notify(
            "textDocument/didClose",
            &json!({"textDocument": {"uri": uri}}),
        );
        true
    }
}

fn restarted() -> String {
    "the language server was restarted during the question: ask again".to_owned()
}

/// The host's documents in one server; kept across restarts (a restarted
/// server gets them all again).
#[derive(Debug)]
pub(crate) struct Documents {
    open: Arc<OpenDocuments>,
    /// Opened at the next (re)start.
    wanted: Vec<Arc<Path>>,
    save: bool,
    pull: bool,
}

impl Documents {
    /// The host's documents, `open` at the first start, in the table `table`.
    pub(crate) fn new<'a>(
        open: impl Iterator<Item = &'a PathBuf>,
        table: Arc<OpenDocuments>,
    ) -> Self {
        Self {
            open: table,
            wanted: open.map(|path| Arc::from(path.as_path())).collect(),
            save: false,
            pull: false,
        }
    }

    /// Changes seen while the server was down: opened when it is back.
    pub(crate) fn noted(&mut self, paths: Vec<Arc<Path>>) {
        for path in paths {
            if !self.wanted.contains(&path) && !self.open.is_synced(&path) {
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

    /// A new server: every known document is opened again (then
    /// [`pull_all`](Self::pull_all)).
    pub(crate) async fn reopen_all(&mut self, connection: &Connection, store: &Store) {
        let versions = self.open.begin_life();
        let mut paths: Vec<Arc<Path>> = std::mem::take(&mut self.wanted);
        for path in versions.keys() {
            if !paths.contains(path) {
                paths.push(Arc::clone(path));
            }
        }
        let link = connection.link();
        for path in paths {
            store.changed(&path);
            match tokio::fs::read_to_string(&*path).await {
                Ok(text) => {
                    let version = versions.get(&path).map_or(1, |v| v + 1);
                    self.open_document(&link, store, &path, version, text);
                }
                Err(error) => {
                    tracing::debug!(path = %path.display(), %error, "cannot open a document");
                    store.not_sent(&path);
                }
            }
        }
    }

    /// Files changed on disk: open, update or close them in the server.
    pub(crate) async fn sync(
        &mut self,
        connection: &Connection,
        store: &Store,
        paths: Vec<Arc<Path>>,
    ) {
        let link = connection.link();
        let mut pulls = Vec::new();
        for path in paths {
            match tokio::fs::read_to_string(&*path).await {
                Ok(text) => match self.open.sync_text(&link, &path, text, self.save, 1) {
                    Some(version) => {
                        store.sent(&path, version);
                        pulls.push(path);
                    }
                    None => store.not_sent(&path),
                },
                Err(_) if !path.exists() => {
                    self.open.close(&link, &path);
                    connection.notify(
                        "workspace/didChangeWatchedFiles",
                        &json!({"changes": [{"uri": encoded_file_uri(&path), "type": 3}]}),
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
        &self,
        link: &ServerLink,
        store: &Store,
        path: &Arc<Path>,
        version: i32,
        text: String,
    ) {
        match self.open.sync_text(link, path, text, false, version) {
            Some(sent) => store.sent(path, sent),
            None => store.not_sent(path),
        }
    }

    /// Pulls the diagnostics of every open document, when the server
    /// offers pulls.
    pub(crate) async fn pull_all(&self, connection: &Connection, store: &Store) {
        if !self.pull {
            return;
        }
        let paths: Vec<Arc<Path>> = {
            let table = self.open.table();
            table
                .documents
                .iter()
                .filter(|(_, doc)| doc.synced)
                .map(|(path, _)| Arc::clone(path))
                .collect()
        };
        for path in paths {
            self.pull(connection, store, path).await;
        }
    }

    /// Pulls one document's diagnostics (`textDocument/diagnostic`).
    async fn pull(&self, connection: &Connection, store: &Store, path: Arc<Path>) {
        let Some(version) = self.open.version(&path) else {
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
/// really has (the live tools read every answer below: hierarchical
/// symbols, location links, code action literals with their edits,
/// prepared renames, edits of documents and files).
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
                "symbol": {"dynamicRegistration": false},
                "workspaceEdit": {
                    "documentChanges": true,
                    "resourceOperations": ["create", "rename", "delete"],
                },
            },
            "textDocument": {
                "hover": {"contentFormat": ["markdown", "plaintext"]},
                "definition": {"linkSupport": true},
                "implementation": {"linkSupport": true},
                "references": {},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                "callHierarchy": {},
                "rename": {"prepareSupport": true},
                "codeAction": {
                    "codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
                        "", "quickfix", "refactor", "refactor.extract", "refactor.inline",
                        "refactor.rewrite", "source", "source.organizeImports",
                    ]}},
                    "isPreferredSupport": true,
                    "disabledSupport": true,
                    "dataSupport": true,
                    "resolveSupport": {"properties": ["edit"]},
                },
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
    use crate::client::connection::tests::next_sent;

    /// Every message sent so far, as (method, params).
    fn sent(queue: &mut tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>) -> Vec<(String, Value)> {
        std::iter::from_fn(|| next_sent(queue))
            .map(|m| {
                (
                    m["method"].as_str().unwrap().to_owned(),
                    m["params"].clone(),
                )
            })
            .collect()
    }

    fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> (Arc<Path>, String) {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let uri = encoded_file_uri(&path);
        (Arc::from(path), uri)
    }

    #[test]
    fn questions_open_what_the_server_lacks_once_and_close_it_after_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let (path, uri) = file(&dir, "a.py", "x = 1\n");
        let (link, mut queue) = ServerLink::in_memory();
        let table = OpenDocuments::default();
        let life = table.life();
        let first = table.hold(&link, life, &path, &uri).unwrap();
        assert_eq!(
            (
                first.text.to_string(),
                first.version,
                first.held,
                first.opened
            ),
            ("x = 1\n".to_owned(), None, true, true)
        );
        let second = table.hold(&link, life, &path, &uri).unwrap();
        assert!(second.held && !second.opened);
        assert_eq!(
            sent(&mut queue),
            [(
                "textDocument/didOpen".to_owned(),
                json!({"textDocument": {"uri": uri, "languageId": "python", "version": 0, "text": "x = 1\n"}})
            )]
        );
        assert!(!table.release(&link, life, &path));
        assert!(table.release(&link, life, &path));
        assert!(!table.release(&link, life, &path));
        assert_eq!(
            sent(&mut queue),
            [(
                "textDocument/didClose".to_owned(),
                json!({"textDocument": {"uri": uri}})
            )]
        );
        let missing = table.hold(&link, life, &dir.path().join("gone.py"), "file:///gone.py");
        assert!(missing.unwrap_err().starts_with("cannot read "));
    }

    #[test]
    fn the_host_keeps_what_it_syncs_whoever_opened_it() {
        let dir = tempfile::tempdir().unwrap();
        let (path, uri) = file(&dir, "a.py", "x = 1\n");
        let (link, mut queue) = ServerLink::in_memory();
        let table = OpenDocuments::default();
        let life = table.life();
        table.hold(&link, life, &path, &uri).unwrap();
        // Changed on disk while asked about: the host's from now on.
        assert_eq!(
            table.sync_text(&link, &path, "x = 2\n".into(), true, 1),
            Some(1)
        );
        assert!(!table.release(&link, life, &path), "kept open");
        let asked = table.hold(&link, life, &path, &uri).unwrap();
        assert_eq!(
            (
                asked.text.to_string(),
                asked.version,
                asked.held,
                asked.opened
            ),
            ("x = 2\n".to_owned(), Some(1), false, false)
        );
        let methods: Vec<String> = sent(&mut queue).into_iter().map(|(m, _)| m).collect();
        assert_eq!(
            methods,
            [
                "textDocument/didOpen",
                "textDocument/didChange",
                "textDocument/didSave"
            ]
        );
        assert_eq!(
            table.sync_text(&link, &path, "x = 2\n".into(), true, 1),
            None
        );
        table.close(&link, &path);
        assert_eq!(sent(&mut queue)[0].0, "textDocument/didClose");
        assert_eq!(table.version(&path), None);
    }

    #[test]
    fn a_new_life_keeps_the_host_s_documents_only() {
        let dir = tempfile::tempdir().unwrap();
        let (asked, asked_uri) = file(&dir, "a.py", "x = 1\n");
        let (synced, _) = file(&dir, "b.py", "y = 1\n");
        let (link, mut queue) = ServerLink::in_memory();
        let table = OpenDocuments::default();
        let old = table.life();
        table.hold(&link, old, &asked, &asked_uri).unwrap();
        table.sync_text(&link, &synced, "y = 1\n".into(), false, 1);
        sent(&mut queue);
        assert_eq!(
            table.begin_life(),
            HashMap::from([(Arc::clone(&synced), 1)])
        );
        // The old life's question neither closes nor opens on the new one.
        assert!(!table.release(&link, old, &asked));
        assert_eq!(
            table.hold(&link, old, &asked, &asked_uri).err(),
            Some(restarted())
        );
        assert_eq!(sent(&mut queue), []);
        assert!(
            table
                .hold(&link, table.life(), &asked, &asked_uri)
                .unwrap()
                .opened
        );
    }

    #[test]
    fn language_ids_are_lsp_identifiers() {
        assert_eq!(language_id(Path::new("/a/b.rs")), "rust");
        assert_eq!(language_id(Path::new("/a/B.TSX")), "typescriptreact");
        assert_eq!(language_id(Path::new("/a/x.pyi")), "python");
        assert_eq!(language_id(Path::new("/a/Makefile")), "plaintext");
    }
}
