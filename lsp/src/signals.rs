//! The signals that ask a process of ours to stop: SIGTERM, SIGINT and
//! SIGHUP, listened for together. The proxy stops at any of them; the IDE
//! host ignores SIGHUP (it outlives the terminal it was started from).

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Which of the stop signals arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGTERM.
    Terminate,
    /// SIGINT.
    Interrupt,
    /// SIGHUP.
    HangUp,
}

/// SIGTERM, SIGINT and SIGHUP, listened for.
#[derive(Debug)]
pub struct StopSignals {
    term: Signal,
    int: Signal,
    hup: Signal,
}

impl StopSignals {
    /// Starts listening; `None` when one of them cannot be listened for.
    pub fn listen() -> Option<Self> {
        Some(Self {
            term: signal(SignalKind::terminate()).ok()?,
            int: signal(SignalKind::interrupt()).ok()?,
            hup: signal(SignalKind::hangup()).ok()?,
        })
    }

    /// The next stop signal to arrive.
    pub async fn next(&mut self) -> StopSignal {
        tokio::select! {
            _ = self.term.recv() => StopSignal::Terminate,
            _ = self.int.recv() => StopSignal::Interrupt,
            _ = self.hup.recv() => StopSignal::HangUp,
        }
    }
}
