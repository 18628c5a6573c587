//! The bound on how long a client may take to send a request's headers
//! (hyper's `header_read_timeout`), without a timer-wheel entry per
//! request.
//!
//! hyper arms its timer for every request it reads, the wait between
//! keep-alive requests included, and drops it once the headers are in:
//! with tokio's timer, an entry put into the timer wheel and taken out
//! again for every request (1.35K instructions, callgrind). Here each
//! connection has one slot, its current deadline and waker: arming it is a
//! store, and one sweep over the connections, every quarter of the bound,
//! wakes those past their deadline, which hyper then closes. So a
//! connection is closed between one and one and a quarter bounds late.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::task::AtomicWaker;
use hyper::rt::{Sleep, Timer};

/// No deadline armed.
const NONE: u64 = u64::MAX;

/// The deadlines of one server's connections.
#[derive(Debug)]
pub(crate) struct Deadlines {
    slots: Mutex<Vec<Weak<Slot>>>,
    epoch: Instant,
}

#[derive(Debug)]
struct Slot {
    /// Milliseconds since [`Deadlines::epoch`]; [`NONE`] when not armed.
    deadline: AtomicU64,
    waker: AtomicWaker,
}

impl Deadlines {
    pub(crate) fn new() -> Self {
        Self {
            slots: Mutex::new(Vec::new()),
            epoch: Instant::now(),
        }
    }

    /// The timer of a new connection, to hand to hyper.
    pub(crate) fn timer(&self) -> ConnectionTimer {
        let slot = Arc::new(Slot {
            deadline: AtomicU64::new(NONE),
            waker: AtomicWaker::new(),
        });
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        // The slots of closed connections go here: the list stays as long
        // as the connections are many.
        slots.retain(|slot| slot.strong_count() > 0);
        slots.push(Arc::downgrade(&slot));
        ConnectionTimer {
            slot,
            epoch: self.epoch,
        }
    }

    /// Wakes every connection past its deadline.
    pub(crate) fn sweep(&self) {
        let now = millis(self.epoch, Instant::now());
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        for slot in slots.iter().filter_map(Weak::upgrade) {
            if slot.deadline.load(Ordering::Acquire) <= now {
                slot.waker.wake();
            }
        }
    }

    /// How often to sweep for a bound of `bound`.
    pub(crate) fn sweep_every(bound: Duration) -> Duration {
        (bound / 4).clamp(Duration::from_millis(5), Duration::from_secs(1))
    }
}

fn millis(epoch: Instant, at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(epoch).as_millis()).unwrap_or(NONE - 1)
}

/// One connection's timer: hyper asks it for the header-read deadline of
/// each request.
#[derive(Clone, Debug)]
pub(crate) struct ConnectionTimer {
    slot: Arc<Slot>,
    epoch: Instant,
}

impl Timer for ConnectionTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(Instant::now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(Deadline {
            slot: Arc::clone(&self.slot),
            epoch: self.epoch,
            at: millis(self.epoch, deadline),
        })
    }
}

/// A deadline of one connection, armed while hyper waits on it.
struct Deadline {
    slot: Arc<Slot>,
    epoch: Instant,
    /// Milliseconds since the epoch.
    at: u64,
}

impl Future for Deadline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if millis(self.epoch, Instant::now()) >= self.at {
            return Poll::Ready(());
        }
        self.slot.waker.register(cx.waker());
        self.slot.deadline.store(self.at, Ordering::Release);
        Poll::Pending
    }
}

impl Sleep for Deadline {}

impl Drop for Deadline {
    fn drop(&mut self) {
        self.slot.deadline.store(NONE, Ordering::Release);
    }
}
