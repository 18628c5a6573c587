//! Waiting for the request to stop: SIGINT or SIGTERM on Unix, Ctrl-C,
//! Ctrl-Break or the console closing on Windows.

use std::future::Future;
use std::io;

/// Resolves when the process is asked to stop: SIGINT or SIGTERM on Unix;
/// Ctrl-C, Ctrl-Break or the console window closing on Windows; Ctrl-C
/// elsewhere. A host runs its shutdown (answering running calls, removing
/// the lockfile) after it.
///
/// The handlers are installed when this is called, not when the future is
/// first polled: call it before publishing the lockfile, so that a signal
/// sent as soon as the lockfile appears is caught rather than killing the
/// process with its lockfile left behind. Must be called within a Tokio
/// runtime.
pub fn shutdown_signal() -> impl Future<Output = io::Result<()>> + Send {
    let installed = install();
    async move {
        wait(installed?).await;
        tracing::info!("signal received; shutting down");
        Ok(())
    }
}

#[cfg(unix)]
type Installed = (tokio::signal::unix::Signal, tokio::signal::unix::Signal);

#[cfg(unix)]
fn install() -> io::Result<Installed> {
    use tokio::signal::unix::{SignalKind, signal};
    Ok((
        signal(SignalKind::interrupt())?,
        signal(SignalKind::terminate())?,
    ))
}

#[cfg(unix)]
async fn wait((mut int, mut term): Installed) {
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
    }
}

#[cfg(windows)]
type Installed = (
    tokio::signal::windows::CtrlC,
    tokio::signal::windows::CtrlBreak,
    tokio::signal::windows::CtrlClose,
);

#[cfg(windows)]
fn install() -> io::Result<Installed> {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
    Ok((ctrl_c()?, ctrl_break()?, ctrl_close()?))
}

#[cfg(windows)]
async fn wait((mut c, mut brk, mut close): Installed) {
    tokio::select! {
        _ = c.recv() => {}
        _ = brk.recv() => {}
        _ = close.recv() => {}
    }
}

#[cfg(not(any(unix, windows)))]
type Installed = ();

#[cfg(not(any(unix, windows)))]
fn install() -> io::Result<Installed> {
    Ok(())
}

#[cfg(not(any(unix, windows)))]
async fn wait((): Installed) {
    let _ = tokio::signal::ctrl_c().await;
}
