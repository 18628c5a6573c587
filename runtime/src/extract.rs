//! What one `tools/call` carries besides its arguments, and how a tool's
//! parameters are extracted from it.
//!
//! A parameter of a `#[mcp_tool]` function is taken from the call when its
//! type implements [`FromCall`], and decoded from the JSON arguments
//! otherwise. The runtime implements [`FromCall`] for the server's states
//! (`&T`), the request's [`RequestId`], a [`CancellationToken`], the
//! [`Progress`] reporter, the calling client's [`Peer`] and the server-wide
//! [`Notifier`]; a downstream crate implements it for its own types:
//!
//! ```standalone_crate
//! use ide_mcp_runtime::{Call, FromCall, Rejection, StateReq, mcp_tool};
//!
//! struct Config { greeting: String }
//!
//! /// The greeting of the server's `Config`, extracted by value.
//! struct Greeting(String);
//!
//! impl FromCall<'_> for Greeting {
//!     fn from_call(call: &Call<'_>) -> Result<Self, Rejection> {
//!         let config = call.state::<Config>().ok_or_else(|| Rejection::new("no config"))?;
//!         Ok(Greeting(config.greeting.clone()))
//!     }
//!
//!     fn required_states(states: &mut Vec<StateReq>) {
//!         states.push(StateReq::of::<Config>());
//!     }
//! }
//!
//! /// Greets `name`.
//! #[mcp_tool]
//! fn greet(greeting: Greeting, name: String) -> String {
//!     format!("{}, {name}", greeting.0)
//! }
//!
//! # fn main() {
//! // `greet` needs the `Config` its extractor reads.
//! assert!(ide_mcp_runtime::Server::builder("doc", "0").build().is_err());
//! let server = ide_mcp_runtime::Server::builder("doc", "0")
//!     .state(Config { greeting: "hello".into() })
//!     .build()
//!     .unwrap();
//! assert!(server.registry().get("greet").is_some());
//! # }
//! ```

use std::fmt::Display;

use serde_json::value::RawValue;

use crate::context::{MissingState, StateReq, ToolContext};
use crate::jsonrpc::RequestId;
use crate::notify::Notifier;
use crate::peer::{Peer, PeerRef, Progress};

pub use tokio_util::sync::CancellationToken;

/// One `tools/call` as its tool sees it: the server's states and what the
/// request carries (its id, its progress token), the client that sent it,
/// and the token cancelled when the client gives up on it.
///
/// Borrowed and built on the stack for each call: a tool that extracts
/// nothing per request costs nothing per request. Each transport fills in
/// what it can serve (progress as notifications over WebSocket and stdio, as
/// SSE events over HTTP); what it leaves out gives a no-op extractor.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    states: &'a ToolContext,
    id: Option<RequestId<'a>>,
    progress_token: Option<&'a RawValue>,
    peer: PeerRef<'a>,
    notifier: Option<&'a Notifier>,
    cancel: Option<&'a CancellationToken>,
    uri: Option<&'a str>,
}

impl<'a> Call<'a> {
    /// A call with these states and nothing else: no id, no client, never
    /// cancelled. For tests and for calling a tool's shim directly.
    pub fn new(states: &'a ToolContext) -> Self {
        Self {
            states,
            id: None,
            progress_token: None,
            peer: PeerRef::Given(None),
            notifier: None,
            cancel: None,
            uri: None,
        }
    }

    /// Sets the request id.
    #[must_use]
    pub fn with_id(mut self, id: RequestId<'a>) -> Self {
        self.id = Some(id);
        self
    }

    /// Sets the `_meta.progressToken` the client sent with the request.
    #[must_use]
    pub fn with_progress_token(mut self, token: Option<&'a RawValue>) -> Self {
        self.progress_token = token;
        self
    }

    /// Sets the client that made the call (where progress and the tool's own
    /// notifications go).
    #[must_use]
    pub fn with_peer(mut self, peer: Option<&'a Peer>) -> Self {
        self.peer = PeerRef::Given(peer);
        self
    }

    /// Sets where the call's notifications go, the peer perhaps made on first use.
    #[must_use]
    pub(crate) fn with_peer_ref(mut self, peer: PeerRef<'a>) -> Self {
        self.peer = peer;
        self
    }

    /// Sets the server-wide notifier.
    #[must_use]
    pub fn with_notifier(mut self, notifier: &'a Notifier) -> Self {
        self.notifier = Some(notifier);
        self
    }

    /// Sets the token cancelled when the client cancels the call.
    #[must_use]
    pub fn with_cancellation(mut self, token: Option<&'a CancellationToken>) -> Self {
        self.cancel = token;
        self
    }

    /// Sets the URI a `resources/read` asked for.
    #[must_use]
    pub fn with_resource_uri(mut self, uri: Option<&'a str>) -> Self {
        self.uri = uri;
        self
    }

    /// The URI a `resources/read` asked for; `None` for tools and prompts.
    pub fn resource_uri(&self) -> Option<&'a str> {
        self.uri
    }

    /// The server's states.
    pub fn states(&self) -> &'a ToolContext {
        self.states
    }

    /// The state of type `T`, if the server was given one.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&'a T> {
        self.states.get::<T>()
    }

    /// The request's id; `None` for a call made outside any request.
    pub fn id(&self) -> Option<RequestId<'a>> {
        self.id
    }

    /// The request's `_meta.progressToken`, if the client asked for progress.
    pub fn progress_token(&self) -> Option<&'a RawValue> {
        self.progress_token
    }

    /// The calling client, if the transport can reach it.
    pub fn peer(&self) -> Option<&'a Peer> {
        self.peer.get()
    }

    /// The server-wide notifier, if the call came through a server.
    pub fn notifier(&self) -> Option<&'a Notifier> {
        self.notifier
    }

    /// The call's cancellation token, if it can be cancelled (inline calls,
    /// which run to their end before the next message is read, cannot).
    pub fn cancellation(&self) -> Option<&'a CancellationToken> {
        self.cancel
    }

    /// An owned copy, for a call that outlives the request (a spawned async
    /// or blocking tool).
    pub fn to_owned(&self) -> OwnedCall {
        OwnedCall {
            states: self.states.clone(),
            id: self.id.map(|id| id.as_json().into()),
            progress_token: self.progress_token.map(ToOwned::to_owned),
            peer: self.peer().cloned(),
            notifier: self.notifier.cloned(),
            cancel: self.cancel.cloned(),
            uri: self.uri.map(Into::into),
        }
    }
}

/// A [`Call`] that owns what it holds; [`as_call`](Self::as_call) borrows it back.
#[derive(Clone, Debug)]
pub struct OwnedCall {
    states: ToolContext,
    id: Option<Box<str>>,
    progress_token: Option<Box<RawValue>>,
    peer: Option<Peer>,
    notifier: Option<Notifier>,
    cancel: Option<CancellationToken>,
    uri: Option<Box<str>>,
}

impl OwnedCall {
    /// The borrowed view extractors read.
    pub fn as_call(&self) -> Call<'_> {
        Call {
            states: &self.states,
            id: self.id.as_deref().map(RequestId::from_json),
            progress_token: self.progress_token.as_deref(),
            peer: PeerRef::Given(self.peer.as_ref()),
            notifier: self.notifier.as_ref(),
            cancel: self.cancel.as_ref(),
            uri: self.uri.as_deref(),
        }
    }
}

/// Why a parameter could not be extracted; the call is answered with an
/// `isError` result carrying this message, and the tool is not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    message: String,
}

impl Rejection {
    /// A rejection with this message (lowercase, no trailing period).
    pub fn new(message: impl Display) -> Self {
        Self {
            message: message.to_string(),
        }
    }

    /// The message, as refused input's.
    pub(crate) fn into_message(self) -> String {
        self.message
    }
}

impl Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Rejection {}

impl From<MissingState> for Rejection {
    fn from(missing: MissingState) -> Self {
        Self::new(missing)
    }
}

/// Types a `#[mcp_tool]` function takes from the call rather than from its
/// JSON arguments, as axum's extractors take from the request.
///
/// The attribute emits one [`from_call`](Self::from_call) per such parameter;
/// the work is here, in ordinary code. A parameter whose type implements
/// this trait is never a JSON argument (mark it `#[arg]` to make it one).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be taken from the call by a `#[mcp_tool]` function",
    label = "not a state of the server nor a per-request extractor",
    note = "a `&T` parameter is a state `T: Send + Sync + 'static` given to `ServerBuilder::state`; other extractors implement `ide_mcp_runtime::FromCall`",
    note = "to take a JSON argument instead, use an owned type such as `String`; beside `#[args]`, which is the whole arguments object, move it into the `#[args]` struct"
)]
pub trait FromCall<'a>: Sized {
    /// Takes the parameter from the call.
    fn from_call(call: &Call<'a>) -> Result<Self, Rejection>;

    /// Pushes the states this parameter needs; `ServerBuilder::build` refuses
    /// to start without them. None by default.
    fn required_states(states: &mut Vec<StateReq>) {
        let _ = states;
    }
}

impl<'a, T: Send + Sync + 'static> FromCall<'a> for &'a T {
    fn from_call(call: &Call<'a>) -> Result<Self, Rejection> {
        call.state::<T>().ok_or_else(|| {
            MissingState {
                type_name: std::any::type_name::<T>(),
            }
            .into()
        })
    }

    fn required_states(states: &mut Vec<StateReq>) {
        states.push(StateReq::of::<T>());
    }
}

/// The id of the request, exactly as the client wrote it.
impl<'a> FromCall<'a> for RequestId<'a> {
    fn from_call(call: &Call<'a>) -> Result<Self, Rejection> {
        call.id
            .ok_or_else(|| Rejection::new("the call was made outside any request"))
    }
}

/// Cancelled when the client cancels the call (`notifications/cancelled`) or
/// the connection ends; never, for an inline tool.
impl FromCall<'_> for CancellationToken {
    fn from_call(call: &Call<'_>) -> Result<Self, Rejection> {
        Ok(call.cancel.cloned().unwrap_or_default())
    }
}

/// Reports progress for the request's `progressToken`; a no-op when the
/// client sent none or the transport cannot reach it.
impl FromCall<'_> for Progress {
    fn from_call(call: &Call<'_>) -> Result<Self, Rejection> {
        // No token, no progress: a lazy peer is not made for nothing.
        let peer = call.progress_token.and_then(|_| call.peer()).cloned();
        Ok(Progress::new(peer, call.progress_token))
    }
}

/// Sends notifications to the client that made the call; a no-op when the
/// transport cannot reach it.
impl FromCall<'_> for Peer {
    fn from_call(call: &Call<'_>) -> Result<Self, Rejection> {
        Ok(call.peer().cloned().unwrap_or_else(Peer::detached))
    }
}

/// Sends notifications to every connected, initialized client.
impl FromCall<'_> for Notifier {
    fn from_call(call: &Call<'_>) -> Result<Self, Rejection> {
        call.notifier
            .cloned()
            .ok_or_else(|| Rejection::new("the call was made outside any server"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_extracted_and_missing_ones_named() {
        let states = ToolContext::new().with(7_u32);
        let call = Call::new(&states);
        assert_eq!(<&u32>::from_call(&call), Ok(&7));
        assert_eq!(
            <&u64>::from_call(&call).unwrap_err().to_string(),
            "the server has no state of type `u64`"
        );
        let mut needed = Vec::new();
        <&u64 as FromCall>::required_states(&mut needed);
        assert_eq!(needed, [StateReq::of::<u64>()]);
    }

    #[test]
    fn per_request_extractors_read_the_call() {
        let states = ToolContext::new();
        let token = CancellationToken::new();
        let call = Call::new(&states)
            .with_id(RequestId::from_json("\"a\""))
            .with_cancellation(Some(&token));
        assert_eq!(RequestId::from_call(&call).unwrap().as_json(), "\"a\"");
        let extracted = CancellationToken::from_call(&call).unwrap();
        token.cancel();
        assert!(extracted.is_cancelled());
        let bare = Call::new(&states);
        assert!(RequestId::from_call(&bare).is_err());
        assert!(!CancellationToken::from_call(&bare).unwrap().is_cancelled());
        assert!(Notifier::from_call(&bare).is_err());
    }

    #[test]
    fn an_owned_call_borrows_back_the_same_call() {
        let states = ToolContext::new().with(1_u8);
        let token = RawValue::from_string("42".into()).unwrap();
        let owned = Call::new(&states)
            .with_id(RequestId::from_json("9"))
            .with_progress_token(Some(&token))
            .to_owned();
        let call = owned.as_call();
        assert_eq!(call.id().map(|id| id.as_json()), Some("9"));
        assert_eq!(call.progress_token().map(RawValue::get), Some("42"));
        assert_eq!(call.state::<u8>(), Some(&1));
    }
}
