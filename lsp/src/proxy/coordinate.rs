//! One IDE per editor: once the editor's `initialize` names it, the proxy
//! runs the election; the leader serves the IDE WebSocket and lockfile over
//! the union of every stream, a follower relays its stream to the leader and
//! runs the election again when the leader goes away.

use std::sync::Arc;

use ide_mcp_runtime::WsOptions;
use ide_mcp_runtime::lockfile::default_config_dir;
use tokio::sync::watch;

use super::host::{FollowerFeed, push_events, server};
use super::process::ProxyOptions;
use super::relay;
use super::rendezvous::{Leadership, Rendezvous, Role};
use super::tap::Tap;
use crate::workspace::{EditorInfo, LspWorkspace};

/// What the coordination task works with.
pub(crate) struct Coordinator {
    pub(crate) options: ProxyOptions,
    /// This proxy's workspace: its own stream, and its followers' when it leads.
    pub(crate) ws: Arc<LspWorkspace>,
    pub(crate) tap: Arc<Tap>,
    /// Becomes `true` when the proxy ends.
    pub(crate) stop: watch::Receiver<bool>,
}

/// Waits for the editor's `initialize`, then leads or follows until the
/// proxy ends.
pub(crate) async fn coordinate(mut this: Coordinator) {
    let mut stop = this.stop.clone();
    let editor = tokio::select! {
        editor = this.ws.editor_known() => editor,
        _ = stop.wait_for(|&stop| stop) => return,
    };
    // The editor started this proxy, or a wrapper of it did.
    let pid = editor
        .pid
        .filter(|&pid| pid > 0)
        .unwrap_or_else(std::os::unix::process::parent_id);
    let Some(config_dir) = this.options.config_dir.clone().or_else(default_config_dir) else {
        tracing::warn!("no home directory and no CLAUDE_CONFIG_DIR: serving no IDE");
        return;
    };
    let meet = Rendezvous::new(&config_dir.join("ide"), pid, &this.ws.workspace_folders());
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
                tracing::info!(editor = pid, "serving the editor's IDE");
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
                let copies = this.tap.upstream().connect(|| this.tap.replay());
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
    let server = server(&this.ws).map_err(std::io::Error::other)?;
    let pushing = push_events(&server, &this.ws);
    let options = WsOptions {
        workspace_folders: this
            .ws
            .workspace_folders()
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
                    let mut feed = FollowerFeed::new(&this.ws);
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
    pushing.abort();
    drop(leadership);
    Ok(())
}
