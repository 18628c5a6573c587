//! The replies of the generated call shims: futures, deferred writers, and
//! the error result of a parameter that could not be extracted.

use crate::extract::Rejection;
use crate::result::write_error_text;
use crate::tool::{ToolFuture, ToolReply};

/// Boxes an async tool's future.
pub fn boxed_future<F>(future: F) -> ToolFuture
where
    F: core::future::Future<Output = ToolReply> + Send + 'static,
{
    Box::pin(future)
}

/// The reply of an async tool: `write` appends its result when the runtime asks.
pub fn reply<F: FnOnce(&mut Vec<u8>) + Send + 'static>(write: F) -> ToolReply {
    Box::new(write)
}

/// The extracted value, or `None` after writing the rejection as an error result.
pub fn rejected<T>(extracted: Result<T, Rejection>, out: &mut Vec<u8>) -> Option<T> {
    extracted
        .map_err(|rejection| write_error_text(out, &rejection))
        .ok()
}

/// The extracted value, or the reply of an async tool that writes the
/// rejection as an error result.
pub fn reply_rejected<T>(extracted: Result<T, Rejection>) -> Result<T, ToolReply> {
    extracted.map_err(|rejection| reply(move |out| write_error_text(out, &rejection)))
}
