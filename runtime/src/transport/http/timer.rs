//! The bound on how long a client may take to send a request's headers
//! (hyper's `header_read_timeout`), without a timer-wheel entry per
//! request.
//!
//! hyper arms its timer for every request it reads, the wait between
//! keep-alive requests included, and drops it once the headers are in:
//! with tokio's timer, an entry put into the timer wheel and taken out
//! again for every request (BENCHMARKS.md § 6b). Here each
//! connection has one slot, its current deadline and waker: arming it is a
//! store, and one sweep over the connections, every quarter of the bound,
//! wakes those past their deadline, which hyper then closes. So a
//! connection is closed between one and one and a half bounds late.
//!
//! Time is read from a [`CoarseClock`] the sweep advances, not from the
//! system clock on every request.
//!
//! The same slot tells a connection that the server stops ([`Stop`]): a
//! flag it reads each time it runs, where a `watch` receiver polled beside
//! the connection took a lock on every wake-up.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::task::AtomicWaker;
use hyper::rt::{Sleep, Timer};

/// No deadline armed.
const NONE: u64 = u64::MAX;

/// A clock read with one atomic load: milliseconds since its start,
/// advanced by [`tick`](Self::tick) (the HTTP server's sweeps and reaps).
/// What it says is at most one tick behind the time; [`latest`](Self::latest)
/// adds the tick, so that it is never ahead.
#[derive(Debug)]
pub(crate) struct CoarseClock {
    epoch: Instant,
    millis: AtomicU64,
    /// The longest time between two ticks, in milliseconds.
    tick: u64,
}

impl CoarseClock {
    /// A clock ticked at least every `tick`.
    pub(crate) fn new(tick: Duration) -> Self {
        Self {
            epoch: Instant::now(),
            millis: AtomicU64::new(0),
            tick: u64::try_from(tick.as_millis()).unwrap_or(NONE - 1),
        }
    }

    /// Reads the system clock.
    pub(crate) fn tick(&self) {
        self.millis
            .fetch_max(millis(self.epoch, Instant::now()), Ordering::Relaxed);
    }

    /// The time, at most one tick behind.
    pub(crate) fn now(&self) -> u64 {
        self.millis.load(Ordering::Relaxed)
    }

    /// The latest the time can be: never behind.
    pub(crate) fn latest(&self) -> u64 {
        self.now() + self.tick
    }
}

/// The deadlines of one server's connections.
#[derive(Debug)]
pub(crate) struct Deadlines {
    slots: Mutex<Vec<Weak<Slot>>>,
    clock: Arc<CoarseClock>,
    /// The server stops: every connection finishes its answer and closes.
    stopping: Arc<AtomicBool>,
}

#[derive(Debug)]
struct Slot {
    /// Milliseconds on the [`CoarseClock`]; [`NONE`] when not armed.
    deadline: AtomicU64,
    waker: AtomicWaker,
    /// The connection's task, woken when the server stops.
    stop: AtomicWaker,
}

impl Deadlines {
    pub(crate) fn new(clock: Arc<CoarseClock>) -> Self {
        Self {
            slots: Mutex::new(Vec::new()),
            clock,
            stopping: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The timer of a new connection, to hand to hyper, and what tells the
    /// connection that the server stops.
    pub(crate) fn connection(&self) -> (ConnectionTimer, Stop) {
        let slot = Arc::new(Slot {
            deadline: AtomicU64::new(NONE),
            waker: AtomicWaker::new(),
            stop: AtomicWaker::new(),
        });
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        // The slots of closed connections go here: the list stays as long
        // as the connections are many.
        slots.retain(|slot| slot.strong_count() > 0);
        slots.push(Arc::downgrade(&slot));
        let stop = Stop {
            slot: Arc::clone(&slot),
            stopping: Arc::clone(&self.stopping),
        };
        let timer = ConnectionTimer {
            slot,
            clock: Arc::clone(&self.clock),
        };
        (timer, stop)
    }

    /// Tells every connection that the server stops.
    pub(crate) fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        for slot in slots.iter().filter_map(Weak::upgrade) {
            slot.stop.wake();
        }
    }

    /// Wakes every connection past its deadline.
    pub(crate) fn sweep(&self) {
        self.clock.tick();
        let now = self.clock.now();
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

/// Tells one connection that the server stops.
#[derive(Debug)]
pub(crate) struct Stop {
    slot: Arc<Slot>,
    stopping: Arc<AtomicBool>,
}

impl Stop {
    /// Whether the server stops; if not, the task polling is woken when it
    /// does.
    pub(crate) fn requested(&self, cx: &Context<'_>) -> bool {
        self.slot.stop.register(cx.waker());
        // After registering: a stop between the two is not missed.
        self.stopping.load(Ordering::SeqCst)
    }
}

/// One connection's timer: hyper asks it for the header-read deadline of
/// each request.
#[derive(Clone, Debug)]
pub(crate) struct ConnectionTimer {
    slot: Arc<Slot>,
    clock: Arc<CoarseClock>,
}

impl Timer for ConnectionTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(Deadline {
            slot: Arc::clone(&self.slot),
            clock: Arc::clone(&self.clock),
            at: millis(self.clock.epoch, deadline),
        })
    }

    /// The latest the time can be: a deadline set from it gives the client
    /// at least the whole bound.
    fn now(&self) -> Instant {
        self.clock.epoch + Duration::from_millis(self.clock.latest())
    }
}

/// A deadline of one connection, armed while hyper waits on it.
struct Deadline {
    slot: Arc<Slot>,
    clock: Arc<CoarseClock>,
    /// Milliseconds on the clock.
    at: u64,
}

impl Future for Deadline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.clock.now() >= self.at {
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
