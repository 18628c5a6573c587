//! The floor over Streamable HTTP: the same HTTP/1.1 stack as the runtime
//! (hyper), the bearer token compared, the body read, and the prepared answer
//! sent as `application/json`; no routing headers, era or session checked.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use ide_mcp_runtime::Server;
use ide_mcp_runtime::session::Session;
use std::sync::{LazyLock, Mutex};

use memchr::memmem::Finder;
use tokio::net::TcpListener;

use super::Floor;

/// How the floor recognises an `initialize` request (built once).
static INITIALIZE: LazyLock<Finder<'static>> =
    LazyLock::new(|| Finder::new(br#""method":"initialize""#));

/// The session id the floor hands out at `initialize` (never checked).
const SESSION: &str = "00000000-0000-0000-0000-000000000000";

pub(crate) async fn serve(server: Server, port: u16, token: String) -> std::io::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let bearer: Arc<[u8]> = format!("Bearer {token}").into_bytes().into();
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        // One floor per connection, past the handshake: requests of a
        // session and stateless ones alike find their answer.
        let floor = Arc::new(Mutex::new(Floor::new(
            ide_mcp_benches::synth::initialized_session(server.clone()),
        )));
        let (server, bearer) = (server.clone(), Arc::clone(&bearer));
        let service = service_fn(move |request: Request<Incoming>| {
            let (floor, server, bearer) = (Arc::clone(&floor), server.clone(), Arc::clone(&bearer));
            async move { Ok::<_, Infallible>(answer(request, &floor, &server, &bearer).await) }
        });
        tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
    }
}

async fn answer(
    request: Request<Incoming>,
    floor: &Mutex<Floor>,
    server: &Server,
    bearer: &[u8],
) -> Response<Full<Bytes>> {
    let authorized = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .is_some_and(|v| v.as_bytes() == bearer);
    let Ok(body) = request.into_body().collect().await else {
        return status(StatusCode::BAD_REQUEST);
    };
    if !authorized {
        return status(StatusCode::UNAUTHORIZED);
    }
    let body = body.to_bytes();
    let mut out = Vec::new();
    if INITIALIZE.find(&body).is_some() {
        // Once per run: answered by a fresh session, with a session id.
        Session::new(server.clone()).handle(&body, &mut out);
        let mut response = json(out);
        response.headers_mut().insert(
            "mcp-session-id",
            hyper::header::HeaderValue::from_static(SESSION),
        );
        return response;
    }
    if floor
        .lock()
        .expect("no panics while held")
        .answer(&body, &mut out)
    {
        json(out)
    } else {
        status(StatusCode::ACCEPTED)
    }
}

fn json(body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}
