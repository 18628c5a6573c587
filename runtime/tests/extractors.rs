//! Per-request extractors through a transport: progress notifications before
//! the result, the request id, cancellation reaching a running tool.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ide_mcp_runtime::{
    CancellationToken, MemoryClient, Progress, Registry, RequestId, Server, mcp_tool, tools,
};

/// What `waitForCancel` went through: started, then saw its cancellation.
#[derive(Default)]
struct Seen {
    started: AtomicBool,
    cancelled: AtomicBool,
}

/// Counts up to `steps`, reporting each step as progress.
#[mcp_tool]
async fn count_up(progress: Progress, steps: u32) -> u32 {
    for step in 1..=steps {
        progress.report(f64::from(step), Some(f64::from(steps)), Some("counting"));
        tokio::task::yield_now().await;
    }
    steps
}

/// Answers with the id of its request.
#[mcp_tool]
fn whoami(id: RequestId<'_>) -> String {
    id.as_json().to_owned()
}

/// Waits (at most a minute: the bound of a hang) until the call is cancelled.
#[mcp_tool(blocking)]
fn wait_for_cancel(cancel: CancellationToken, seen: &Seen) -> bool {
    seen.started.store(true, Ordering::SeqCst);
    let start = Instant::now();
    while !cancel.is_cancelled() && start.elapsed() < Duration::from_mins(1) {
        std::thread::sleep(Duration::from_millis(2));
    }
    seen.cancelled
        .store(cancel.is_cancelled(), Ordering::SeqCst);
    cancel.is_cancelled()
}

async fn client(seen: Arc<Seen>) -> MemoryClient {
    let ours = tools()
        .iter()
        .filter(|tool| tool.location.file.ends_with("extractors.rs"));
    let registry = Registry::from_tools(ours).expect("the tools are valid");
    let server = Server::builder("t", "0")
        .registry(Arc::new(registry))
        .state_arc(seen)
        .build()
        .expect("the server builds");
    let mut client = server.connect_memory();
    client.initialize().await;
    client
}

#[tokio::test]
async fn progress_is_sent_for_the_token_before_the_result() {
    let mut client = client(Arc::default()).await;
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"countUp","arguments":{"steps":2},"_meta":{"progressToken":"tok"}}}"#)
        .await;
    let mut received = Vec::new();
    while received.len() < 3 {
        received.push(client.recv().await.expect("the connection is open"));
    }
    assert_eq!(
        received,
        [
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1.0,"total":2.0,"message":"counting"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":2.0,"total":2.0,"message":"counting"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"2"}]}}"#,
        ]
    );
    // Without a token, no progress is sent.
    assert_eq!(
        client
            .request(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"countUp","arguments":{"steps":2}}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"2"}]}}"#
    );
}

#[tokio::test]
async fn the_request_id_is_extracted_as_sent() {
    let mut client = client(Arc::default()).await;
    assert_eq!(
        client
            .request(
                r#"{"jsonrpc":"2.0","id":"a-7","method":"tools/call","params":{"name":"whoami"}}"#
            )
            .await,
        r#"{"jsonrpc":"2.0","id":"a-7","result":{"content":[{"type":"text","text":"\"\\\"a-7\\\"\""}]}}"#
    );
}

#[tokio::test]
async fn a_cancelled_call_sees_its_token_cancelled() {
    let seen = Arc::new(Seen::default());
    let mut client = client(Arc::clone(&seen)).await;
    client
        .send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"waitForCancel"}}"#)
        .await;
    // Cancelled before it starts, a blocking call never runs: wait until it does.
    wait_until(&seen.started, "the tool never started").await;
    client
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#)
        .await;
    wait_until(&seen.cancelled, "the tool never saw its cancellation").await;
    // A cancelled request is not answered; the next one is.
    assert_eq!(
        client
            .request(r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":6,"result":{}}"#
    );
}

/// Waits (at most a minute: the bound of a hang) until `flag` is set.
async fn wait_until(flag: &AtomicBool, failure: &str) {
    let start = Instant::now();
    while !flag.load(Ordering::SeqCst) {
        assert!(start.elapsed() < Duration::from_mins(1), "{failure}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}
