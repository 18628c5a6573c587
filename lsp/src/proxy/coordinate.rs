//! One IDE per editor: once the editor's `initialize` names it, the proxy
//! runs the election; the leader serves the IDE WebSocket and lockfile over
//! the union of every stream, a follower relays its stream to the leader and
//! runs the election again when the leader goes away.

use std::sync::Arc;

use ide_mcp_runtime::lockfile::default_config_dir;
use ide_mcp_runtime::{Server, WsOptions};
use tokio::sync::{oneshot, watch};

use super::editor::EditorInfo;
use super::host::Host;
use super::process::ProxyOptions;
use super::relay;
use super::rendezvous::{Leadership, Rendezvous, Role};
use super::sink::Sink;
use super::tap::Tap;

/// What the coordination task works with.
pub(crate) struct Coordinator {
    pub(crate) options: ProxyOptions,
    pub(crate) host: Host,
    pub(crate) tap: Arc<Tap>,
    /// The editor's stdout, for requests the IDE sends it.
    #[allow(dead_code)]
    pub(crate) editor: Sink,
    /// Becomes `true` when the proxy ends.
    pub(crate) stop: watch::Receiver<bool>,
}

/// Waits for the editor, then leads or follows until the proxy ends.
pub(crate) async fn coordinate(mut this: Coordinator, editor: oneshot::Receiver<EditorInfo>) {
    let mut stop = this.stop.clone();
    let editor = tokio::select! {
        editor = editor => editor,
        _ = stop.wait_for(|&stop| stop) => return,
    };
    let Ok(mut editor) = editor else { return };
    if !this.options.workspaces.is_empty() {
        editor.folders.clone_from(&this.options.workspaces);
    }
    let Some(config_dir) = this.options.config_dir.clone().or_else(default_config_dir) else {
        tracing::warn!("no home directory and no CLAUDE_CONFIG_DIR: serving no IDE");
        return;
    };
    let meet = Rendezvous::new(&config_dir.join("ide"), &editor);
    loop {
        let role = tokio::select! {
            role = meet.elect() => role,
            _ = stop.wait_for(|&stop| stop) => return,
        };
        match role {
            Err(error) => {
                tracing::error!(%error, "cannot meet the editor's other proxies; serving no IDE");
                return;
            }
            Ok(Role::Leader(leadership)) => {
                tracing::info!(editor = editor.pid, "serving the editor's IDE");
                if let Err(error) = lead(&mut this, &editor, leadership).await {
                    tracing::error!(%error, "cannot serve the IDE");
                }
                return;
            }
            Ok(Role::Follower(stream)) => {
                tracing::info!(
                    editor = editor.pid,
                    "another proxy serves the editor's IDE; relaying to it"
                );
                let copies = this.tap.upstream().connect(|| this.host.replay());
                tokio::select! {
                    result = relay::forward(stream, copies) => if let Err(error) = result {
                        tracing::info!(%error, "the link to the serving proxy failed");
                    },
                    _ = stop.wait_for(|&stop| stop) => return,
                }
                this.tap.upstream().disconnect();
            }
        }
    }
}

/// Serves the IDE until the proxy ends: the WebSocket and lockfile, and the
/// followers' streams.
async fn lead(
    this: &mut Coordinator,
    editor: &EditorInfo,
    leadership: Leadership,
) -> std::io::Result<()> {
    let server = Server::builder("ide-mcp lsp-proxy", env!("CARGO_PKG_VERSION"))
        .state(this.host.context().clone())
        .build()
        .map_err(std::io::Error::other)?;
    let options = WsOptions {
        workspace_folders: editor
            .folders
            .iter()
            .map(|folder| folder.to_string_lossy().into_owned())
            .collect(),
        ide_name: this
            .options
            .ide_name
            .clone()
            .or_else(|| editor.name.clone())
            .unwrap_or_else(|| "ide-mcp".to_owned()),
        config_dir: this.options.config_dir.clone(),
        ..WsOptions::default()
    };
    let handle = server.serve_ws(options).await?;
    tracing::info!(
        port = handle.port(),
        lockfile = ?handle.lockfile_path(),
        "serving the IDE WebSocket"
    );
    let mut followers = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = leadership.listener().accept() => match accepted {
                Ok((stream, _)) => {
                    let mut feed = this.host.follower();
                    followers.spawn(async move {
                        if let Err(error) = relay::receive(stream, |direction, body| feed.feed(direction, body)).await {
                            tracing::info!(%error, "a follower's stream ended badly");
                        }
                    });
                }
                Err(error) => tracing::warn!(%error, "cannot accept a follower"),
            },
            Some(_) = followers.join_next(), if !followers.is_empty() => {}
            _ = this.stop.wait_for(|&stop| stop) => break,
        }
    }
    handle.shutdown().await;
    drop(leadership);
    Ok(())
}
