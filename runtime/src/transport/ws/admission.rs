//! Admission by authentication, not by arrival.
//!
//! A connection that has not yet shown the token is *pending*: pending
//! connections have their own cap, and when it is full the oldest is dropped
//! to make room, so no number of silent or half-sent connections can keep a
//! token holder out (its connection is the newest, and its request is
//! checked as soon as it arrives). Only a connection whose token was right
//! takes one of the *authenticated* places; with all of them taken it gets
//! `503`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::{AbortHandle, JoinSet};

use super::upgrade::Refusal;

/// The two pools of one server's connections.
#[derive(Debug)]
pub(crate) struct Admission {
    authenticated: Arc<Semaphore>,
    max_pending: usize,
    pending: Mutex<Pending>,
}

#[derive(Debug, Default)]
struct Pending {
    next: u64,
    /// Pending connections by arrival: the first key is the oldest.
    tasks: BTreeMap<u64, AbortHandle>,
}

/// A pending connection's place; leaving it (drop) makes room for another.
#[derive(Debug)]
pub(crate) struct PendingPlace {
    id: u64,
    admission: Arc<Admission>,
}

impl Drop for PendingPlace {
    fn drop(&mut self) {
        self.admission.lock().tasks.remove(&self.id);
    }
}

/// An authenticated connection's place, held for the connection's life.
pub(crate) type AuthenticatedPlace = OwnedSemaphorePermit;

impl Admission {
    /// At most `max_authenticated` connections served and `max_pending`
    /// waiting to authenticate (each at least one).
    pub(crate) fn new(max_authenticated: usize, max_pending: usize) -> Arc<Self> {
        Arc::new(Self {
            authenticated: Arc::new(Semaphore::new(max_authenticated.max(1))),
            max_pending: max_pending.max(1),
            pending: Mutex::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        // The map stays consistent whatever panicked while it was held.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Spawns a new connection's task into `set` as a pending connection,
    /// first dropping the oldest pending ones beyond the cap. Returns how
    /// many were dropped.
    pub(crate) fn spawn_pending<F>(
        self: &Arc<Self>,
        set: &mut JoinSet<()>,
        connection: impl FnOnce(PendingPlace) -> F,
    ) -> usize
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let mut evicted = Vec::new();
        {
            let mut pending = self.lock();
            while pending.tasks.len() >= self.max_pending {
                let Some((_, task)) = pending.tasks.pop_first() else {
                    break;
                };
                evicted.push(task);
            }
            let id = pending.next;
            pending.next += 1;
            let place = PendingPlace {
                id,
                admission: Arc::clone(self),
            };
            // Inserted under the lock: a task that authenticates at once
            // removes its entry only after this insertion.
            let task = set.spawn(connection(place));
            pending.tasks.insert(id, task);
        }
        // Aborted outside the lock: an aborted task's place drops and locks.
        for task in &evicted {
            task.abort();
        }
        evicted.len()
    }

    /// Moves a connection whose token was right from the pending pool (its
    /// `place` is taken and left) to the authenticated one, or refuses it
    /// with `503` when that is full (it stays pending while it is answered).
    pub(crate) fn authenticate(
        &self,
        place: &mut Option<PendingPlace>,
    ) -> Result<AuthenticatedPlace, Refusal> {
        let permit = Arc::clone(&self.authenticated)
            .try_acquire_owned()
            .map_err(|_| {
                tracing::warn!("connection refused: every authenticated place is taken");
                Refusal::BUSY
            })?;
        drop(place.take());
        Ok(permit)
    }

    /// How many connections wait to authenticate.
    pub(crate) fn pending(&self) -> usize {
        self.lock().tasks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_oldest_pending_connection_makes_room_and_tokens_take_places() {
        let admission = Admission::new(1, 2);
        let mut set = JoinSet::new();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut places = Vec::new();
        for n in 0..3 {
            let tx = tx.clone();
            let evicted = admission.spawn_pending(&mut set, move |place| async move {
                tx.send(place).unwrap();
                std::future::pending::<()>().await;
            });
            assert_eq!(evicted, usize::from(n == 2), "connection {n}");
            places.push(Some(rx.recv().await.unwrap()));
        }
        // The first was aborted to make room for the third.
        let cancelled = set.join_next().await.unwrap().unwrap_err();
        assert!(cancelled.is_cancelled());
        assert_eq!(admission.pending(), 2);

        let served = admission.authenticate(&mut places[2]).unwrap();
        assert!(places[2].is_none());
        assert_eq!(admission.pending(), 1);
        let refusal = admission.authenticate(&mut places[1]).unwrap_err();
        assert_eq!(refusal.status, 503);
        assert_eq!(admission.pending(), 1, "a refused one waits while answered");
        drop(served);
        assert!(admission.authenticate(&mut places[1]).is_ok());
        assert_eq!(admission.pending(), 0);
        set.abort_all();
        while set.join_next().await.is_some() {}
    }
}
