//! What the WebSocket and HTTP servers' handles share: the address served,
//! the token clients must send, and the accept loop's task, stopped when
//! the handle shuts it down or is dropped.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

/// How long a shutdown waits for connections to finish before aborting them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// A running accept loop and what its handle reports. Dropping it asks the
/// loop to stop.
#[derive(Debug)]
pub(crate) struct ServerTask {
    local_addr: SocketAddr,
    token: String,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl ServerTask {
    /// Spawns `accept`, handed the receiver that says when to stop, as the
    /// server on `local_addr` whose clients send `token`.
    pub(crate) fn spawn<F>(
        local_addr: SocketAddr,
        token: String,
        accept: impl FnOnce(watch::Receiver<bool>) -> F,
    ) -> Self
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(accept(stopped));
        Self {
            local_addr,
            token,
            stop,
            task: Some(task),
        }
    }

    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// Asks the accept loop to stop and waits until it has closed its
    /// connections.
    pub(crate) async fn shutdown(&mut self) {
        self.stop.send_replace(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for ServerTask {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

/// Resolves once the handle asked the loop to stop, or is gone.
pub(crate) async fn stop_requested(stopped: &mut watch::Receiver<bool>) {
    // An error means the handle is gone: stop too.
    let _ = stopped.wait_for(|stop| *stop).await;
}

/// Waits for every connection to end, for [`SHUTDOWN_GRACE`] at most, then
/// aborts those still running.
pub(crate) async fn close_all(connections: &mut JoinSet<()>) {
    let all_done = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(SHUTDOWN_GRACE, all_done)
        .await
        .is_err()
    {
        connections.shutdown().await;
    }
}
