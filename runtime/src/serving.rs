//! A thread of its own, with a current-thread runtime, for serving
//! connections.
//!
//! On tokio's multi-thread runtime every request a connection reads wakes a
//! second worker for the task it spawns: about two `futex` calls per request
//! besides its read and write, and a hand-off between threads on the path of
//! every answer (BENCHMARKS.md, "Syscalls per request"). On a current-thread
//! runtime a request is read, answered and written by one thread, with
//! exactly one `read`, one `write` and one `epoll_wait` per wake-up, the
//! least a server can do.
//!
//! A host keeps its background work (a diagnostics engine, file watching,
//! language servers) on its main runtime and starts its transports on a
//! [`ServingThread`]: the request path then never waits behind background
//! work, and background work never pays for the request path's wake-ups.
//!
//! The trade-offs: all connections share the one thread, so a tool's
//! synchronous work delays the others' answers for as long as it runs
//! (blocking tools, `#[mcp_tool(blocking)]`, still run on the blocking
//! pool; async tools should not block); and a host with many clients doing
//! heavy work at once gets no parallelism between them. An IDE host serves
//! one or two clients with cheap reads: that is the case this is for.
//!
//! ```
//! use ide_mcp_runtime::{Server, ServingThread, WsOptions};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let server = Server::builder("my-editor", "1.0").build().unwrap();
//! let serving = ServingThread::start("my-editor-mcp")?;
//! let options = WsOptions { port: Some(0), write_lockfile: false, ..WsOptions::default() };
//! let handle = serving
//!     .run({
//!         let server = server.clone();
//!         async move { server.serve_ws(options).await }
//!     })
//!     .await?;
//! assert_ne!(handle.port(), 0);
//! handle.shutdown().await;
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::io;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::runtime::{Builder, Handle};
use tokio::sync::oneshot;

/// How long the serving thread's runtime waits for its blocking tasks when
/// it stops.
const STOP_TIMEOUT: Duration = Duration::from_millis(500);

/// A current-thread runtime on a thread of its own: see the
/// [module documentation](self). Dropping it stops the runtime (its tasks
/// are dropped) and joins the thread.
#[derive(Debug)]
pub struct ServingThread {
    handle: Handle,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ServingThread {
    /// Starts the thread, named `name`, with timers and I/O enabled.
    pub fn start(name: &str) -> io::Result<Self> {
        let runtime = Builder::new_current_thread().enable_all().build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                runtime.block_on(async {
                    let _ = stopped.await;
                });
                runtime.shutdown_timeout(STOP_TIMEOUT);
            })?;
        Ok(Self {
            handle,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The runtime's handle: what is spawned with it runs on the thread.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Runs `future` on the thread and waits for its output, from any
    /// runtime (a panic in it is resumed here). A transport started this
    /// way ([`Server::serve_ws`](crate::Server::serve_ws),
    /// [`serve_stdio`](crate::Server::serve_stdio),
    /// [`serve_http`](crate::Server::serve_http)) serves all its
    /// connections on the thread.
    pub async fn run<F>(&self, future: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match self.handle.spawn(future).await {
            Ok(output) => output,
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Err(error) => panic!("the serving thread stopped before the task ended: {error}"),
        }
    }
}

impl Drop for ServingThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take()
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn futures_run_on_the_serving_thread() {
        let serving = ServingThread::start("serving-test").unwrap();
        let name = serving
            .run(async { std::thread::current().name().map(str::to_owned) })
            .await;
        assert_eq!(name.as_deref(), Some("serving-test"));
        // Spawned tasks stay there too.
        let inner = serving
            .run(async {
                tokio::spawn(async { std::thread::current().name().map(str::to_owned) })
                    .await
                    .unwrap()
            })
            .await;
        assert_eq!(inner.as_deref(), Some("serving-test"));
    }

    #[tokio::test]
    #[should_panic(expected = "tool bug")]
    async fn a_panic_is_resumed_in_the_caller() {
        let serving = ServingThread::start("serving-panic").unwrap();
        serving.run(async { panic!("tool bug") }).await;
    }

    #[test]
    fn dropping_stops_the_thread() {
        let serving = ServingThread::start("serving-drop").unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        serving.handle().spawn(async move {
            // Dropped with the runtime, never completed.
            let _guard = tx;
            std::future::pending::<()>().await;
        });
        drop(serving);
        assert!(rx.recv().is_err(), "the task was dropped with the runtime");
    }
}
