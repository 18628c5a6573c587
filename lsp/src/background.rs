//! Work that must never slow the editor down: the proxy's observer thread,
//! its link to the host, and the host itself run at a lower priority than
//! the forwarding threads, so that when the cores are busy, forwarding, the
//! editor and the server run first. Observing and serving Claude may lag
//! behind a burst; forwarding must not (BENCHMARKS.md, "LSP proxy").

/// The nice value of background work.
#[cfg(target_os = "linux")]
pub const BACKGROUND_NICE: i32 = 10;

/// Lowers the calling thread's scheduling priority to [`BACKGROUND_NICE`]
/// (Linux, where the nice value is per thread and inherited by the threads
/// it spawns); elsewhere it does nothing.
pub fn lower_priority() {
    #[cfg(target_os = "linux")]
    if let Err(error) = rustix::process::setpriority_process(None, BACKGROUND_NICE) {
        tracing::debug!(%error, "cannot lower the thread's priority");
    }
}
