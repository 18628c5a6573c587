//! The host's life: hold its place, serve the IDE, take proxies in, linger
//! once they have all gone.

use std::future::Future;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ide_mcp_runtime::WsOptions;
use ide_mcp_tools::copilot::{CopilotFace, CopilotOptions};
use ide_mcp_tools::deny::{DenyRules, SettingsRoots};
use ide_mcp_tools::gemini::{GeminiFace, GeminiOptions};
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::feed::feed;
use super::options::HostOptions;
use super::place::{Held, HostKey, Place};
use super::review::Reviews;
use super::serve::{push_events, server};
use crate::workspace::LspWorkspace;

/// How long the IDE's clients get to see their connection closed when the
/// host ends; the lockfile is removed either way.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// How long a host waits for its first proxy, however short its linger: the
/// proxy that started it attaches within milliseconds, unless it died.
const FIRST_ATTACH: Duration = Duration::from_secs(10);

/// Why [`serve`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Another host holds the place: nothing was served.
    AnotherServes,
    /// No proxy was attached for the linger time.
    Lingered,
    /// `stop` resolved (SIGTERM, SIGINT).
    Stopped,
}

/// Serves the host of `options` from its place in `dir` (a private
/// directory) until it has lingered with no proxy attached or `stop`
/// resolves; at the end the lockfile and the host's files are removed.
pub async fn serve(
    options: &HostOptions,
    dir: &Path,
    stop: impl Future<Output = ()>,
) -> io::Result<Ending> {
    let key = options.key();
    let Some(held) = Place::new(dir, &key)?.try_hold()? else {
        tracing::info!("another host serves this workspace");
        return Ok(Ending::AnotherServes);
    };
    let ws = Arc::new(LspWorkspace::new());
    ws.override_folders(key.folders().to_vec());
    // The user's deny rules, as the agents' CLI reads them for these
    // folders and this configuration directory.
    ws.set_deny_rules(DenyRules::watch(
        SettingsRoots::from_env().with_config_dir(key.config_dir()),
        key.folders().to_vec(),
    ));
    let reviews = Reviews::new(Arc::clone(&ws));
    reviews.set_marking(options.after_review);
    let reviewing = reviews.spawn();
    let server = server(&ws, &reviews).map_err(io::Error::other)?;
    let gemini = gemini(options, &ws, &reviews).await;
    let copilot = copilot(options, &ws, &reviews, dir).await;
    let pushing = push_events(
        &server,
        &ws,
        gemini.as_ref().map(GeminiFace::trigger),
        copilot.as_ref().map(CopilotFace::trigger),
    );
    let reloading = (options.reload || options.after_review)
        .then(|| super::reload::spawn(Arc::clone(&ws), reviews.clone(), options.reload));
    let handle = server.serve_ws(ws_options(options, &key)).await?;
    tracing::info!(
        port = handle.port(),
        lockfile = ?handle.lockfile_path(),
        folders = ?key.folders(),
        "serving the IDE"
    );
    let mut proxies = JoinSet::new();
    let ending = take_proxies(&held, &ws, &reviews, &mut proxies, options.linger, stop).await;
    tracing::info!(?ending, "the host ends");
    // Dropped on time-out: the lockfile goes with the handle.
    let _ = tokio::time::timeout(CLOSE_GRACE, handle.shutdown()).await;
    if let Some(gemini) = gemini {
        // Dropped on time-out: the discovery file goes with it.
        let _ = tokio::time::timeout(CLOSE_GRACE, gemini.shutdown()).await;
    }
    if let Some(copilot) = copilot {
        // Dropped on time-out: the lockfile and the socket go with it.
        let _ = tokio::time::timeout(CLOSE_GRACE, copilot.shutdown()).await;
    }
    pushing.abort();
    reviewing.abort();
    if let Some(reloading) = reloading {
        reloading.abort();
    }
    proxies.shutdown().await;
    reviews.editors_changed(false);
    drop(held);
    Ok(ending)
}

/// Gemini CLI's IDE companion over the same state, unless turned off; a
/// face that cannot start is logged and left out (Claude's still serves).
async fn gemini(
    options: &HostOptions,
    ws: &Arc<LspWorkspace>,
    reviews: &Reviews,
) -> Option<GeminiFace> {
    if !options.gemini {
        return None;
    }
    let cx = ws.editor_ports().review(Arc::new(reviews.clone())).build();
    let gemini = GeminiOptions {
        folders: options.key().folders().to_vec(),
        display_name: options.ide_name.clone(),
        ..GeminiOptions::default()
    };
    GeminiFace::start(cx, gemini)
        .await
        .inspect_err(|error| tracing::warn!(%error, "cannot serve Gemini CLI's IDE companion"))
        .ok()
}

/// The Copilot CLI's IDE connection over the same state, unless turned
/// off, its socket in `private` (the host's 0700 directory); a face that
/// cannot start is logged and left out.
async fn copilot(
    options: &HostOptions,
    ws: &Arc<LspWorkspace>,
    reviews: &Reviews,
    private: &Path,
) -> Option<CopilotFace> {
    if !options.copilot {
        return None;
    }
    let Some(dir) = ide_mcp_tools::copilot::lockfile::default_dir() else {
        tracing::warn!("no home directory: the Copilot CLI's IDE connection is not served");
        return None;
    };
    let cx = ws.editor_ports().review(Arc::new(reviews.clone())).build();
    let copilot = CopilotOptions {
        folders: options.key().folders().to_vec(),
        ide_name: options.ide_name.clone(),
        socket_dir: Some(private.to_path_buf()),
        // One name per host key (the place is held by one host at a time),
        // so that a host's replacement removes the socket of a killed one.
        socket_name: Some(format!("{}.copilot.sock", options.key().stem())),
        ..CopilotOptions::new(dir)
    };
    CopilotFace::start(cx, copilot)
        .await
        .inspect_err(
            |error| tracing::warn!(%error, "cannot serve the Copilot CLI's IDE connection"),
        )
        .ok()
}

/// The IDE's WebSocket: the key's folders and config dir, the IDE's name.
fn ws_options(options: &HostOptions, key: &HostKey) -> WsOptions {
    WsOptions {
        workspace_folders: key
            .folders()
            .iter()
            .map(|folder| folder.to_string_lossy().into_owned())
            .collect(),
        ide_name: options.ide_name.clone(),
        config_dir: Some(key.config_dir().to_path_buf()),
        ..WsOptions::default()
    }
}

/// Takes proxies in on `held`'s socket, each fed into `ws` in `proxies`,
/// until no proxy has been attached for `linger` (at first, for at least
/// [`FIRST_ATTACH`]) or `stop` resolves.
async fn take_proxies(
    held: &Held,
    ws: &Arc<LspWorkspace>,
    reviews: &Reviews,
    proxies: &mut JoinSet<()>,
    linger: Duration,
    stop: impl Future<Output = ()>,
) -> Ending {
    let wait = tokio::time::sleep(linger.max(FIRST_ATTACH));
    tokio::pin!(wait, stop);
    let mut lingering = true;
    loop {
        tokio::select! {
            accepted = held.listener().accept() => match accepted {
                Ok((stream, _)) => {
                    let (ws, overlay) = (ws.clone(), reviews.overlay());
                    proxies.spawn(async move {
                        if let Err(error) = feed(ws, stream, overlay).await {
                            tracing::info!(%error, "a proxy's link ended badly");
                        }
                    });
                    lingering = false;
                    tracing::info!(attached = proxies.len(), "a proxy attached");
                }
                Err(error) => tracing::warn!(%error, "cannot accept a proxy"),
            },
            Some(_) = proxies.join_next(), if !proxies.is_empty() => {
                tracing::info!(attached = proxies.len(), "a proxy detached");
                reviews.editors_changed(!proxies.is_empty());
                if proxies.is_empty() {
                    wait.as_mut().reset(Instant::now() + linger);
                    lingering = true;
                    tracing::info!(linger_s = linger.as_secs_f64(), "no editor left; lingering");
                }
            }
            () = &mut wait, if lingering => return Ending::Lingered,
            () = &mut stop => return Ending::Stopped,
        }
    }
}
