//! The life of one language server: started, initialized, kept told of
//! changes and probed, restarted with backoff when it fails or hangs, shut
//! down on request.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::JoinHandle;

use super::connection::{Connection, Context};
use super::documents::{self, Documents};
use super::state::Store;
use super::{
    Command, FIRST_BACKOFF, INITIALIZE_TIMEOUT, LspServerOptions, MAX_BACKOFF, MAX_RESTARTS, Probe,
    ProgressCallback, SHUTDOWN_TIMEOUT, STABLE,
};

/// Runs the server, restarting it when it fails, until shut down.
pub(super) async fn supervise(
    options: LspServerOptions,
    cx: Arc<Context>,
    mut queue: mpsc::UnboundedReceiver<Command>,
    start: Arc<Notify>,
    progress: Option<ProgressCallback>,
) {
    // A lazy server starts when first asked; shut down before that, it
    // never runs.
    loop {
        tokio::select! {
            () = start.notified() => break,
            command = queue.recv() => match command {
                Some(Command::Shutdown(done)) => {
                    let _ = done.send(());
                    return;
                }
                Some(Command::Changed(_)) => {}
                None => return,
            },
        }
    }
    let name = cx.kind.name.clone();
    let mut documents = Documents::new(options.open.iter().filter(|p| cx.kind.handles(p)));
    let mut failures = 0u32;
    let mut reporter = progress.map(|callback| spawn_progress(&cx.store, callback));
    loop {
        cx.store.starting(true);
        let began = Instant::now();
        let outcome = match Connection::spawn(&options.command, &cx) {
            Ok(mut connection) => {
                let outcome = run(
                    &mut connection,
                    &cx,
                    options.probe,
                    &mut documents,
                    &mut queue,
                )
                .await;
                // Dropped before the process is reaped, which can take a
                // while: never served as fresh, nor waited for.
                cx.store.clear();
                end(&mut connection, &outcome, &name).await;
                outcome
            }
            Err(error) => {
                tracing::warn!(server = %name, command = ?options.command, %error, "cannot start the language server");
                Outcome::Died(error.to_string())
            }
        };
        cx.store.clear();
        if let Outcome::ShutDown(done) = outcome {
            let _ = done.send(());
            break;
        }
        failures = if began.elapsed() >= STABLE {
            1
        } else {
            failures + 1
        };
        if failures > MAX_RESTARTS {
            tracing::error!(server = %name, "the language server failed {MAX_RESTARTS} times in a row; giving up");
            break;
        }
        let pause = FIRST_BACKOFF
            .saturating_mul(1 << (failures - 1).min(16))
            .min(MAX_BACKOFF);
        tracing::info!(server = %name, ?pause, "restarting the language server");
        // Keep taking commands while pausing: changes are replayed on
        // restart, a shutdown ends it all.
        let sleep = tokio::time::sleep(pause);
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                () = &mut sleep => break,
                command = queue.recv() => match command {
                    Some(Command::Changed(paths)) => {
                        for path in &paths {
                            cx.store.not_sent(path);
                        }
                        documents.noted(paths);
                    }
                    Some(Command::Shutdown(done)) => {
                        let _ = done.send(());
                        return;
                    }
                    None => return,
                },
            }
        }
    }
    if let Some(reporter) = reporter.take() {
        reporter.abort();
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

/// One life of the server: initialize, open, follow changes, probed.
async fn run(
    connection: &mut Connection,
    cx: &Context,
    probe: Option<Probe>,
    documents: &mut Documents,
    queue: &mut mpsc::UnboundedReceiver<Command>,
) -> Outcome {
    let init = connection.request(
        "initialize",
        documents::initialize_params(&cx.folders),
        INITIALIZE_TIMEOUT,
    );
    let capabilities = tokio::select! {
        result = init => match result {
            Ok(result) => result.get("capabilities").cloned().unwrap_or_default(),
            Err(error) => return Outcome::Died(format!("`initialize`: {error}")),
        },
        () = connection.closed() => return Outcome::Died("it exited during `initialize`".to_owned()),
    };
    connection.notify("initialized", &serde_json::json!({}));
    connection.notify(
        "workspace/didChangeConfiguration",
        &serde_json::json!({"settings": cx.kind.settings}),
    );
    if let Some(probe) = probe {
        connection.start_probe(probe, &cx.kind.name);
    }
    documents.set_capabilities(&capabilities);
    if cx.kind.whole_workspace {
        cx.store.first_analysis();
    }
    // A hung server fails the requests of these steps (pulls) at once, so
    // they end soon and the loop below sees it.
    documents.reopen_all(connection, &cx.store).await;
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
