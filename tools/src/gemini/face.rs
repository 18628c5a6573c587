//! The face itself: its server (this face's tools over the host's
//! [`EditorPorts`], its own notifier), its listener, its discovery file,
//! and the task that sends `ide/contextUpdate`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ide_mcp_runtime::{HttpOptions, HttpServerHandle, Notifier, Registry, Server};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::context::{Stamps, context_update};
use super::diff::GeminiDiffs;
use super::discovery::{DiscoveryContent, DiscoveryFile, IdeInfo};
use super::filter::{FACE, PathFilter};
use crate::context::EditorPorts;
use crate::current_selection::SelectionState;
use crate::selection::SELECTION_DEBOUNCE;

/// The notification that carries the editor's state.
pub const CONTEXT_UPDATE: &str = "ide/contextUpdate";

/// How the face serves.
#[derive(Clone, Debug)]
pub struct GeminiOptions {
    /// The workspace folders (the CLI uses the IDE when its working
    /// directory is inside one).
    pub folders: Vec<PathBuf>,
    /// What `/ide status` calls the IDE (the editor's name).
    pub display_name: String,
    /// Where the discovery file goes: [`default_dir`](super::discovery::default_dir).
    pub dir: PathBuf,
    /// The files it may show (the deny rules' hook).
    pub shown: PathFilter,
    /// How context updates are debounced.
    pub debounce: Duration,
}

impl Default for GeminiOptions {
    fn default() -> Self {
        Self {
            folders: Vec::new(),
            display_name: "ide-mcp".to_owned(),
            dir: super::discovery::default_dir(),
            shown: PathFilter::all(),
            debounce: SELECTION_DEBOUNCE,
        }
    }
}

/// A serving face; [`shutdown`](Self::shutdown) (or dropping it) stops
/// serving and removes the discovery file.
#[derive(Debug)]
pub struct GeminiFace {
    server: Server,
    handle: HttpServerHandle,
    file: DiscoveryFile,
    changed: ContextTrigger,
    task: JoinHandle<()>,
}

/// Tells the face the editor's open files, active file or selection
/// changed: cheap, never blocks; cloned into the host's event loop.
#[derive(Clone, Debug)]
pub struct ContextTrigger(mpsc::Sender<()>);

impl ContextTrigger {
    /// Reports a change (debounced: the last state is sent once it pauses).
    pub fn changed(&self) {
        // Full: a change is pending already, which covers this one.
        let _ = self.0.try_send(());
    }
}

impl GeminiFace {
    /// Serves `cx` to `gemini`: Streamable HTTP on 127.0.0.1 (an ephemeral
    /// port, a fresh token, every `Origin` refused), the discovery file,
    /// and a first context update. `openDiff` and `closeDiff` are listed
    /// only when `cx` has a [`DiffReview`](crate::ports::DiffReview) (a
    /// person to ask). Must be called within a Tokio runtime.
    pub async fn start(cx: EditorPorts, mut options: GeminiOptions) -> io::Result<Self> {
        // What the user's deny rules hide is never shown either.
        let (shown, rules) = (options.shown.clone(), cx.clone());
        options.shown = PathFilter(Arc::new(move |path: &Path| {
            shown(path) && !rules.hides(path)
        }));
        let notifier = Notifier::new();
        let server = server(&cx, &notifier, &options).map_err(io::Error::other)?;
        let handle = server.serve_http(HttpOptions::default()).await?;
        let content = DiscoveryContent {
            port: handle.port(),
            workspace_path: join_folders(&options.folders),
            auth_token: handle.auth_token().to_owned(),
            ide_info: IdeInfo {
                name: "ide-mcp".to_owned(),
                display_name: options.display_name.clone(),
            },
        };
        let file = DiscoveryFile::create(&options.dir, &content)?;
        tracing::info!(port = handle.port(), file = %file.path().display(), "serving Gemini CLI's IDE companion");
        let (tx, rx) = mpsc::channel(1);
        let task = tokio::spawn(publish(rx, notifier, cx, options));
        Ok(Self {
            server,
            handle,
            file,
            changed: ContextTrigger(tx),
            task,
        })
    }

    /// What reports the editor's changes to this face.
    pub fn trigger(&self) -> ContextTrigger {
        self.changed.clone()
    }

    /// The port served.
    pub fn port(&self) -> u16 {
        self.handle.port()
    }

    /// The bearer token.
    pub fn auth_token(&self) -> &str {
        self.handle.auth_token()
    }

    /// The discovery file's path.
    pub fn discovery_path(&self) -> &Path {
        self.file.path()
    }

    /// The face's server (its tools, its notifier).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Stops serving (the event streams end), then removes the discovery file.
    pub async fn shutdown(self) {
        self.task.abort();
        self.handle.shutdown().await;
        drop(self.file);
    }
}

/// The face's server: its tools (when there is a person to review edits),
/// the host's state, a notifier of its own.
fn server(
    cx: &EditorPorts,
    notifier: &Notifier,
    options: &GeminiOptions,
) -> Result<Server, Box<dyn std::error::Error + Send + Sync>> {
    let registry = if cx.review().is_some() {
        Registry::face(FACE)?
    } else {
        Registry::from_tools([])?
    };
    let diffs = Arc::new(GeminiDiffs::new(notifier.clone(), options.shown.clone()));
    Ok(Server::builder("ide-mcp", env!("CARGO_PKG_VERSION"))
        .registry(Arc::new(registry))
        .notifier(notifier.clone())
        .state(cx.clone())
        .state(diffs)
        .build()?)
}

/// The folders as `workspacePath`: joined by `:` (Node's `path.delimiter`).
fn join_folders(folders: &[PathBuf]) -> String {
    folders
        .iter()
        .map(|folder| folder.to_string_lossy())
        .collect::<Vec<_>>()
        .join(":")
}

/// Sends a context update now, then after every change once the changes
/// pause for `options.debounce`, when it differs from the last one sent.
/// Each is kept as the notifier's latest state: a new event stream gets it
/// first.
async fn publish(
    mut changes: mpsc::Receiver<()>,
    notifier: Notifier,
    cx: EditorPorts,
    options: GeminiOptions,
) {
    let mut stamps = Stamps::default();
    let mut last = None;
    send(&notifier, &cx, &options, &mut stamps, &mut last);
    while changes.recv().await.is_some() {
        // Until the changes pause (or the face is dropped).
        while let Ok(Some(())) = tokio::time::timeout(options.debounce, changes.recv()).await {}
        send(&notifier, &cx, &options, &mut stamps, &mut last);
    }
}

fn send(
    notifier: &Notifier,
    cx: &EditorPorts,
    options: &GeminiOptions,
    stamps: &mut Stamps,
    last: &mut Option<Vec<u8>>,
) {
    let buffers = cx
        .editor()
        .map(crate::ports::EditorAccess::open_buffers)
        .unwrap_or_default();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let times = stamps.update(&buffers, now);
    let state = SelectionState::read(cx);
    let selection = state.selection.as_ref().zip(state.document.as_deref());
    let update = context_update(&buffers, &times, selection, &*options.shown);
    let Ok(bytes) = serde_json::to_vec(&update) else {
        return;
    };
    if last.as_ref() != Some(&bytes) {
        notifier.notify_latest(CONTEXT_UPDATE, &update);
        *last = Some(bytes);
    }
}
