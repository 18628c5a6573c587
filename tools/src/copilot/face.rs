//! The face itself: its server (this face's tools over the host's
//! [`EditorPorts`], its own notifier), its listener on a Unix socket in a
//! private directory, its lockfile, and the publisher of
//! `selection_changed`.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ide_mcp_runtime::transport::gate::Credential;
use ide_mcp_runtime::{HttpOptions, HttpServerHandle, Notifier, Registry, Server};

use super::lockfile::{LockContent, LockFile};
use crate::context::EditorPorts;
use crate::selection::{SELECTION_DEBOUNCE, SelectionPublisher};

/// The face's name: its tools are `#[mcp_tool(face = "copilot")]`.
pub const FACE: &str = "copilot";

/// How the face serves.
#[derive(Clone, Debug)]
pub struct CopilotOptions {
    /// The workspace folders (the CLI auto-connects when its working
    /// directory is one of them exactly).
    pub folders: Vec<PathBuf>,
    /// What the CLI calls the IDE.
    pub ide_name: String,
    /// Where the lockfile goes: [`default_dir`](super::lockfile::default_dir).
    pub dir: PathBuf,
    /// A private (0700) directory of ours for the socket; `None` makes a
    /// fresh one in the system's temporary directory, removed at the end.
    pub socket_dir: Option<PathBuf>,
    /// The socket's file name in `socket_dir`, one the caller alone may use
    /// (a stale file of that name, left by a killed process, is replaced);
    /// `None` makes a name unique to this face.
    pub socket_name: Option<String>,
    /// How `selection_changed` is debounced.
    pub debounce: Duration,
}

impl CopilotOptions {
    /// The defaults for the lockfile directory `dir`.
    pub fn new(dir: PathBuf) -> Self {
        Self {
            folders: Vec::new(),
            ide_name: "ide-mcp".to_owned(),
            dir,
            socket_dir: None,
            socket_name: None,
            debounce: SELECTION_DEBOUNCE,
        }
    }
}

/// A serving face; [`shutdown`](Self::shutdown) (or dropping it) stops
/// serving and removes the lockfile and the socket.
#[derive(Debug)]
pub struct CopilotFace {
    server: Server,
    // Dropped in this order: the lockfile first, then the listener (and its
    // socket), then the socket's directory when it is ours.
    file: LockFile,
    handle: HttpServerHandle,
    own_dir: Option<OwnDir>,
    publisher: Arc<SelectionPublisher>,
}

impl CopilotFace {
    /// Serves `cx` to `copilot`: Streamable HTTP on a Unix socket (a fresh
    /// nonce), then the lockfile. Must be called within a Tokio runtime.
    pub async fn start(cx: EditorPorts, options: CopilotOptions) -> io::Result<Self> {
        let own_dir = if options.socket_dir.is_some() {
            None
        } else {
            Some(OwnDir::create()?)
        };
        let socket_dir = options
            .socket_dir
            .clone()
            .or_else(|| own_dir.as_ref().map(|dir| dir.0.clone()))
            .expect("one or the other");
        let notifier = Notifier::new();
        let server = server(&cx, &notifier).map_err(io::Error::other)?;
        let nonce = ide_mcp_runtime::discovery::fresh_token()?;
        // One name per face: the host's private directory is shared by
        // every host of this user, and so is the lockfile directory.
        let unique = format!("ide-mcp-{}-{}", std::process::id(), &nonce[..8]);
        let socket = match &options.socket_name {
            Some(name) => {
                let socket = socket_dir.join(name);
                match std::fs::remove_file(&socket) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                    _ => socket,
                }
            }
            None => socket_dir.join(format!("copilot-{unique}.sock")),
        };
        let http = HttpOptions {
            auth_token: Some(nonce.clone()),
            credential: Credential::NONCE,
            // The CLI probes `server/discover` first; refused, it opens a
            // session and its event stream, where the selection comes.
            sessions_only: true,
            ..HttpOptions::default()
        };
        let handle = server.serve_http_unix(&socket, http).await?;
        let content = LockContent {
            socket_path: socket.to_string_lossy().into_owned(),
            scheme: "unix",
            headers: BTreeMap::from([("Authorization", format!("Nonce {nonce}"))]),
            pid: std::process::id(),
            timestamp: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            ide_name: options.ide_name.clone(),
            workspace_folders: options
                .folders
                .iter()
                .map(|folder| folder.to_string_lossy().into_owned())
                .collect(),
        };
        let file = LockFile::create(&options.dir, &unique, &content)?;
        tracing::info!(socket = %socket.display(), file = %file.path().display(), "serving Copilot CLI's IDE connection");
        let publisher = Arc::new(SelectionPublisher::spawn_with_debounce(
            notifier,
            cx,
            options.debounce,
        ));
        publisher.selection_changed();
        Ok(Self {
            server,
            file,
            handle,
            own_dir,
            publisher,
        })
    }

    /// Reports that the selection or the active buffer changed (debounced).
    pub fn selection_changed(&self) {
        self.publisher.selection_changed();
    }

    /// What the host's event loop tells of each change of the selection.
    pub fn trigger(&self) -> Arc<SelectionPublisher> {
        Arc::clone(&self.publisher)
    }

    /// The lockfile's path.
    pub fn lockfile_path(&self) -> &Path {
        self.file.path()
    }

    /// The socket served.
    pub fn socket_path(&self) -> &Path {
        self.handle.socket_path().expect("served on a Unix socket")
    }

    /// The face's server (its tools, its notifier).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Removes the lockfile, stops serving (the event streams end, the
    /// socket is removed), then removes the socket's own directory.
    pub async fn shutdown(self) {
        drop(self.file);
        self.handle.shutdown().await;
        drop(self.own_dir);
    }
}

/// The face's server: its four tools, the host's state, a notifier of its own.
fn server(
    cx: &EditorPorts,
    notifier: &Notifier,
) -> Result<Server, Box<dyn std::error::Error + Send + Sync>> {
    Ok(Server::builder("ide-mcp", env!("CARGO_PKG_VERSION"))
        .registry(Arc::new(Registry::face(FACE)?))
        .notifier(notifier.clone())
        .state(cx.clone())
        .build()?)
}

/// A fresh 0700 directory of ours in the system's temporary directory,
/// removed (with what is left in it) when dropped.
#[derive(Debug)]
struct OwnDir(PathBuf);

impl OwnDir {
    fn create() -> io::Result<Self> {
        let random = ide_mcp_runtime::discovery::fresh_token()?;
        let dir = std::env::temp_dir().join(format!("ide-mcp-copilot-{}", &random[..16]));
        // Not recursive: it must be new, hence ours.
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(Self(dir))
    }
}

impl Drop for OwnDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
