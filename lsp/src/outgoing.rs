//! Requests we send and the answers they wait for: one table for every peer
//! we ask (a language server we run, the server behind an editor's proxy,
//! the editor itself, the IDE the bridge links to).
//!
//! Each request gets the next number of its table; how the number goes on
//! the wire (as it is, or in a string under a prefix of ours) is the
//! caller's. A [`Lease`] waits for the answer; dropped before it comes (timed
//! out, the call cancelled), it takes its slot back and runs the caller's
//! cancel function, which tells the peer. [`Outgoing::close`] fails every
//! waiter, and every later request, with [`Gone`].
//!
//! The shape is lsp-server's `req_queue.rs` (rust-analyzer).

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use serde_json::Value;
use tokio::sync::oneshot;

use crate::sync::lock;

/// The peer is gone (it exited, was found hung, closed the connection): no
/// answer will come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gone;

impl fmt::Display for Gone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the peer is gone")
    }
}

impl std::error::Error for Gone {}

/// Requests awaiting answers of type `T`, each with data `D` of the
/// caller's (where the peer's progress for it goes, say).
#[derive(Debug)]
pub struct Outgoing<T, D = ()> {
    table: Mutex<Table<T, D>>,
}

#[derive(Debug)]
struct Table<T, D> {
    next: u64,
    waiting: HashMap<u64, (oneshot::Sender<T>, D)>,
    /// The peer is gone: every request, waiting or made later, fails.
    closed: bool,
}

impl<T, D> Default for Outgoing<T, D> {
    /// A table numbering its requests from 1.
    fn default() -> Self {
        Self::starting_at(1)
    }
}

impl<T, D> Outgoing<T, D> {
    /// A table whose first request is numbered `first`.
    pub fn starting_at(first: u64) -> Self {
        Self {
            table: Mutex::new(Table {
                next: first,
                waiting: HashMap::new(),
                closed: false,
            }),
        }
    }

    /// Numbers the next request and waits for its answer; `cancel` gets the
    /// number when the lease is dropped still waiting. [`Gone`] once the
    /// table is closed.
    pub fn lease<C: FnOnce(u64)>(&self, data: D, cancel: C) -> Result<Lease<'_, T, D, C>, Gone> {
        let (tx, answer) = oneshot::channel();
        let mut table = lock(&self.table);
        if table.closed {
            return Err(Gone);
        }
        let id = table.next;
        table.next += 1;
        table.waiting.insert(id, (tx, data));
        Ok(Lease {
            table: self,
            id,
            answer,
            cancel: Some(cancel),
        })
    }

    /// Hands `answer` to request `id`; `false` when nothing waits for it
    /// (answered already, given up on, or never ours).
    pub fn answer(&self, id: u64, answer: T) -> bool {
        let waiting = lock(&self.table).waiting.remove(&id);
        waiting.is_some_and(|(tx, _)| tx.send(answer).is_ok())
    }

    /// The peer is gone: every waiting request fails with [`Gone`], and so
    /// does every later one.
    pub fn close(&self) {
        let mut table = lock(&self.table);
        table.closed = true;
        table.waiting.clear();
    }

    /// Whether the table was closed.
    pub fn is_closed(&self) -> bool {
        lock(&self.table).closed
    }

    /// Whether no request is waiting.
    pub fn is_empty(&self) -> bool {
        lock(&self.table).waiting.is_empty()
    }

    /// The first `Some` that `f` makes of a waiting request's data.
    pub fn find_map<R>(&self, f: impl FnMut(&D) -> Option<R>) -> Option<R> {
        lock(&self.table)
            .waiting
            .values()
            .map(|(_, d)| d)
            .find_map(f)
    }

    /// Takes request `id`'s slot back; `true` when it was still waiting.
    fn withdraw(&self, id: u64) -> bool {
        lock(&self.table).waiting.remove(&id).is_some()
    }
}

/// One request's wait for its answer. Dropped while the request still
/// waits, it takes the slot back and runs its cancel function.
pub struct Lease<'a, T, D, C: FnOnce(u64)> {
    table: &'a Outgoing<T, D>,
    id: u64,
    answer: oneshot::Receiver<T>,
    cancel: Option<C>,
}

impl<T, D, C: FnOnce(u64)> Lease<'_, T, D, C> {
    /// The request's number.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Waits for the answer; [`Gone`] when the table is closed first. Safe
    /// to drop and call again.
    pub async fn answer(&mut self) -> Result<T, Gone> {
        (&mut self.answer).await.map_err(|_| Gone)
    }

    /// Takes the slot back without cancelling: the request never reached
    /// the peer.
    pub fn withdraw(mut self) {
        self.cancel = None;
    }
}

impl<T, D, C: FnOnce(u64)> Drop for Lease<'_, T, D, C> {
    fn drop(&mut self) {
        if self.table.withdraw(self.id)
            && let Some(cancel) = self.cancel.take()
        {
            cancel(self.id);
        }
    }
}

/// What a JSON-RPC reply says: its `result` (`null` when it has none), or
/// its `error`.
pub fn split_reply(mut reply: Value) -> Result<Value, Value> {
    match reply.get_mut("error") {
        Some(error) => Err(error.take()),
        None => Ok(reply.get_mut("result").map(Value::take).unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::future::Future as _;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use serde_json::json;

    use super::*;

    /// The answer if it is there, without waiting.
    fn ready<T, D, C: FnOnce(u64)>(lease: &mut Lease<'_, T, D, C>) -> Option<Result<T, Gone>> {
        let mut cx = Context::from_waker(Waker::noop());
        match pin!(lease.answer()).poll(&mut cx) {
            Poll::Ready(answer) => Some(answer),
            Poll::Pending => None,
        }
    }

    #[test]
    fn an_answer_reaches_its_lease_and_ids_count_up() {
        let table = Outgoing::<&str>::starting_at(0);
        let mut first = table.lease((), |_| panic!("answered")).unwrap();
        let mut second = table.lease((), |_| panic!("answered")).unwrap();
        assert_eq!((first.id(), second.id()), (0, 1));
        assert_eq!(ready(&mut first), None);
        assert!(table.answer(1, "two"));
        assert!(table.answer(0, "one"));
        assert_eq!(ready(&mut first), Some(Ok("one")));
        assert_eq!(ready(&mut second), Some(Ok("two")));
        assert!(!table.answer(0, "again"), "answered once");
        assert!(table.is_empty());
    }

    #[test]
    fn a_dropped_lease_cancels_and_its_late_answer_is_ignored() {
        let table = Outgoing::<&str>::default();
        let cancelled = Cell::new(None);
        let lease = table.lease((), |id| cancelled.set(Some(id))).unwrap();
        assert_eq!(lease.id(), 1);
        drop(lease);
        assert_eq!(cancelled.get(), Some(1));
        assert!(table.is_empty());
        assert!(!table.answer(1, "late"));

        let lease = table.lease((), |_| panic!("never sent")).unwrap();
        lease.withdraw();
        assert!(table.is_empty());

        let lease = table.lease((), |_| panic!("answered")).unwrap();
        assert!(table.answer(lease.id(), "unread"));
        drop(lease);
    }

    #[test]
    fn closing_fails_every_waiter_and_refuses_new_ones() {
        let table = Outgoing::<&str>::default();
        let mut a = table.lease((), |_| panic!("gone")).unwrap();
        let mut b = table.lease((), |_| panic!("gone")).unwrap();
        table.close();
        assert_eq!(ready(&mut a), Some(Err(Gone)));
        assert_eq!(ready(&mut b), Some(Err(Gone)));
        assert!(table.is_closed());
        assert!(table.lease((), |_| ()).is_err());
        assert!(!table.answer(a.id(), "late"));
    }

    #[test]
    fn unknown_ids_are_ignored_and_data_is_found() {
        let table = Outgoing::<&str, &str>::default();
        assert!(!table.answer(7, "stray"));
        let _a = table.lease("token-a", |_| ()).unwrap();
        let b = table.lease("token-b", |_| ()).unwrap();
        assert_eq!(
            table.find_map(|d| (*d == "token-b").then_some(b.id())),
            Some(2)
        );
        assert_eq!(table.find_map(|d| (*d == "none").then_some(())), None);
    }

    #[test]
    fn a_reply_splits_into_result_or_error() {
        let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {"x": 1}});
        assert_eq!(split_reply(ok), Ok(json!({"x": 1})));
        assert_eq!(split_reply(json!({"id": 1})), Ok(Value::Null));
        let failed = json!({"id": 1, "error": {"code": -1, "message": "no"}});
        assert_eq!(
            split_reply(failed),
            Err(json!({"code": -1, "message": "no"}))
        );
    }
}
