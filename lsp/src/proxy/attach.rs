//! A proxy's IDE is its workspace's host: once the editor's `initialize`
//! names the workspace, the proxy attaches to the host (starting one when
//! none serves), replays its state into it, and relays its stream; when
//! the host goes away it attaches again, to a new one.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ide_mcp_runtime::lockfile::default_config_dir;
use tokio::net::UnixStream;
use tokio::sync::watch;

use super::options::ProxyOptions;
use super::pump::Watch;
use super::relay;
use super::sink::Sink;
use super::tap::Tap;
use crate::host::{HostOptions, Launcher, Place, private_dir};
use crate::observer::Overlay;
use crate::workspace::{EditorInfo, EditorKind, LspWorkspace, editor_display_name, process_name};

/// How often a proxy tries the host's socket while none answers.
const RETRY: Duration = Duration::from_millis(20);

/// The least time between two hosts this proxy starts: a host that cannot
/// start is not started in a loop.
const LAUNCH_INTERVAL: Duration = Duration::from_secs(1);

/// What the attaching task works with.
pub(crate) struct Attacher {
    pub(crate) options: ProxyOptions,
    /// This proxy's own workspace: its stream, for its verdicts and replays.
    pub(crate) ws: Arc<LspWorkspace>,
    pub(crate) tap: Arc<Tap>,
    /// The pumps' watch (over `tap`), settled before reviews are shown.
    pub(crate) watch: Arc<dyn Watch>,
    /// Where the IDE's messages for the editor go.
    pub(crate) editor: Sink,
    /// Where the IDE's messages for the server go (the server's stdin).
    pub(crate) server: Sink,
    /// Becomes `true` when the proxy ends.
    pub(crate) stop: watch::Receiver<bool>,
}

/// Waits for the editor's `initialize`, then stays attached to the
/// workspace's host until the proxy ends.
pub(crate) async fn attach(this: Attacher) {
    let mut stop = this.stop.clone();
    let Some(launcher) = this.options.launcher.clone() else {
        return;
    };
    let editor = tokio::select! {
        editor = this.ws.editor_known() => editor,
        _ = stop.wait_for(|&stop| stop) => return,
    };
    let host = match host_options(&this, &editor) {
        Ok(host) => host,
        Err(error) => {
            tracing::error!(%error, "serving no IDE");
            return;
        }
    };
    let place = match private_dir().and_then(|dir| Place::new(&dir, &host.key())) {
        Ok(place) => place,
        Err(error) => {
            tracing::error!(%error, "cannot reach the IDE host; serving no IDE");
            return;
        }
    };
    let to_server = relay::ToServer {
        sink: this.server.clone(),
        interest: this.tap.interest(),
    };
    let nudge = editor_name(&editor).is_some_and(|name| EditorKind::of(&name).needs_nudges());
    let mut last_launch = None;
    loop {
        let stream = tokio::select! {
            stream = reach(&place, &host, &launcher, &mut last_launch) => stream,
            _ = stop.wait_for(|&stop| stop) => return,
        };
        tracing::info!(socket = ?place.socket_path(), "attached to the IDE host");
        let copies = this.tap.upstream().connect(|| this.tap.replay());
        let (tap, watch) = (Arc::clone(&this.tap), Arc::clone(&this.watch));
        let reviews = move |overlay| tap.review(overlay, &*watch);
        tokio::select! {
            result = relay::run(stream, copies, this.editor.clone(), nudge, to_server.clone(), reviews) => match result {
                Ok(()) => tracing::info!("the IDE host went away"),
                Err(error) => tracing::info!(%error, "the link to the IDE host failed"),
            },
            _ = stop.wait_for(|&stop| stop) => return,
        }
        this.tap.upstream().disconnect();
        // The host is gone: so are its reviews.
        this.tap.review(Overlay::default(), &*this.watch);
    }
}

/// The editor's name: its `clientInfo.name`, else its process's name (eglot
/// sends no `clientInfo`), else that of the proxy's parent.
fn editor_name(editor: &EditorInfo) -> Option<String> {
    editor
        .name
        .clone()
        .or_else(|| editor.pid.and_then(process_name))
        .or_else(|| process_name(std::os::unix::process::parent_id()))
}

/// The options of the host this proxy attaches to (and starts if need be).
fn host_options(this: &Attacher, editor: &EditorInfo) -> Result<HostOptions, &'static str> {
    let config_dir = this
        .options
        .config_dir
        .clone()
        .or_else(default_config_dir)
        .ok_or("no home directory and no CLAUDE_CONFIG_DIR")?;
    let mut folders = this.ws.workspace_folders();
    if folders.is_empty() {
        // An editor that names no folder (Helix outside a project): the
        // directory it started the proxy in.
        folders = std::env::current_dir()
            .map(|dir| vec![dir])
            .unwrap_or_default();
    }
    let folders: Vec<PathBuf> = folders.into_iter().filter(|f| f.is_absolute()).collect();
    if folders.is_empty() {
        return Err("the editor names no workspace folder");
    }
    let ide_name = this.options.ide_name.clone().unwrap_or_else(|| {
        editor_name(editor).map_or_else(|| "ide-mcp".to_owned(), |name| editor_display_name(&name))
    });
    Ok(HostOptions {
        folders,
        ide_name,
        config_dir,
        linger: this.options.linger,
        log: this.options.host_log.clone(),
        reload: this.options.reload,
        after_review: this.options.after_review,
        gemini: this.options.gemini,
        copilot: this.options.copilot,
    })
}

/// Connects to the host's socket, starting a host when none answers (at
/// most once a [`LAUNCH_INTERVAL`]).
async fn reach(
    place: &Place,
    host: &HostOptions,
    launcher: &Launcher,
    last_launch: &mut Option<Instant>,
) -> UnixStream {
    loop {
        if let Ok(stream) = UnixStream::connect(place.socket_path()).await {
            return stream;
        }
        if last_launch.is_none_or(|at| at.elapsed() >= LAUNCH_INTERVAL) {
            *last_launch = Some(Instant::now());
            match launcher.launch(host) {
                Ok(pid) => tracing::info!(pid, folders = ?host.folders, "started the IDE host"),
                Err(error) => tracing::warn!(%error, "cannot start the IDE host"),
            }
        }
        tokio::time::sleep(RETRY).await;
    }
}
