//! The states a server is built with, found by type.

use std::any::{Any, TypeId};
use std::sync::Arc;

/// A state type a tool needs, as recorded in its [`ToolDef`](crate::ToolDef).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct StateReq {
    /// The type's id, to look it up.
    pub type_id: TypeId,
    /// The type's name, for error messages.
    pub type_name: &'static str,
}

impl StateReq {
    /// The requirement for state type `T`.
    pub fn of<T: Any>() -> Self {
        Self {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
        }
    }
}

/// The states a server was built with, shared by every call.
///
/// Cheap to clone (one `Arc`). A host adds states with
/// [`ServerBuilder::state`](crate::ServerBuilder::state); tools receive them as
/// `&T` parameters (see [`FromCall`](crate::FromCall)).
#[derive(Clone, Default)]
pub struct ToolContext {
    states: Arc<StateMap>,
}

#[derive(Default, Clone)]
struct StateMap {
    // A handful of entries: a linear scan over `TypeId`s beats hashing.
    entries: Vec<(TypeId, &'static str, Arc<dyn Any + Send + Sync>)>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.states.entries.iter().map(|(_, name, _)| name))
            .finish()
    }
}

impl ToolContext {
    /// An empty context.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the state of type `T`, shared behind an `Arc`.
    #[must_use]
    pub fn with<T: Send + Sync + 'static>(self, state: T) -> Self {
        self.with_arc(Arc::new(state))
    }

    /// Adds (or replaces) a state already behind an `Arc`.
    #[must_use]
    pub fn with_arc<T: Send + Sync + 'static>(mut self, state: Arc<T>) -> Self {
        let map = Arc::make_mut(&mut self.states);
        let id = TypeId::of::<T>();
        map.entries.retain(|(t, _, _)| *t != id);
        map.entries.push((id, std::any::type_name::<T>(), state));
        self
    }

    /// The state of type `T`, if the server was given one.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        let id = TypeId::of::<T>();
        self.states
            .entries
            .iter()
            .find(|(t, _, _)| *t == id)
            .and_then(|(_, _, s)| s.downcast_ref::<T>())
    }

    /// The state of type `T` as a shared `Arc`.
    pub fn get_arc<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let id = TypeId::of::<T>();
        self.states
            .entries
            .iter()
            .find(|(t, _, _)| *t == id)
            .and_then(|(_, _, s)| Arc::clone(s).downcast::<T>().ok())
    }

    /// Whether a state with this type id is present.
    pub fn contains(&self, req: &StateReq) -> bool {
        self.states
            .entries
            .iter()
            .any(|(t, _, _)| *t == req.type_id)
    }
}

/// A context parameter could not be extracted: the server lacks the state.
///
/// `ServerBuilder::build` checks every tool's states up front, so this only
/// happens when a shim is called with a hand-made [`ToolContext`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingState {
    /// The missing state type.
    pub type_name: &'static str,
}

impl std::fmt::Display for MissingState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the server has no state of type `{}`", self.type_name)
    }
}

impl std::error::Error for MissingState {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_found_by_type_and_replaced() {
        let cx = ToolContext::new().with(1_u32).with(String::from("a"));
        assert_eq!(cx.get::<u32>(), Some(&1));
        assert_eq!(cx.get::<String>().map(String::as_str), Some("a"));
        assert_eq!(cx.get::<u64>(), None);
        let cx = cx.with(2_u32);
        assert_eq!(cx.get::<u32>(), Some(&2));
        assert!(cx.contains(&StateReq::of::<String>()));
    }
}
