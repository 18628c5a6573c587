//! What the stand-ins of the models' APIs share (`model`: Anthropic's,
//! `gemini`: Gemini's, `copilot`: OpenAI's chat completions): an HTTP
//! server on 127.0.0.1, port 0, on a thread and runtime of its own (the
//! test's waits block theirs), that records every request and answers it
//! as its API's module says. Nothing leaves the machine.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;

/// One request a stand-in received; `body` is `null` when it was not JSON.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) method: String,
    pub(crate) path: String,
    /// Names in lower case, in the order they came.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Value,
}

impl Recorded {
    /// The first value of the header `name` (lower case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, value)| value.as_str())
    }
}

/// An answer of a stand-in.
pub(crate) type Answer = Response<Full<Bytes>>;

type Answering = Arc<dyn Fn(&Recorded) -> Answer + Send + Sync>;

/// A running stand-in; dropping it stops it.
pub(crate) struct StandIn {
    pub(crate) port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StandIn {
    /// Listens on 127.0.0.1, port 0, answering each request with `answer`.
    pub(crate) fn start(answer: impl Fn(&Recorded) -> Answer + Send + Sync + 'static) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let state: (Answering, _) = (Arc::new(answer), Arc::clone(&requests));
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            // Dropping the runtime afterwards drops every open connection.
            runtime.block_on(serve(listener, state, stopped));
        });
        Self {
            port,
            requests,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The requests so far, in the order they came.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

type State = (Answering, Arc<Mutex<Vec<Recorded>>>);

async fn serve(
    listener: std::net::TcpListener,
    state: State,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
    loop {
        let stream = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
        };
        let state = state.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| answer(request, state.clone()));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn answer(
    request: Request<Incoming>,
    (answering, requests): State,
) -> Result<Answer, Infallible> {
    let method = request.method().to_string();
    let path = request.uri().path().to_owned();
    let headers = request
        .headers()
        .iter()
        .map(|(name, value)| {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            (name.as_str().to_owned(), value)
        })
        .collect();
    let bytes = request
        .into_body()
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let recorded = Recorded {
        method,
        path,
        headers,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    };
    requests.lock().unwrap().push(recorded.clone());
    Ok(answering(&recorded))
}

/// An answer of `status` with `body` of `content_type`.
pub(crate) fn respond(status: StatusCode, content_type: &'static str, body: String) -> Answer {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// An answer of `status` with `value` as JSON.
pub(crate) fn respond_json(status: StatusCode, value: &Value) -> Answer {
    respond(status, "application/json", value.to_string())
}
