//! [`Outcome`]: how writing a result ended, as a value the dispatcher
//! matches. A shim says what happened; no layer reads back the bytes
//! another wrote to learn it.

/// How a result's writer (a shim, or an async tool's reply) ended.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "the dispatcher answers by the outcome"]
pub enum Outcome {
    /// One complete result object was written to the [`ResultOut`](super::ResultOut).
    Written,
    /// The request is answered with this JSON-RPC error instead of a result
    /// (how a resource or a prompt fails); nothing was written.
    RpcError(RpcError),
    /// The input was refused (arguments that do not decode, a parameter
    /// that cannot be taken from the call): the message. A tool answers it
    /// as a result with `isError`, a resource or a prompt as -32602 (invalid
    /// params); nothing was written.
    Invalid(String),
}

/// A JSON-RPC error object, `{"code":…,"message":…}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RpcError {
    /// The error's code.
    pub code: i32,
    /// The error's message.
    pub message: String,
}

/// Input a shim refused, as its steps return it: becomes
/// [`Outcome::Invalid`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid(pub String);

impl From<Invalid> for Outcome {
    fn from(Invalid(message): Invalid) -> Self {
        Self::Invalid(message)
    }
}

impl From<RpcError> for Outcome {
    fn from(error: RpcError) -> Self {
        Self::RpcError(error)
    }
}
