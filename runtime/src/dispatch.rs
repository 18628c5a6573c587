//! Running one `tools/call` (or a `resources/read`, a `prompts/get`: their
//! shims are alike): inline, on the blocking pool, or as a spawned future;
//! catching panics; tracking what is in flight so that it can be cancelled
//! and answered out of order.

use std::any::Any;
use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use crate::tool::Arguments;
use futures_util::FutureExt as _;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tracing::Instrument as _;

use crate::extract::{Call, CancellationToken};
use crate::jsonrpc::{self, RequestId};
use crate::prompt::PromptDef;
use crate::relay::{Relay, RelayFuture, RelayReply};
use crate::request::CallParams;
use crate::resource::ResourceDef;
use crate::result::{Outcome, ResultOut};
use crate::tool::{CallFn, CallOutcome, Execution, ToolDef, ToolFuture, ToolReply};

/// What a request runs: a tool's, a resource's or a prompt's generated shim.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Handler {
    /// What it is, for messages: a tool's name, a resource's URI, a prompt's name.
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    pub(crate) execution: Execution,
    pub(crate) call: CallFn,
}

/// Which kind of shim a [`Handler`] runs, and so how its answer is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Writes a `CallToolResult`; refused input is a result with `isError`.
    Tool,
    /// Writes a `resources/read` result; refused input is -32602.
    Resource,
    /// Writes a `prompts/get` result; refused input is -32602.
    Prompt,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Resource => "resource",
            Self::Prompt => "prompt",
        }
    }
}

impl Handler {
    /// A tool's handler.
    pub(crate) fn tool(def: &'static ToolDef) -> Self {
        Self {
            name: def.name,
            kind: Kind::Tool,
            execution: def.execution,
            call: def.call,
        }
    }

    /// A resource's reader, named by its URI (or template).
    pub(crate) fn resource(def: &'static ResourceDef) -> Self {
        Self {
            name: def.uri,
            kind: Kind::Resource,
            execution: def.execution,
            call: def.call,
        }
    }

    /// A prompt's renderer.
    pub(crate) fn prompt(def: &'static PromptDef) -> Self {
        Self {
            name: def.name,
            kind: Kind::Prompt,
            execution: def.execution,
            call: def.call,
        }
    }
}

/// How many requests one connection may have running at once (async tools
/// still pending and blocking tools). A call of such a tool beyond it is
/// answered at once with [`SERVER_OVERLOADED`](jsonrpc::SERVER_OVERLOADED)
/// (-32030, too many requests in flight) instead of spawning another task.
/// The connection keeps reading, so that the client can still cancel, ping
/// and call inline tools.
pub const MAX_IN_FLIGHT: usize = 64;

/// Why a running call was stopped before it finished; answered with
/// [`REQUEST_CANCELLED`](jsonrpc::REQUEST_CANCELLED) (-32031).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelReason {
    /// The server is shutting down (`data`: `{"reason": "shutdown"}`).
    Shutdown,
    /// The client's input ended (a closed stdin) and the call did not finish
    /// within the drain bound (`data`: `{"reason": "inputEnded"}`).
    InputEnded,
}

impl CancelReason {
    fn message(self) -> &'static str {
        match self {
            Self::Shutdown => "the server is shutting down",
            Self::InputEnded => "the input ended and the call did not finish in time",
        }
    }

    fn data(self) -> &'static str {
        match self {
            Self::Shutdown => r#"{"reason":"shutdown"}"#,
            Self::InputEnded => r#"{"reason":"inputEnded"}"#,
        }
    }
}

/// The `data` of a [`SERVER_OVERLOADED`](jsonrpc::SERVER_OVERLOADED) refusal.
const OVERLOADED_DATA: &str = r#"{"reason":"tooManyRequestsInFlight","limit":64}"#;
const _: () = assert!(MAX_IN_FLIGHT == 64, "update OVERLOADED_DATA");

/// What a finished async or blocking call sends back to its connection.
pub(crate) struct Completion {
    slot: u32,
    generation: u32,
    ended: Ended,
}

/// Where a call that answers later sends how it ended: the one way a
/// completion is sent, once per claimed slot.
struct Completer {
    slot: u32,
    generation: u32,
    tx: mpsc::UnboundedSender<Completion>,
}

impl Completer {
    fn send(self, ended: Ended) {
        // A connection that is gone waits for no answer.
        let _ = self.tx.send(Completion {
            slot: self.slot,
            generation: self.generation,
            ended,
        });
    }
}

/// How a call that did not answer at once ended.
enum Ended {
    /// What the shim (or its reply) wrote into a buffer of its own, and
    /// the outcome it returned.
    Done(Vec<u8>, Outcome),
    /// A relayed JSON-RPC error object.
    Error(Vec<u8>),
    /// The panic message.
    Panic(String),
    /// What went wrong otherwise, after "tool `<name>`".
    Internal(&'static str),
}

struct Slot {
    /// The raw request id; its buffer is reused by later calls.
    id: String,
    generation: u32,
    busy: bool,
    /// A 2026-07-28 call: its result carries `resultType`.
    stateless: bool,
    /// The tool's name: a registered tool's, or a relayed call's own copy
    /// (a resource's URI, a prompt's name).
    tool: Cow<'static, str>,
    kind: Kind,
    started: Instant,
    abort: Option<AbortHandle>,
    /// Cancelled when the slot is released before the call answered.
    cancel: Option<CancellationToken>,
}

/// The calls of one connection that have not been answered yet.
pub(crate) struct InFlight {
    slots: Vec<Slot>,
    busy: usize,
    /// Made by the first call that does not answer at once: a session of
    /// inline calls (a stateless HTTP request) never needs one.
    channel: Option<(
        mpsc::UnboundedSender<Completion>,
        mpsc::UnboundedReceiver<Completion>,
    )>,
}

impl InFlight {
    pub(crate) fn new() -> Self {
        Self {
            slots: Vec::new(),
            busy: 0,
            channel: None,
        }
    }

    /// Where a running call sends its completion.
    fn sender(&mut self) -> mpsc::UnboundedSender<Completion> {
        // Unbounded, yet bounded in practice: at most one message per busy slot.
        let (tx, _) = self.channel.get_or_insert_with(mpsc::unbounded_channel);
        tx.clone()
    }

    pub(crate) fn len(&self) -> usize {
        self.busy
    }

    /// Runs a call that answers later: claims a slot for request `id`,
    /// starts the call with `start`, which is given where to send how it
    /// ended, and keeps the handle that aborts it when the slot is released.
    fn start(
        &mut self,
        id: RequestId<'_>,
        (tool, kind): (Cow<'static, str>, Kind),
        stateless: bool,
        cancel: CancellationToken,
        start: impl FnOnce(Completer) -> Option<AbortHandle>,
    ) {
        let (slot, generation) = self.claim(id, (tool, kind), stateless, cancel);
        let tx = self.sender();
        let abort = start(Completer {
            slot,
            generation,
            tx,
        });
        self.slots[slot as usize].abort = abort;
    }

    fn claim(
        &mut self,
        id: RequestId<'_>,
        (tool, kind): (Cow<'static, str>, Kind),
        stateless: bool,
        cancel: CancellationToken,
    ) -> (u32, u32) {
        let index = if let Some(i) = self.slots.iter().position(|s| !s.busy) {
            i
        } else {
            self.slots.push(Slot {
                id: String::new(),
                generation: 0,
                busy: false,
                stateless,
                tool: Cow::Borrowed(""),
                kind,
                started: Instant::now(),
                abort: None,
                cancel: None,
            });
            self.slots.len() - 1
        };
        let slot = &mut self.slots[index];
        slot.id.clear();
        slot.id.push_str(id.as_json());
        slot.busy = true;
        slot.stateless = stateless;
        slot.tool = tool;
        slot.kind = kind;
        slot.started = Instant::now();
        slot.abort = None;
        slot.cancel = Some(cancel);
        self.busy += 1;
        (index as u32, slot.generation)
    }

    fn release(&mut self, index: usize) {
        let slot = &mut self.slots[index];
        slot.busy = false;
        slot.generation = slot.generation.wrapping_add(1);
        if let Some(abort) = slot.abort.take() {
            abort.abort();
        }
        if let Some(cancel) = slot.cancel.take() {
            cancel.cancel();
        }
        self.busy -= 1;
    }

    /// Cancels the call whose id is `id` (raw JSON); no response will be sent for it.
    /// An async tool is aborted; a blocking one runs to its end and its result is dropped.
    pub(crate) fn cancel(&mut self, id: &str) -> bool {
        let Some(index) = self.slots.iter().position(|s| s.busy && s.id == id) else {
            return false;
        };
        tracing::debug!(id, tool = &*self.slots[index].tool, "request cancelled");
        self.release(index);
        true
    }

    /// Answers one running call with an error saying why it was cancelled
    /// (`reason`), aborting it; `false` when none is running.
    pub(crate) fn cancel_next(&mut self, out: &mut Vec<u8>, reason: CancelReason) -> bool {
        let Some(index) = self.slots.iter().position(|s| s.busy) else {
            return false;
        };
        let slot = &self.slots[index];
        tracing::debug!(id = %slot.id, tool = &*slot.tool, ?reason, "request cancelled");
        jsonrpc::write_error_with_data(
            out,
            Some(RequestId::from_json(&slot.id)),
            jsonrpc::REQUEST_CANCELLED,
            &format_args!("`{}` was cancelled: {}", slot.tool, reason.message()),
            reason.data(),
        );
        self.release(index);
        true
    }

    /// Waits for the next call to finish and appends its response to `out`.
    /// Cancel-safe. Returns `false` only if nothing can ever complete.
    pub(crate) async fn complete(&mut self, out: &mut Vec<u8>) -> bool {
        loop {
            let Some((_, rx)) = &mut self.channel else {
                return false; // no call ever ran long
            };
            let Some(done) = rx.recv().await else {
                return false;
            };
            if self.write(done, out) {
                return true;
            }
        }
    }

    /// Appends the response of a call that has already finished, if any.
    pub(crate) fn try_complete(&mut self, out: &mut Vec<u8>) -> bool {
        while let Some(Ok(done)) = self.channel.as_mut().map(|(_, rx)| rx.try_recv()) {
            if self.write(done, out) {
                return true;
            }
        }
        false
    }

    fn write(&mut self, done: Completion, out: &mut Vec<u8>) -> bool {
        let index = done.slot as usize;
        let Some(slot) = self.slots.get(index) else {
            return false;
        };
        if !slot.busy || slot.generation != done.generation {
            return false; // cancelled meanwhile
        }
        let id = RequestId::from_json(&slot.id);
        let label = (&*slot.tool, slot.kind);
        match done.ended {
            Ended::Done(result, outcome) => {
                write_answer(out, id, label, (&result, outcome), slot.stateless);
            }
            Ended::Error(error) => jsonrpc::write_error_raw(out, id, &error),
            Ended::Panic(panic) => write_panic(out, id, label, &panic),
            Ended::Internal(what) => write_internal(out, id, label, what),
        }
        tracing::debug!(id = %slot.id, tool = &*slot.tool, elapsed_us = slot.started.elapsed().as_micros(), "request done");
        self.release(index);
        true
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        for slot in &mut self.slots {
            if let Some(abort) = slot.abort.take() {
                abort.abort();
            }
            if let Some(cancel) = slot.cancel.take() {
                cancel.cancel();
            }
        }
    }
}

/// Runs `handler` for request `id` with what the request carries in `call`.
/// Returns `true` when the response was appended to `out` now, `false` when
/// it will come from [`InFlight::complete`].
pub(crate) fn call(
    call: Call<'_>,
    inflight: &mut InFlight,
    id: RequestId<'_>,
    handler: Handler,
    args: Option<Arguments<'_>>,
    stateless: bool,
    out: &mut Vec<u8>,
) -> bool {
    let call = call.with_id(id);
    // Inline calls run to their end before the next message is read: only
    // the others take a place among the calls in flight, and can be cancelled.
    let cancel = match handler.execution {
        Execution::Inline => None,
        _ if inflight.len() >= MAX_IN_FLIGHT => {
            write_overloaded(out, id, handler.name);
            return true;
        }
        Execution::Blocking | Execution::Async => Some(CancellationToken::new()),
    };
    let call = call.with_cancellation(cancel.as_ref());
    let run = Run {
        call: &call,
        id,
        handler,
        args,
        stateless,
    };
    match &cancel {
        Some(cancel) if handler.execution == Execution::Blocking => {
            run_blocking(&run, inflight, cancel.clone());
            false
        }
        _ => run_now(&run, inflight, cancel.clone(), out),
    }
}

/// One request's run of a shim: what [`run_blocking`] and [`run_now`] share.
struct Run<'r, 'a> {
    call: &'r Call<'a>,
    id: RequestId<'a>,
    handler: Handler,
    args: Option<Arguments<'a>>,
    stateless: bool,
}

/// Runs a blocking shim on the blocking pool; its answer comes from
/// [`InFlight::complete`].
fn run_blocking(run: &Run<'_, '_>, inflight: &mut InFlight, cancel: CancellationToken) {
    let handler = run.handler;
    let owned = run.call.to_owned();
    let args: Option<Box<str>> = run.args.map(|args| args.json().into());
    let span = tracing::Span::current();
    let label = (Cow::Borrowed(handler.name), handler.kind);
    inflight.start(run.id, label, run.stateless, cancel, |done| {
        let task = tokio::task::spawn_blocking(move || {
            let _span = span.enter();
            let mut result = Vec::new();
            let called = catch_unwind(AssertUnwindSafe(|| {
                (handler.call)(
                    &owned.as_call(),
                    args.as_deref().map(Arguments::checked),
                    &mut ResultOut::new(&mut result),
                )
            }));
            match called {
                Ok(CallOutcome::Done(outcome)) => done.send(Ended::Done(result, outcome)),
                // A blocking shim that still returns a future: run it as an async call.
                Ok(CallOutcome::Pending(future)) => {
                    // Not aborted with the slot: the blocking task's handle is kept.
                    let _ = spawn_reply(AssertUnwindSafe(future).catch_unwind(), done);
                }
                Err(panic) => done.send(Ended::Panic(panic_message(&*panic))),
            }
        });
        Some(task.abort_handle())
    });
}

/// Runs a shim on the connection's task: an inline shim's answer is
/// appended to `out` (`true`); so is an async one's when its future is
/// ready at once, else the future is spawned (`false`: the answer comes
/// from [`InFlight::complete`]).
fn run_now(
    run: &Run<'_, '_>,
    inflight: &mut InFlight,
    cancel: Option<CancellationToken>,
    out: &mut Vec<u8>,
) -> bool {
    let Run {
        call,
        id,
        handler,
        args,
        stateless,
    } = *run;
    let label = (handler.name, handler.kind);
    let shim = |out: &mut ResultOut<'_>| (handler.call)(call, args, out);
    let started = if handler.execution == Execution::Async {
        start_async(out, id, label, stateless, shim)
    } else {
        write_inline(out, id, label, stateless, shim)
    };
    let Some(future) = started else {
        return true;
    };
    // Fast path: a future that is ready at once is answered inline, with no task.
    let mut future = AssertUnwindSafe(future).catch_unwind();
    match (&mut future).now_or_never() {
        Some(Ok(reply)) => {
            // Written straight into the response: no buffer in between.
            let write = |out: &mut ResultOut<'_>| CallOutcome::Done(reply(out));
            let pending = write_inline(out, id, label, stateless, write);
            debug_assert!(pending.is_none(), "a reply is no future");
            true
        }
        Some(Err(panic)) => {
            write_panic(out, id, label, &panic_message(&*panic));
            true
        }
        None => {
            let label = (Cow::Borrowed(handler.name), handler.kind);
            let cancel = cancel.unwrap_or_default();
            inflight.start(id, label, stateless, cancel, |done| {
                spawn_reply(future, done)
            });
            false
        }
    }
}

/// Starts a relayed call of `params.name` for request `id` (see
/// [`relay`](crate::relay)); its answer comes from [`InFlight::complete`].
/// Returns `true` only when it was answered now: refused because of the
/// bound on calls in flight, or because the relay panicked.
pub(crate) fn relay(
    call: Call<'_>,
    inflight: &mut InFlight,
    id: RequestId<'_>,
    relay: &dyn Relay,
    params: &CallParams<'_>,
    stateless: bool,
    out: &mut Vec<u8>,
) -> bool {
    let started = relay_with(call, inflight, id, &params.name, stateless, out, |call| {
        Some(relay.call(call, params.json))
    });
    started.unwrap_or(true)
}

/// Starts a relayed request named `name` (a tool, or the method of a
/// [forwarded](Relay::forward) request) whose future `start` makes, as
/// [`relay`] does. `None` when `start` makes none (the request is not
/// relayed; nothing was written), else whether it was answered now.
pub(crate) fn relay_with(
    call: Call<'_>,
    inflight: &mut InFlight,
    id: RequestId<'_>,
    name: &str,
    stateless: bool,
    out: &mut Vec<u8>,
    start: impl FnOnce(&Call<'_>) -> Option<RelayFuture>,
) -> Option<bool> {
    if inflight.len() >= MAX_IN_FLIGHT {
        write_overloaded(out, id, jsonrpc::clip(name));
        return Some(true);
    }
    let cancel = CancellationToken::new();
    let call = call.with_id(id).with_cancellation(Some(&cancel));
    let future = match catch_unwind(AssertUnwindSafe(|| start(&call))) {
        Ok(future) => future?,
        Err(panic) => {
            write_panic(out, id, (name, Kind::Tool), &panic_message(&*panic));
            return Some(true);
        }
    };
    let label = (Cow::Owned(name.to_owned()), Kind::Tool);
    inflight.start(id, label, stateless, cancel, |done| {
        let task = tokio::spawn(
            async move { done.send(relayed(future).await) }.instrument(tracing::Span::current()),
        );
        Some(task.abort_handle())
    });
    Some(false)
}

/// What a relayed call's future resolves to, as the connection answers it.
async fn relayed(future: RelayFuture) -> Ended {
    let reply = match AssertUnwindSafe(future).catch_unwind().await {
        Ok(reply) => reply,
        Err(panic) => return Ended::Panic(panic_message(&*panic)),
    };
    let (json, is_result) = match reply {
        RelayReply::Result(result) => (result, true),
        RelayReply::Error(error) => (error, false),
    };
    // An object, as the answer needs (a result gets `resultType` appended
    // inside it for a 2026-07-28 request): anything else is the relay's bug.
    if !json.get().starts_with('{') {
        return Ended::Internal(if is_result {
            "was relayed a result that is not a JSON object"
        } else {
            "was relayed an error that is not a JSON object"
        });
    }
    let bytes = Box::<str>::from(json).into_boxed_bytes().into_vec();
    if is_result {
        Ended::Done(bytes, Outcome::Written)
    } else {
        Ended::Error(bytes)
    }
}

/// Appends the response to `id` whose result `write` appends straight
/// into it, catching a panic (the partial output is discarded, -32603
/// answered). When `write` goes on in a future instead (a shim run inline
/// that is async after all), the response's opening is dropped and the
/// future returned.
fn write_inline(
    out: &mut Vec<u8>,
    id: RequestId<'_>,
    label: (&str, Kind),
    stateless: bool,
    write: impl FnOnce(&mut ResultOut<'_>) -> CallOutcome,
) -> Option<ToolFuture> {
    let start = out.len();
    jsonrpc::write_result_open(out, id);
    let body = out.len();
    match catch_unwind(AssertUnwindSafe(|| write(&mut ResultOut::new(out)))) {
        // The common case, kept apart from the failures' handling.
        Ok(CallOutcome::Done(Outcome::Written)) if out.len() > body => {
            close_result(out, body, stateless);
        }
        Ok(CallOutcome::Done(outcome)) => {
            close_answer(out, id, label, (start, body), outcome, stateless);
        }
        Ok(CallOutcome::Pending(future)) => {
            out.truncate(start);
            return Some(future);
        }
        Err(panic) => {
            out.truncate(start);
            write_panic(out, id, label, &panic_message(&*panic));
        }
    }
    None
}

/// Starts an async shim, which writes nothing before its future is
/// ready: the response is opened only once there is a result to write.
/// Returns its future; when it has none (refused input, a panic), its
/// answer is appended to `out`.
fn start_async(
    out: &mut Vec<u8>,
    id: RequestId<'_>,
    label: (&str, Kind),
    stateless: bool,
    shim: impl FnOnce(&mut ResultOut<'_>) -> CallOutcome,
) -> Option<ToolFuture> {
    // Empty, so no allocation, unless the shim writes a result after all.
    let mut result = Vec::new();
    match catch_unwind(AssertUnwindSafe(|| shim(&mut ResultOut::new(&mut result)))) {
        Ok(CallOutcome::Pending(future)) => return Some(future),
        Ok(CallOutcome::Done(outcome)) => {
            write_answer(out, id, label, (&result, outcome), stateless);
        }
        Err(panic) => write_panic(out, id, label, &panic_message(&*panic)),
    }
    None
}

/// An async tool's future, its panic caught.
type Guarded = futures_util::future::CatchUnwind<AssertUnwindSafe<ToolFuture>>;

/// Spawns the task that awaits an async tool's future and sends its reply
/// through `done`; outside a tokio runtime, sends a panic instead.
fn spawn_reply(future: Guarded, done: Completer) -> Option<AbortHandle> {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        done.send(Ended::Panic("no async runtime".to_owned()));
        return None;
    };
    let task = runtime
        .spawn(async move { done.send(finish(future.await)) }.instrument(tracing::Span::current()));
    Some(task.abort_handle())
}

/// Runs the reply of a spawned call into its own buffer, catching a panic.
fn finish(reply: Result<ToolReply, Box<dyn Any + Send>>) -> Ended {
    let reply = match reply {
        Ok(reply) => reply,
        Err(panic) => return Ended::Panic(panic_message(&*panic)),
    };
    let mut result = Vec::new();
    match catch_unwind(AssertUnwindSafe(|| reply(&mut ResultOut::new(&mut result)))) {
        Ok(outcome) => Ended::Done(result, outcome),
        Err(panic) => Ended::Panic(panic_message(&*panic)),
    }
}

/// Appends the response to `id` of a result written elsewhere: its bytes
/// and the outcome of writing them, answered as [`close_answer`] says.
fn write_answer(
    out: &mut Vec<u8>,
    id: RequestId<'_>,
    label: (&str, Kind),
    (result, outcome): (&[u8], Outcome),
    stateless: bool,
) {
    let start = out.len();
    jsonrpc::write_result_open(out, id);
    let body = out.len();
    out.extend_from_slice(result);
    close_answer(out, id, label, (start, body), outcome, stateless);
}

/// Ends the response opened at `start`, its result from `body` on, by the
/// `outcome` of writing it. Results are valid JSON by construction: shims
/// write them through [`ResultOut`], which appends nothing else. A result
/// said to be written that is empty is answered with -32603; refused input
/// with an `isError` result for a tool, -32602 for a resource or a prompt;
/// a JSON-RPC error in place of the result.
fn close_answer(
    out: &mut Vec<u8>,
    id: RequestId<'_>,
    (name, kind): (&str, Kind),
    (start, body): (usize, usize),
    outcome: Outcome,
    stateless: bool,
) {
    let error = match outcome {
        Outcome::Written if out.len() > body => None,
        Outcome::Written => {
            out.truncate(start);
            write_internal(out, id, (name, kind), "wrote no result");
            return;
        }
        Outcome::Invalid(message) if kind == Kind::Tool => {
            out.truncate(body);
            ResultOut::new(out).error_text(&message);
            None
        }
        Outcome::Invalid(message) => Some((jsonrpc::INVALID_PARAMS, message)),
        Outcome::RpcError(error) => Some((error.code, error.message)),
    };
    if let Some((code, message)) = error {
        out.truncate(start);
        jsonrpc::write_error(out, Some(id), code, &message);
        return;
    }
    close_result(out, body, stateless);
}

/// Closes a response whose result, from `body` on, was written.
#[inline]
fn close_result(out: &mut Vec<u8>, body: usize, stateless: bool) {
    if stateless {
        crate::era::stamp_complete(out, body);
    }
    out.push(jsonrpc::RESULT_CLOSE);
}

/// Refuses a call of `tool`: the connection already runs [`MAX_IN_FLIGHT`].
fn write_overloaded(out: &mut Vec<u8>, id: RequestId<'_>, tool: &str) {
    tracing::warn!(tool, "too many requests in flight; call refused");
    jsonrpc::write_error_with_data(
        out,
        Some(id),
        jsonrpc::SERVER_OVERLOADED,
        &format_args!(
            "too many requests in flight on this connection ({MAX_IN_FLIGHT}); wait for answers or cancel some, then call `{tool}` again"
        ),
        OVERLOADED_DATA,
    );
}

fn write_panic(out: &mut Vec<u8>, id: RequestId<'_>, (name, kind): (&str, Kind), message: &str) {
    let noun = kind.noun();
    tracing::error!(name, kind = noun, panic = message, "handler panicked");
    jsonrpc::write_error(
        out,
        Some(id),
        jsonrpc::INTERNAL_ERROR,
        &format_args!("{noun} `{name}` panicked: {message}"),
    );
}

fn write_internal(out: &mut Vec<u8>, id: RequestId<'_>, (name, kind): (&str, Kind), what: &str) {
    let noun = kind.noun();
    tracing::error!(name, kind = noun, what, "handler failed");
    jsonrpc::write_error(
        out,
        Some(id),
        jsonrpc::INTERNAL_ERROR,
        &format_args!("{noun} `{name}` {what}"),
    );
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_owned()
    }
}
