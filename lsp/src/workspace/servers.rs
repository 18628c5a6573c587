//! Requests the IDE itself sends toward a language server (the live LSP
//! tools: references, definitions, …), through the proxy of a stream whose
//! server has the document, and the routing of the server's answers back.
//!
//! Each observer's stream gets a bounded queue of messages for the proxy to
//! write to its server (the host sends them down its link as
//! [`Tag::ToServer`](crate::host::link::Tag::ToServer)). A request gets the
//! id `"ide-mcp/s/<n>"`, a string under a prefix of ours: editors number
//! their requests or use ids of their own, never ours. The proxy's observer
//! keeps the server's answer from the editor
//! ([`ServerVerdict::Drop`](crate::ServerVerdict::Drop)); the host's copy of
//! it resolves the waiting call ([`ServerRequests::resolve`]). A call that
//! times out or is dropped (the MCP call cancelled) sends the server
//! `$/cancelRequest`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ide_mcp_tools::LspFeature;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::stream::StreamId;
use crate::framing::Message;
use crate::live::provider;
pub use crate::live::{SERVER_REQUEST_TIMEOUT, ServerFacts, ServerRequestError};
use crate::outgoing::Outgoing;
use crate::sync::lock;
use ide_mcp_tools::position::PositionEncoding;

/// The prefix of the ids of requests sent toward a server.
pub const SERVER_REQUEST_PREFIX: &str = "ide-mcp/s/";

/// How many messages toward the server may wait in one stream's queue.
pub const SERVER_QUEUE_CAPACITY: usize = 16;

/// What a stream's server said of itself, and the languages of the
/// documents its editor opened on it.
#[derive(Debug)]
struct Route {
    stream: StreamId,
    queue: mpsc::Sender<Message>,
    /// The `capabilities` of its `initialize` answer (`Null` until then).
    capabilities: Value,
    /// The methods it registered dynamically (`client/registerCapability`),
    /// with their `registerOptions` (`true` without).
    registered: HashMap<String, Value>,
    name: Option<String>,
    encoding: PositionEncoding,
    /// A file extension → the `languageId` the editor opened such files as.
    languages: HashMap<String, String>,
}

impl Route {
    fn provides(&self, feature: LspFeature) -> bool {
        provider(&self.capabilities, feature).is_some()
            || self.registered.contains_key(feature.method())
    }

    /// The capabilities as the server has them now: those it answered
    /// `initialize` with, and those it registered since (their options).
    fn current_capabilities(&self) -> Value {
        let mut capabilities = match &self.capabilities {
            Value::Object(map) => map.clone(),
            _ => serde_json::Map::new(),
        };
        for feature in LspFeature::ALL {
            if provider(&self.capabilities, feature).is_none()
                && let Some(options) = self.registered.get(feature.method())
            {
                capabilities.insert(feature.capability().to_owned(), options.clone());
            }
        }
        Value::Object(capabilities)
    }
}

type Answer = Result<Value, String>;

/// The streams requests toward servers can go out on, and those awaiting
/// answers.
#[derive(Debug, Default)]
pub(crate) struct ServerRequests {
    routes: Mutex<Vec<Route>>,
    pending: Outgoing<Answer>,
    /// The documents the IDE opened on a server itself, with how many
    /// calls use each.
    opened: Mutex<HashMap<(StreamId, PathBuf), usize>>,
}

/// Where a request toward a server goes: one stream's queue.
#[derive(Clone, Debug)]
pub struct ServerRoute {
    pub(crate) stream: StreamId,
    queue: mpsc::Sender<Message>,
    /// What the server said of itself (its capabilities with those it
    /// registered since).
    pub server: ServerFacts,
    /// The `languageId` its editor opens files of this extension as.
    pub language_id: Option<String>,
}

impl ServerRoute {
    /// Sends notification `method` with `params` to the server.
    pub(crate) fn notify(&self, method: &str, params: &Value) -> bool {
        let body = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.queue
            .try_send(Message::from_body(body.to_string()))
            .is_ok()
    }
}

/// Why no route was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoRoute {
    /// No stream's server handles the file (none has a document of its
    /// language open, or ever had).
    NoServer,
    /// The server for the file does not provide the feature; its name.
    Unsupported(Option<String>),
}

fn extension(path: &Path) -> Option<String> {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
}

/// The body of a request toward a server.
pub(crate) fn request_body(n: u64, method: &str, params: &Value) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": format!("{SERVER_REQUEST_PREFIX}{n}"),
        "method": method,
        "params": params,
    })
    .to_string()
}

/// The number of a request of ours by its id; `None` when the id is not
/// one of ours.
pub(crate) fn our_request(id: &str) -> Option<u64> {
    id.strip_prefix(SERVER_REQUEST_PREFIX)?.parse().ok()
}

impl ServerRequests {
    /// A queue toward the server of `stream`.
    pub(crate) fn register(&self, stream: StreamId) -> mpsc::Receiver<Message> {
        let (queue, rx) = mpsc::channel(SERVER_QUEUE_CAPACITY);
        lock(&self.routes).push(Route {
            stream,
            queue,
            capabilities: Value::Null,
            registered: HashMap::new(),
            name: None,
            encoding: PositionEncoding::default(),
            languages: HashMap::new(),
        });
        rx
    }

    pub(crate) fn unregister(&self, stream: StreamId) {
        lock(&self.routes).retain(|r| r.stream != stream);
        lock(&self.opened).retain(|(s, _), _| *s != stream);
    }

    fn with_route(&self, stream: StreamId, f: impl FnOnce(&mut Route)) {
        if let Some(route) = lock(&self.routes).iter_mut().find(|r| r.stream == stream) {
            f(route);
        }
    }

    /// The server of `stream` answered `initialize`.
    pub(crate) fn initialized(
        &self,
        stream: StreamId,
        capabilities: &Value,
        name: Option<String>,
        encoding: PositionEncoding,
    ) {
        self.with_route(stream, |route| {
            route.capabilities = capabilities.clone();
            route.name = name;
            route.encoding = encoding;
        });
    }

    /// The server of `stream` registered `method` dynamically, with
    /// `options` (its `registerOptions`, `true` without).
    pub(crate) fn registered(&self, stream: StreamId, method: &str, options: &Value) {
        self.with_route(stream, |route| {
            route.registered.insert(method.to_owned(), options.clone());
        });
    }

    /// The editor of `stream` opened `path` as `language_id`.
    pub(crate) fn opened_as(&self, stream: StreamId, path: &Path, language_id: &str) {
        let Some(extension) = extension(path) else {
            return;
        };
        self.with_route(stream, |route| {
            route
                .languages
                .entry(extension)
                .or_insert_with(|| language_id.to_owned());
        });
    }

    /// Where a request for `feature` on `path` goes: the first of
    /// `openers` (the streams whose server has it open), else the first
    /// stream whose editor opened files of its extension; that server must
    /// provide `feature`.
    pub(crate) fn route_for(
        &self,
        path: &Path,
        openers: &[StreamId],
        feature: LspFeature,
    ) -> Result<ServerRoute, NoRoute> {
        let routes = lock(&self.routes);
        let extension = extension(path);
        let of_language = |r: &&Route| {
            extension
                .as_ref()
                .is_some_and(|e| r.languages.contains_key(e))
        };
        let candidates: Vec<&Route> = openers
            .iter()
            .filter_map(|&s| routes.iter().find(|r| r.stream == s))
            .chain(routes.iter().filter(of_language))
            .filter(|r| !r.queue.is_closed())
            .collect();
        let Some(first) = candidates.first() else {
            return Err(NoRoute::NoServer);
        };
        let route = candidates
            .iter()
            .find(|r| r.provides(feature))
            .ok_or_else(|| NoRoute::Unsupported(first.name.clone()))?;
        Ok(Self::snapshot(route, extension.as_deref()))
    }

    /// Every stream whose server provides `feature` (workspace symbols).
    pub(crate) fn routes_providing(&self, feature: LspFeature) -> Vec<ServerRoute> {
        lock(&self.routes)
            .iter()
            .filter(|r| r.provides(feature) && !r.queue.is_closed())
            .map(|r| Self::snapshot(r, None))
            .collect()
    }

    fn snapshot(route: &Route, extension: Option<&str>) -> ServerRoute {
        ServerRoute {
            stream: route.stream,
            queue: route.queue.clone(),
            server: ServerFacts {
                name: route.name.clone(),
                encoding: route.encoding,
                capabilities: route.current_capabilities(),
            },
            language_id: extension.and_then(|e| route.languages.get(e).cloned()),
        }
    }

    /// Sends request `method` with `params` to `to`'s server and waits for
    /// its `result`; on time-out, or when the future is dropped, the server
    /// gets `$/cancelRequest`.
    pub(crate) async fn send(
        &self,
        to: &ServerRoute,
        method: &str,
        params: &Value,
    ) -> Result<Value, ServerRequestError> {
        // Dropped unanswered (timed out, or the call cancelled), the
        // request is cancelled at the server.
        let cancel = |n| {
            let cancel = json!({
                "jsonrpc": "2.0",
                "method": "$/cancelRequest",
                "params": {"id": format!("{SERVER_REQUEST_PREFIX}{n}")},
            });
            // A full queue: the server answers in its own time, and the
            // answer is still ours, never the editor's.
            let _ = to.queue.try_send(Message::from_body(cancel.to_string()));
        };
        let Ok(mut lease) = self.pending.lease((), cancel) else {
            return Err(ServerRequestError::NotSent);
        };
        let message = Message::from_body(request_body(lease.id(), method, params));
        if to.queue.try_send(message).is_err() {
            lease.withdraw();
            return Err(ServerRequestError::NotSent);
        }
        match tokio::time::timeout(SERVER_REQUEST_TIMEOUT, lease.answer()).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(message))) => Err(ServerRequestError::Failed(message)),
            Ok(Err(_gone)) => Err(ServerRequestError::NotSent),
            Err(_elapsed) => Err(ServerRequestError::TimedOut),
        }
    }

    /// Counts one more call using `path` opened by the IDE on `stream`'s
    /// server; `true` when it must be opened now (the first).
    pub(crate) fn hold_open(&self, stream: StreamId, path: &Path) -> bool {
        let mut opened = lock(&self.opened);
        let count = opened.entry((stream, path.to_path_buf())).or_insert(0);
        *count += 1;
        *count == 1
    }

    /// One call less uses `path` on `stream`'s server; `true` when it must
    /// be closed now (the last).
    pub(crate) fn release_open(&self, stream: StreamId, path: &Path) -> bool {
        let mut opened = lock(&self.opened);
        let key = (stream, path.to_path_buf());
        match opened.get_mut(&key) {
            Some(count) if *count > 1 => {
                *count -= 1;
                false
            }
            Some(_) => {
                opened.remove(&key);
                true
            }
            None => false,
        }
    }

    /// Routes the server's answer to request `id`; `false` when `id` is
    /// not one of ours (the answer is then the editor's to have).
    pub(crate) fn resolve(&self, id: &str, answer: Answer) -> bool {
        let Some(n) = our_request(id) else {
            return false;
        };
        self.pending.answer(n, answer);
        // Ours even when nobody waits any more: never forwarded.
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn initialized(requests: &ServerRequests, stream: StreamId, caps: &Value, name: &str) {
        requests.initialized(stream, caps, Some(name.into()), PositionEncoding::Utf8);
    }

    #[test]
    fn ids_are_ours_under_the_prefix_only() {
        assert_eq!(our_request("ide-mcp/s/12"), Some(12));
        assert_eq!(our_request("ide-mcp/12"), None, "the editor's requests");
        assert_eq!(our_request("12"), None);
        assert_eq!(our_request("ide-mcp/s/x"), None);
        let body: Value =
            serde_json::from_str(&request_body(7, "textDocument/hover", &json!({}))).unwrap();
        assert_eq!(body["id"], "ide-mcp/s/7");
        let requests = ServerRequests::default();
        assert!(requests.resolve("ide-mcp/s/99", Ok(Value::Null)), "late");
        assert!(!requests.resolve("3", Ok(Value::Null)));
    }

    #[test]
    fn routes_go_to_openers_then_to_the_language_and_need_the_capability() {
        let requests = ServerRequests::default();
        let (a, b) = (StreamId(1), StreamId(2));
        let _qa = requests.register(a);
        let _qb = requests.register(b);
        initialized(&requests, a, &json!({"hoverProvider": true}), "pyright");
        initialized(
            &requests,
            b,
            &json!({"referencesProvider": {}, "definitionProvider": false}),
            "clangd",
        );
        requests.opened_as(b, Path::new("/w/a.c"), "c");
        let path = Path::new("/w/other.C");
        let route = requests
            .route_for(path, &[], LspFeature::References)
            .unwrap();
        assert_eq!((route.stream, route.language_id.as_deref()), (b, Some("c")));
        assert_eq!(
            requests
                .route_for(path, &[], LspFeature::Definition)
                .unwrap_err(),
            NoRoute::Unsupported(Some("clangd".into()))
        );
        assert_eq!(
            requests
                .route_for(Path::new("/w/x.rs"), &[], LspFeature::Hover)
                .unwrap_err(),
            NoRoute::NoServer
        );
        let route = requests
            .route_for(Path::new("/w/x.py"), &[a], LspFeature::Hover)
            .unwrap();
        assert_eq!(route.stream, a);
        requests.registered(
            a,
            "textDocument/references",
            &json!({"documentSelector": null}),
        );
        let route = requests
            .route_for(Path::new("/w/x.py"), &[a], LspFeature::References)
            .unwrap();
        assert_eq!(
            route.server.provider(LspFeature::References),
            Some(&json!({"documentSelector": null}))
        );
        assert_eq!(route.server.provider(LspFeature::Definition), None);
        assert_eq!(
            requests
                .routes_providing(LspFeature::References)
                .iter()
                .map(|r| r.stream)
                .collect::<Vec<_>>(),
            [a, b]
        );
    }

    #[tokio::test]
    async fn answers_resolve_by_id_and_a_dropped_call_cancels() {
        let requests = std::sync::Arc::new(ServerRequests::default());
        let mut queue = requests.register(StreamId(1));
        initialized(&requests, StreamId(1), &json!({"hoverProvider": true}), "s");
        let route = requests.routes_providing(LspFeature::Hover).pop().unwrap();
        let asking = {
            let (requests, route) = (requests.clone(), route.clone());
            tokio::spawn(async move {
                requests
                    .send(&route, "textDocument/hover", &json!({"x": 1}))
                    .await
            })
        };
        let sent: Value = serde_json::from_slice(queue.recv().await.unwrap().body()).unwrap();
        assert_eq!(sent["method"], "textDocument/hover");
        let id = sent["id"].as_str().unwrap();
        assert!(requests.resolve(id, Ok(json!({"contents": "x"}))));
        assert_eq!(asking.await.unwrap(), Ok(json!({"contents": "x"})));
        assert!(
            queue.try_recv().is_err(),
            "an answered request is not cancelled"
        );

        let asking = {
            let (requests, route) = (requests.clone(), route.clone());
            tokio::spawn(async move {
                requests
                    .send(&route, "textDocument/hover", &json!({}))
                    .await
            })
        };
        let sent: Value = serde_json::from_slice(queue.recv().await.unwrap().body()).unwrap();
        asking.abort();
        let cancel: Value = serde_json::from_slice(queue.recv().await.unwrap().body()).unwrap();
        assert_eq!(
            cancel,
            json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": sent["id"]}})
        );
        assert!(requests.pending.is_empty());
    }

    #[test]
    fn documents_opened_by_the_ide_are_counted() {
        let requests = ServerRequests::default();
        let (s, p) = (StreamId(1), Path::new("/w/a.py"));
        assert!(requests.hold_open(s, p));
        assert!(!requests.hold_open(s, p));
        assert!(!requests.release_open(s, p));
        assert!(requests.release_open(s, p));
        assert!(!requests.release_open(s, p));
    }
}
