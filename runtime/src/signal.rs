//! Waiting for the request to stop: SIGINT or SIGTERM on Unix, Ctrl-C,
//! Ctrl-Break or the console closing on Windows.

use std::io;

/// Resolves when the process is asked to stop: SIGINT or SIGTERM on Unix;
/// Ctrl-C, Ctrl-Break or the console window closing on Windows; Ctrl-C
/// elsewhere. A host runs its shutdown (answering running calls, removing
/// the lockfile) after it.
pub async fn shutdown_signal() -> io::Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        tokio::select! {
            result = tokio::signal::ctrl_c() => result?,
            _ = term.recv() => {}
        }
    }
    #[cfg(windows)]
    {
        use tokio::signal::windows::{ctrl_break, ctrl_close};
        let mut breaks = ctrl_break()?;
        let mut close = ctrl_close()?;
        tokio::select! {
            result = tokio::signal::ctrl_c() => result?,
            _ = breaks.recv() => {}
            _ = close.recv() => {}
        }
    }
    #[cfg(not(any(unix, windows)))]
    tokio::signal::ctrl_c().await?;
    tracing::info!("signal received; shutting down");
    Ok(())
}
