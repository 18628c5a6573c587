//! Results serialized once per version of their data, each kept by its own
//! tool: a tool defines its cache type in its module and finds it in the
//! context's [`Caches`] by that type, so a new cache needs no new field.

use std::any::{Any, TypeId};
use std::sync::Arc;

use arc_swap::{ArcSwap, ArcSwapOption};
use ide_mcp_runtime::PreparedResult;

/// The result last built, and the key (the data's generations) it was built for.
pub(crate) struct ResultCache<K> {
    last: ArcSwapOption<(K, PreparedResult)>,
}

impl<K> Default for ResultCache<K> {
    fn default() -> Self {
        Self {
            last: ArcSwapOption::empty(),
        }
    }
}

impl<K: PartialEq> ResultCache<K> {
    /// The result cached for `key`, or the one `build` makes, then cached.
    ///
    /// The key must be read before the data `build` reads, so that new data
    /// is never filed under an old key.
    pub(crate) fn get_or_build(
        &self,
        key: K,
        build: impl FnOnce() -> PreparedResult,
    ) -> PreparedResult {
        self.cached(|cached| *cached == key)
            .unwrap_or_else(|| self.store(key, build()))
    }
}

impl<K> ResultCache<K> {
    /// Like [`get_or_build`](Self::get_or_build), for a key that is costly
    /// to make: `matches` tells whether the cached key is the one wanted,
    /// and `key` is made only when the result has to be built.
    pub(crate) fn get_or_build_by(
        &self,
        matches: impl FnOnce(&K) -> bool,
        key: impl FnOnce() -> K,
        build: impl FnOnce() -> PreparedResult,
    ) -> PreparedResult {
        self.cached(matches)
            .unwrap_or_else(|| self.store(key(), build()))
    }

    /// The cached result, if its key `matches`.
    fn cached(&self, matches: impl FnOnce(&K) -> bool) -> Option<PreparedResult> {
        self.last
            .load()
            .as_ref()
            .filter(|cached| matches(&cached.0))
            .map(|cached| cached.1.clone())
    }

    /// Caches `prepared` under `key` and returns it.
    fn store(&self, key: K, prepared: PreparedResult) -> PreparedResult {
        self.last.store(Some(Arc::new((key, prepared.clone()))));
        prepared
    }
}

type Slot = (TypeId, Arc<dyn Any + Send + Sync>);

/// Every tool's cache, found by type; read wait-free, grown once per type.
#[derive(Default)]
pub(crate) struct Caches {
    slots: ArcSwap<Vec<Slot>>,
}

impl Caches {
    /// The cache of type `T`, created empty on first use.
    pub(crate) fn get<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let id = TypeId::of::<T>();
        let find = |slots: &[Slot]| {
            slots
                .iter()
                .find(|(t, _)| *t == id)
                .and_then(|(_, cache)| Arc::clone(cache).downcast::<T>().ok())
        };
        if let Some(cache) = find(&self.slots.load()) {
            return cache;
        }
        let created: Arc<T> = Arc::default();
        // Another thread may have added it meanwhile: keep the first one.
        self.slots.rcu(|slots| {
            if find(slots).is_some() {
                Arc::clone(slots)
            } else {
                let mut grown = Vec::clone(slots);
                grown.push((id, Arc::clone(&created) as Arc<dyn Any + Send + Sync>));
                Arc::new(grown)
            }
        });
        find(&self.slots.load()).unwrap_or(created)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct A(ResultCache<u64>);
    #[derive(Default)]
    struct B(ResultCache<u64>);

    #[test]
    fn each_type_has_its_own_cache_and_a_key_change_rebuilds() {
        let caches = Caches::default();
        let one = PreparedResult::json_text(&1);
        let two = PreparedResult::json_text(&2);
        assert_eq!(caches.get::<A>().0.get_or_build(1, || one.clone()), one);
        assert_eq!(caches.get::<A>().0.get_or_build(1, || unreachable!()), one);
        assert_eq!(caches.get::<B>().0.get_or_build(1, || two.clone()), two);
        assert_eq!(caches.get::<A>().0.get_or_build(2, || two.clone()), two);
        assert!(Arc::ptr_eq(&caches.get::<A>(), &caches.get::<A>()));
    }
}
