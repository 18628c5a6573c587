//! The one way the lsp and cli crates take a [`Mutex`].

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, even poisoned: a panic elsewhere (caught at its
/// boundary) leaves state that is still whole, every critical section being
/// short and panic-free.
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
