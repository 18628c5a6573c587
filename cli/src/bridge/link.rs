//! One connection to an IDE, as the `claude` CLI makes it: the WebSocket on
//! `ws://127.0.0.1:<port>/` with the lockfile's token, the MCP handshake,
//! then requests numbered by us. Answers go back to whoever asked, the
//! IDE's progress to the caller whose token it names, and a request given
//! up on is cancelled at the IDE.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use ide_mcp_lsp::outgoing::{Gone, Outgoing};
use ide_mcp_runtime::transport::gate::AUTH_HEADER;
use ide_mcp_runtime::{Notifier, Peer};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::http::HeaderValue;

/// The protocol version the bridge asks the IDE for: the CLI's.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// How long connecting, the handshake and the first `tools/list` may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// How many messages may wait to be written to the IDE. Calls are bounded
/// by the runtime's in-flight limit (64), each sending one request and at
/// most one cancellation; the rest is room.
const OUTGOING_QUEUE: usize = 256;

/// What the IDE answered.
#[derive(Debug)]
pub enum Answer {
    /// The request's `result`.
    Result(Box<RawValue>),
    /// The request's `error` object.
    Error(Box<RawValue>),
}

/// A live connection to one IDE; cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Link {
    port: u16,
    outgoing: mpsc::Sender<Message>,
    shared: Arc<Shared>,
    /// The keys of the `capabilities` the IDE answered `initialize` with.
    capabilities: Vec<String>,
}

#[derive(Debug)]
struct Shared {
    /// The requests waiting for the IDE's answers, each with the caller's
    /// progress token (passed to the IDE unchanged) and where the IDE's
    /// progress for it goes; closed when the reader ends (the IDE closed
    /// the connection, or it failed).
    pending: Outgoing<Answer, Option<(Value, Peer)>>,
    /// Where the IDE's `list_changed` of resources and prompts go: the
    /// bridge's own clients.
    clients: Notifier,
}

impl Link {
    /// Connects to the IDE on `port` with `token` and runs the handshake;
    /// the IDE's `notifications/resources/list_changed` and
    /// `notifications/prompts/list_changed` are passed on, unchanged, to
    /// `clients`. Not bounded in time: the caller bounds it.
    pub async fn connect(port: u16, token: &str, clients: Notifier) -> io::Result<Self> {
        let mut request = format!("ws://127.0.0.1:{port}/")
            .into_client_request()
            .map_err(io::Error::other)?;
        let token = HeaderValue::from_str(token)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "the token is no header"))?;
        request.headers_mut().insert(AUTH_HEADER, token);
        let (ws, _) = tokio_tungstenite::connect_async(request)
            .await
            .map_err(io::Error::other)?;
        let (mut sink, mut stream) = ws.split();
        let (outgoing, mut queued) = mpsc::channel::<Message>(OUTGOING_QUEUE);
        tokio::spawn(async move {
            while let Some(message) = queued.recv().await {
                if sink.send(message).await.is_err() {
                    return;
                }
            }
            // Every sender is gone: the link was dropped.
            let _ = sink.close().await;
        });
        let shared = Arc::new(Shared {
            // The handshake's `initialize` is request 0, as the CLI numbers it.
            pending: Outgoing::starting_at(0),
            clients,
        });
        let reader = Arc::clone(&shared);
        // Weak: the link's own sender alone keeps the writer, and so the
        // connection, open.
        let answers = outgoing.downgrade();
        tokio::spawn(async move {
            while let Some(Ok(message)) = stream.next().await {
                match message {
                    Message::Text(text) => reader.received(text.as_str(), &answers),
                    Message::Close(_) => break,
                    _ => {}
                }
            }
            // Every caller still waiting learns that no answer will come.
            reader.pending.close();
        });
        let mut link = Self {
            port,
            outgoing,
            shared,
            capabilities: Vec::new(),
        };
        link.capabilities = link.handshake().await?;
        Ok(link)
    }

    /// Runs the handshake; the keys of the IDE's capabilities.
    async fn handshake(&self) -> io::Result<Vec<String>> {
        #[derive(Deserialize)]
        struct Initialized {
            #[serde(default)]
            capabilities: serde_json::Map<String, Value>,
        }
        let params = serde_json::json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "ide-mcp-bridge", "version": env!("CARGO_PKG_VERSION")},
        });
        let capabilities = match self.request("initialize", &params.to_string(), None).await {
            Ok(Answer::Result(result)) => serde_json::from_str::<Initialized>(result.get())
                .map(|initialized| initialized.capabilities.into_iter().map(|(key, _)| key))
                .map_err(|error| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("the IDE's `initialize` result is not one: {error}"),
                    )
                })?
                .collect(),
            Ok(Answer::Error(error)) => {
                return Err(io::Error::other(format!(
                    "the IDE refused `initialize`: {error}"
                )));
            }
            Err(Gone) => return Err(closed_early()),
        };
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        self.outgoing
            .send(Message::text(initialized))
            .await
            .map_err(|_| closed_early())?;
        Ok(capabilities)
    }

    /// Whether the IDE said it has `capability` (`"resources"`, …) when it
    /// answered `initialize`.
    pub fn has_capability(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|key| key == capability)
    }

    /// The IDE's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether the IDE is still connected.
    pub fn is_alive(&self) -> bool {
        !self.shared.pending.is_closed()
    }

    /// The IDE's `tools/list` result.
    pub async fn list_tools(&self) -> io::Result<Box<RawValue>> {
        match self.request("tools/list", "{}", None).await {
            Ok(Answer::Result(result)) => Ok(result),
            Ok(Answer::Error(error)) => Err(io::Error::other(format!(
                "the IDE refused `tools/list`: {error}"
            ))),
            Err(Gone) => Err(closed_early()),
        }
    }

    /// Sends `method` with `params` (a JSON object's text) under an id of
    /// ours and waits for the answer. `progress` routes the IDE's
    /// `notifications/progress` for that token to that peer. Dropping the
    /// future before the answer cancels the request at the IDE.
    pub async fn request(
        &self,
        method: &str,
        params: &str,
        progress: Option<(Value, Peer)>,
    ) -> Result<Answer, Gone> {
        let mut lease = self.shared.pending.lease(progress, |id| self.cancel(id))?;
        let id = lease.id();
        let method = serde_json::to_string(method).expect("a string serializes");
        let message =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":{method},"params":{params}}}"#);
        if self.outgoing.send(Message::text(message)).await.is_err() {
            lease.withdraw();
            return Err(Gone);
        }
        lease.answer().await
    }

    /// Tells the IDE that the caller gave up on request `id` (the client
    /// cancelled the call, or left).
    fn cancel(&self, id: u64) {
        tracing::debug!(id, port = self.port, "request cancelled at the IDE");
        let cancel = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"the bridge's client cancelled the request"}}}}"#
        );
        if self.outgoing.try_send(Message::text(cancel)).is_err() {
            tracing::debug!(id, "the cancellation could not be queued");
        }
    }
}

fn closed_early() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the IDE closed the connection during the handshake",
    )
}

/// What the reader reads of each message from the IDE.
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<Box<RawValue>>,
}

impl Shared {
    /// Handles one message from the IDE.
    fn received(&self, text: &str, outgoing: &mpsc::WeakSender<Message>) {
        let Ok(message) = serde_json::from_str::<Incoming<'_>>(text) else {
            tracing::debug!(text, "a message from the IDE that is not JSON-RPC; ignored");
            return;
        };
        match (message.method, message.id) {
            (Some("notifications/progress"), None) => self.progress(text, message.params),
            (
                Some(
                    method @ ("notifications/resources/list_changed"
                    | "notifications/prompts/list_changed"),
                ),
                None,
            ) => {
                let sent = self.clients.send_bytes(&Arc::from(text.as_bytes()));
                tracing::debug!(method, clients = sent, "the IDE's list changed: passed on");
            }
            (Some(method), None) => tracing::debug!(method, "IDE notification ignored"),
            // The IDE asking us: nothing is served here but `ping`.
            (Some(method), Some(id)) => {
                let answer = if method == "ping" {
                    format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, id.get())
                } else {
                    let method = serde_json::to_string(method).expect("a string serializes");
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32601,"message":"the bridge serves no {method}"}}}}"#,
                        id.get()
                    )
                };
                if let Some(outgoing) = outgoing.upgrade() {
                    let _ = outgoing.try_send(Message::text(answer));
                }
            }
            (None, Some(id)) => {
                let Ok(id) = id.get().parse::<u64>() else {
                    return tracing::debug!(id = id.get(), "an answer to no request of ours");
                };
                let answer = match (message.result, message.error) {
                    (Some(result), None) => Answer::Result(result),
                    (None, Some(error)) if error.get().starts_with('{') => Answer::Error(error),
                    _ => return tracing::debug!(id, "an answer with neither result nor error"),
                };
                if !self.pending.answer(id, answer) {
                    tracing::debug!(id, "an answer to a request given up on");
                }
            }
            (None, None) => tracing::debug!("a message from the IDE with no method and no id"),
        }
    }

    /// Passes a progress notification, unchanged, to the caller whose token it names.
    fn progress(&self, text: &str, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Params {
            progress_token: Value,
        }
        let Some(Params { progress_token }) =
            params.and_then(|params| serde_json::from_str(params.get()).ok())
        else {
            return;
        };
        let peer = self.pending.find_map(|progress| {
            let (token, peer) = progress.as_ref()?;
            (*token == progress_token).then(|| peer.clone())
        });
        if let Some(peer) = peer {
            peer.send_bytes(Arc::from(text.as_bytes()));
        } else {
            tracing::debug!(%progress_token, "progress for no running call");
        }
    }
}
