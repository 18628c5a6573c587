//! Admission by authentication, through a real listener with raw sockets:
//! connections that have not shown the token never keep a token holder out,
//! hundreds of token holders are served at once, and every descriptor is
//! released when they go.
//!
//! Each test prints its figures (connections held, clients served, time to
//! admit a token holder, descriptors before and after); RELIABILITY.md
//! records them.

mod support;

use std::time::{Duration, Instant};

use ide_mcp_runtime::WsOptions;
use support::{
    INIT, INITIALIZED, WAIT, assert_alive, call, connect_to, initialized, json, ping, read_server,
    recv, send, serve,
};
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;

/// The descriptors of this process that are TCP sockets on `port`, either
/// end (the listener, the server's and the clients' ends): other tests in
/// this binary run at the same time, so counting every descriptor would
/// count theirs too.
fn fds_on(port: u16) -> usize {
    let mut inodes = std::collections::HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let port_of = |addr: &str| {
                addr.rsplit_once(':')
                    .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
            };
            if port_of(fields[1]) == Some(port) || port_of(fields[2]) == Some(port) {
                inodes.insert(format!("socket:[{}]", fields[9]));
            }
        }
    }
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter(|link| inodes.contains(link.to_string_lossy().as_ref()))
        .count()
}

/// Waits until at most `wanted` descriptors are open on `port` (the server
/// closes its ends asynchronously); returns how many remain.
async fn fds_settle_to(port: u16, wanted: usize) -> usize {
    let deadline = Instant::now() + WAIT;
    loop {
        let now = fds_on(port);
        if now <= wanted || Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the server has closed `stream`.
async fn wait_closed(stream: &TcpStream, what: &str) {
    let deadline = Instant::now() + WAIT;
    while still_open(stream) {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether the server still holds `stream` open: nothing to read yet.
fn still_open(stream: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(stream.try_read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// `count` connections that never authenticate: every third sends nothing,
/// the others half an upgrade request (head unfinished) or a whole request
/// head without its final blank line.
async fn unauthenticated(port: u16, count: usize) -> Vec<TcpStream> {
    let mut held = Vec::with_capacity(count);
    for i in 0..count {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        match i % 3 {
            0 => {}
            1 => stream
                .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpg")
                .await
                .unwrap(),
            _ => stream
                .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n")
                .await
                .unwrap(),
        }
        held.push(stream);
    }
    held
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_holders_are_served_at_once_while_500_unauthenticated_connections_are_held() {
    const HELD: usize = 500;
    const CLIENTS: usize = 200;
    const PIPELINED: u64 = 16;
    let server = read_server();
    let (handle, dir) = serve(
        &server,
        WsOptions {
            // Long enough that no held connection times out during the test:
            // the token holders must get in without waiting for that.
            handshake_timeout: Duration::from_mins(1),
            ..WsOptions::default()
        },
    )
    .await;
    let port = handle.port();
    let token = handle.auth_token().to_owned();
    let before = fds_on(port);
    assert_eq!(before, 1, "the listener");
    // The baseline: a token holder on an idle server.
    let started = Instant::now();
    drop(connect_to(port, &token).await);
    let idle_admission = started.elapsed();
    let held = unauthenticated(port, HELD).await;
    // Both ends of every held connection are open in this process.
    let deadline = Instant::now() + WAIT;
    while fds_on(port) < before + 2 * HELD {
        assert!(Instant::now() < deadline, "the server did not accept them");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // One token holder alone, then 200 at once, each pipelining requests.
    let started = Instant::now();
    let mut first = connect_to(port, &token).await;
    let first_admission = started.elapsed();
    send(&mut first, INIT).await;
    recv(&mut first).await;
    send(&mut first, INITIALIZED).await;
    assert_alive(&mut first, 1).await;

    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let token = token.clone();
            tokio::spawn(async move {
                let started = Instant::now();
                let mut client = connect_to(port, &token).await;
                let admitted = started.elapsed();
                send(&mut client, INIT).await;
                recv(&mut client).await;
                send(&mut client, INITIALIZED).await;
                for id in 1..=PIPELINED {
                    let request = if id % 2 == 0 {
                        ping(id)
                    } else {
                        call(id, "getWorkspaceFolders", "{}")
                    };
                    send(&mut client, &request).await;
                }
                let mut answered = Vec::new();
                for _ in 1..=PIPELINED {
                    answered.push(json(&recv(&mut client).await)["id"].as_u64().unwrap());
                }
                answered.sort_unstable();
                assert_eq!(answered, (1..=PIPELINED).collect::<Vec<_>>());
                (admitted, client)
            })
        })
        .collect();
    let mut admissions = Vec::new();
    let mut connected = Vec::new();
    for task in clients {
        let (admitted, client) = tokio::time::timeout(WAIT, task).await.unwrap().unwrap();
        admissions.push(admitted);
        connected.push(client);
    }
    admissions.sort_unstable();
    let open_while_served = fds_on(port);

    // None of the held connections was dropped or answered meanwhile.
    assert!(held.iter().all(still_open), "a held connection was closed");

    drop(held);
    drop(connected);
    drop(first);
    handle.shutdown().await;
    drop(dir);
    let after = fds_settle_to(port, 0).await;
    eprintln!(
        "admission: a token holder admitted in {idle_admission:?} on an idle server; \
         {HELD} unauthenticated held; then one admitted in {first_admission:?}; \
         {CLIENTS} token holders x {PIPELINED} pipelined requests all answered, admitted in \
         median {:?}, max {:?}; descriptors before {before}, while serving {open_while_served}, after {after}",
        admissions[CLIENTS / 2],
        admissions[CLIENTS - 1],
    );
    assert_eq!(after, 0, "every descriptor is released, the listener's too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oldest_unauthenticated_connection_makes_room_for_a_new_one() {
    let server = read_server();
    let (handle, _dir) = serve(
        &server,
        WsOptions {
            max_unauthenticated: 8,
            handshake_timeout: Duration::from_mins(1),
            ..WsOptions::default()
        },
    )
    .await;
    let port = handle.port();
    let mut held = unauthenticated(port, 8).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(held.iter().all(still_open));

    // A ninth: the first (the oldest) is dropped, the others stay.
    held.extend(unauthenticated(port, 1).await);
    let oldest = held.remove(0);
    wait_closed(&oldest, "the oldest was not dropped").await;
    assert!(held.iter().all(still_open), "only the oldest goes");

    // A token holder gets in though the pool is full: it takes the place of
    // the next oldest, then leaves the pool for an authenticated place.
    let mut client = initialized(&handle).await;
    assert_alive(&mut client, 1).await;
    wait_closed(&held[0], "the next oldest made room").await;
    assert!(held[1..].iter().all(still_open));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unauthenticated_connection_is_closed_at_its_deadline_and_a_refusal_is_answered() {
    let server = read_server();
    let (handle, _dir) = serve(
        &server,
        WsOptions {
            handshake_timeout: Duration::from_millis(200),
            ..WsOptions::default()
        },
    )
    .await;
    let port = handle.port();
    for stream in &unauthenticated(port, 6).await {
        wait_closed(stream, "not closed at the deadline").await;
    }
    // A request that did arrive in time but is refused gets its answer.
    let (response, closed) = support::raw_exchange(
        port,
        format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes(),
    )
    .await;
    assert!(closed);
    assert!(response.starts_with(b"HTTP/1.1 426 Upgrade Required\r\n"));
}
