//! The life of one language server: started, initialized, kept told of
//! changes and probed, restarted with backoff when it fails or hangs, shut
//! down on request. Once initialized and told of the host's documents,
//! each life is reachable by the live tools' questions
//! ([`Access::up`](super::access::Access::up)) until it ends.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::JoinHandle;

use super::access::Access;
use super::connection::{Connection, Context};
use super::documents::{self, Documents};
use super::options::{
    FIRST_BACKOFF, INITIALIZE_TIMEOUT, LspServerOptions, MAX_BACKOFF, MAX_RESTARTS, Probe,
    ProgressCallback, SHUTDOWN_TIMEOUT, STABLE,
};
use super::state::Store;
use crate::live::ServerFacts;
use ide_mcp_tools::position::PositionEncoding;

/// What the handle asks of the server's supervisor.
pub(super) enum Command {
    Changed(Vec<Arc<Path>>),
    Shutdown(oneshot::Sender<()>),
}

/// Runs the server, restarting it when it fails, until shut down.
pub(super) async fn supervise(
    options: LspServerOptions,
    cx: Arc<Context>,
    access: Arc<Access>,
    mut queue: mpsc::UnboundedReceiver<Command>,
    start: Arc<Notify>,
    progress: Option<ProgressCallback>,
) {
    if started(&start, &mut queue).await {
        let reporter = progress.map(|callback| spawn_progress(&cx.store, callback));
        lives(&options, &cx, &access, &mut queue).await;
        if let Some(reporter) = reporter {
            reporter.abort();
        }
    }
    access.down(true);
}

/// Waits for the start of a lazy server (at once for the others); `false`
/// when it was shut down before it started, and so never runs.
async fn started(start: &Notify, queue: &mut mpsc::UnboundedReceiver<Command>) -> bool {
    loop {
        tokio::select! {
            () = start.notified() => return true,
            command = queue.recv() => match command {
                Some(Command::Shutdown(done)) => {
                    let _ = done.send(());
                    return false;
                }
                Some(Command::Changed(_)) => {}
                None => return false,
            },
        }
    }
}

/// The server's lives, one after the other with growing pauses between
/// failures, until it is shut down or given up.
async fn lives(
    options: &LspServerOptions,
    cx: &Arc<Context>,
    access: &Access,
    queue: &mut mpsc::UnboundedReceiver<Command>,
) {
    let name = &cx.kind.name;
    let open = options.open.iter().filter(|p| cx.kind.handles(p));
    let mut documents = Documents::new(open, Arc::clone(&access.documents));
    let mut failures = 0u32;
    loop {
        let began = Instant::now();
        if let Outcome::ShutDown(done) = life(options, cx, access, &mut documents, queue).await {
            let _ = done.send(());
            return;
        }
        failures = if began.elapsed() >= STABLE {
            1
        } else {
            failures + 1
        };
        let Some(pause) = backoff(failures) else {
            tracing::error!(server = %name, "the language server failed {MAX_RESTARTS} times in a row; giving up");
            return;
        };
        tracing::info!(server = %name, ?pause, "restarting the language server");
        if !pause_for(pause, cx, &mut documents, queue).await {
            return;
        }
    }
}

/// The pause before a restart after `failures` failures in a row; `None`
/// past [`MAX_RESTARTS`]: the server is given up.
fn backoff(failures: u32) -> Option<Duration> {
    (failures <= MAX_RESTARTS).then(|| {
        FIRST_BACKOFF
            .saturating_mul(1 << (failures.saturating_sub(1)).min(16))
            .min(MAX_BACKOFF)
    })
}

/// One life of the server: started, run until it fails or is shut down,
/// and ended (its diagnostics dropped, its questions failed).
async fn life(
    options: &LspServerOptions,
    cx: &Arc<Context>,
    access: &Access,
    documents: &mut Documents,
    queue: &mut mpsc::UnboundedReceiver<Command>,
) -> Outcome {
    cx.store.starting(true);
    let outcome = match Connection::spawn(&options.command, cx) {
        Ok(mut connection) => {
            let outcome = run(&mut connection, cx, access, options.probe, documents, queue).await;
            access.down(false);
            // Dropped before the process is reaped, which can take a
            // while: never served as fresh, nor waited for.
            cx.store.clear();
            end(&mut connection, &outcome, &cx.kind.name).await;
            outcome
        }
        Err(error) => {
            tracing::warn!(server = %cx.kind.name, command = ?options.command, %error, "cannot start the language server");
            Outcome::Died(error.to_string())
        }
    };
    cx.store.clear();
    outcome
}

/// Pauses before a restart, still taking commands: changes are replayed
/// on restart; `false` when the server is shut down meanwhile.
async fn pause_for(
    pause: Duration,
    cx: &Context,
    documents: &mut Documents,
    queue: &mut mpsc::UnboundedReceiver<Command>,
) -> bool {
    let sleep = tokio::time::sleep(pause);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            () = &mut sleep => return true,
            command = queue.recv() => match command {
                Some(Command::Changed(paths)) => {
                    for path in &paths {
                        cx.store.not_sent(path);
                    }
                    documents.noted(paths);
                }
                Some(Command::Shutdown(done)) => {
                    let _ = done.send(());
                    return false;
                }
                None => return false,
            },
        }
    }
}

/// Reaps a server that died, kills one that hung, and logs either with
/// the tail of its stderr.
async fn end(connection: &mut Connection, outcome: &Outcome, name: &str) {
    match outcome {
        Outcome::Died(why) => {
            let status = connection.reap(SHUTDOWN_TIMEOUT).await;
            tracing::warn!(
                server = %name,
                ?status,
                "language server failed ({why}); its diagnostics are dropped until it is back. \
                 Last stderr lines:\n{}",
                connection.stderr_tail()
            );
        }
        Outcome::Hung(why) => {
            let status = connection.kill(SHUTDOWN_TIMEOUT).await;
            tracing::warn!(
                server = %name,
                ?status,
                "language server stopped answering ({why}); killed, its diagnostics are dropped \
                 until it is back. Last stderr lines:\n{}",
                connection.stderr_tail()
            );
        }
        Outcome::ShutDown(_) => {}
    }
}

enum Outcome {
    ShutDown(oneshot::Sender<()>),
    Died(String),
    /// Declared hung by the liveness probe.
    Hung(String),
}

/// The server's `initialize` answer, as the live tools read it; the
/// failure when it has none.
async fn initialize(connection: &Connection, cx: &Context) -> Result<ServerFacts, Outcome> {
    let init = connection.request(
        "initialize",
        documents::initialize_params(&cx.folders),
        INITIALIZE_TIMEOUT,
    );
    let result = tokio::select! {
        result = init => result.map_err(|error| Outcome::Died(format!("`initialize`: {error}")))?,
        () = connection.closed() => {
            return Err(Outcome::Died("it exited during `initialize`".to_owned()));
        }
    };
    let capabilities = result.get("capabilities").cloned().unwrap_or_default();
    let name = result["serverInfo"]["name"]
        .as_str()
        .unwrap_or(&cx.kind.name)
        .to_owned();
    Ok(ServerFacts {
        name: Some(name),
        encoding: PositionEncoding::from_name(capabilities["positionEncoding"].as_str()),
        capabilities,
    })
}

/// One life of the server: initialize, open, follow changes, probed.
async fn run(
    connection: &mut Connection,
    cx: &Context,
    access: &Access,
    probe: Option<Probe>,
    documents: &mut Documents,
    queue: &mut mpsc::UnboundedReceiver<Command>,
) -> Outcome {
    let facts = match initialize(connection, cx).await {
        Ok(facts) => facts,
        Err(outcome) => return outcome,
    };
    connection.notify("initialized", &serde_json::json!({}));
    connection.notify(
        "workspace/didChangeConfiguration",
        &serde_json::json!({"settings": cx.kind.settings}),
    );
    if let Some(probe) = probe {
        connection.start_probe(probe, &cx.kind.name);
    }
    documents.set_capabilities(&facts.capabilities);
    if cx.kind.whole_workspace {
        cx.store.first_analysis();
    }
    // A hung server fails the requests of these steps (pulls) at once, so
    // they end soon and the loop below sees it.
    documents.reopen_all(connection, &cx.store).await;
    access.up(connection.link(), facts);
    documents.pull_all(connection, &cx.store).await;
    cx.store.starting(false);
    let done = loop {
        tokio::select! {
            why = connection.hung() => return Outcome::Hung(why),
            () = connection.closed() => return Outcome::Died("it exited".to_owned()),
            command = queue.recv() => match command {
                Some(Command::Changed(paths)) => documents.sync(connection, &cx.store, paths).await,
                Some(Command::Shutdown(done)) => break done,
                None => break oneshot::channel().0,
            },
        }
    };
    connection.shut_down(SHUTDOWN_TIMEOUT).await;
    Outcome::ShutDown(done)
}

/// Forwards the store's progress line to `callback` as it changes.
fn spawn_progress(store: &Arc<Store>, callback: ProgressCallback) -> JoinHandle<()> {
    let store = Arc::clone(store);
    let mut state = store.subscribe();
    tokio::spawn(async move {
        let mut last = None;
        while state.changed().await.is_ok() {
            let line = store.progress_line();
            if line != last {
                callback(line.clone());
                last = line;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarts_pause_longer_after_each_failure_until_given_up() {
        assert_eq!(backoff(1), Some(FIRST_BACKOFF));
        assert_eq!(backoff(2), Some(FIRST_BACKOFF * 2));
        assert_eq!(backoff(3), Some(FIRST_BACKOFF * 4));
        assert_eq!(backoff(MAX_RESTARTS), Some(MAX_BACKOFF));
        assert_eq!(backoff(MAX_RESTARTS + 1), None);
    }
}
