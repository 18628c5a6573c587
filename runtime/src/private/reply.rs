//! The replies of the generated call shims: futures, deferred writers, and
//! the refusal of a parameter that could not be extracted.

use crate::extract::Rejection;
use crate::result::{Invalid, Outcome, ResultOut};
use crate::tool::{CallOutcome, ToolReply};

/// An async shim's outcome: its future, boxed.
pub fn pending<F>(future: F) -> CallOutcome
where
    F: core::future::Future<Output = ToolReply> + Send + 'static,
{
    CallOutcome::Pending(Box::pin(future))
}

/// The reply of an async tool: `write` appends its result when the runtime
/// asks, and says how that ended.
pub fn reply<F: FnOnce(&mut ResultOut<'_>) -> Outcome + Send + 'static>(write: F) -> ToolReply {
    Box::new(write)
}

/// The extracted value, or the rejection as refused input.
#[inline]
pub fn rejected<T>(extracted: Result<T, Rejection>) -> Result<T, Invalid> {
    extracted.map_err(|rejection| Invalid(rejection.into_message()))
}

/// The extracted value, or the reply of an async tool refusing its input
/// with the rejection.
pub fn reply_rejected<T>(extracted: Result<T, Rejection>) -> Result<T, ToolReply> {
    rejected(extracted).map_err(|invalid| reply(move |_: &mut ResultOut<'_>| invalid.into()))
}
