//! `ide-mcp lsp-proxy` against the built binary, with the echo language
//! server (`lsp-echo`, of test-support) as its peer: transparency, lifecycle, bad
//! input, and one IDE per workspace served by a host that outlives them.

mod common;

use std::io::Read as _;
use std::process::{Command, Stdio};

use common::lsp::{Place, Proxy, exit, initialize, message};
use serde_json::json;

/// A process id no editor has here: the proxies of one test pretend to be
/// started by it.
const FAKE_EDITOR: u32 = 4_000_001;

/// What an editor may write, odd parts included: `Content-Type`, lower-case
/// names, bare `\n` line ends, a body that is not JSON, bytes that are no
/// message at all.
fn editor_session() -> Vec<u8> {
    let mut bytes = Vec::new();
    let open = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file:///w/a%20b.c", "languageId": "c", "version": 1, "text": "int main(void) { return 0; }\n"}}})
    .to_string();
    bytes.extend_from_slice(
        format!(
            "Content-Length: {}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{open}",
            open.len()
        )
        .as_bytes(),
    );
    bytes.extend_from_slice(b"content-length: 9\r\n\r\n{not json");
    bytes.extend_from_slice(b"hello, this is no message\r\n\r\n");
    let change = r#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///w/a%20b.c","version":2},"contentChanges":[{"text":"é\r\n"}]}}"#;
    bytes.extend_from_slice(format!("CONTENT-LENGTH:{}\n\n{change}", change.len()).as_bytes());
    bytes.extend_from_slice(&exit());
    bytes
}

/// What a server may write, odd parts included.
fn server_session() -> Vec<u8> {
    let mut bytes = message(
        &json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
        "params": {"uri": "file:///w/a%20b.c", "diagnostics": []}}),
    );
    bytes.extend_from_slice(b"content-type: x\r\ncontent-length: 3\r\n\r\n[1]");
    bytes.extend_from_slice(b"Content-Length: 4\r\n\r\n\xff\xfe\x00!");
    bytes.extend_from_slice(b"log line a server should not print\n");
    bytes
}

#[test]
fn a_recorded_session_crosses_unchanged_both_ways() {
    let place = Place::new();
    let record = place.dir.path().join("record");
    let play = place.dir.path().join("play");
    std::fs::write(&play, server_session()).unwrap();
    let server = Place::echo(&[
        "--record",
        record.to_str().unwrap(),
        "--play",
        play.to_str().unwrap(),
    ]);
    let mut proxy = place.proxy(&[], &server);
    // Complete messages pass at once; trailing bytes that are no message
    // could start one, so they pass when the stream ends.
    let expected = server_session();
    let tail = b"log line a server should not print\n".len();
    let output = proxy.wait_output_len(expected.len() - tail);
    assert_eq!(output, expected[..output.len()], "server → editor");
    proxy.send(&editor_session());
    assert_eq!(proxy.wait_exit(), Some(0));
    assert_eq!(
        std::fs::read(&record).unwrap(),
        editor_session(),
        "editor → server"
    );
    assert_eq!(
        proxy.output(),
        expected,
        "server → editor, and nothing else"
    );
}

/// Starts a proxy of the fake editor over the echo server and waits for its
/// IDE: returns the proxy and the lockfile's content.
fn serving(place: &Place, extra: &[&str]) -> (Proxy, serde_json::Value) {
    let mut proxy = place.proxy(extra, &Place::echo(&[]));
    proxy.send(&initialize(FAKE_EDITOR, &place.workspace, "Test Editor"));
    let lockfiles = place.wait_lockfiles(&proxy, |found| found.len() == 1);
    let content = lockfiles[0].1.clone();
    (proxy, content)
}

#[test]
fn exit_ends_the_proxy_with_the_server_s_status_and_removes_every_file() {
    let place = Place::new();
    let (mut proxy, lockfile) = serving(&place, &[]);
    // The IDE is the host's, a process of its own.
    let hosts = place.host_pids();
    assert_eq!(hosts.len(), 1, "{hosts:?}");
    assert_eq!(lockfile["pid"], json!(hosts[0]));
    assert_ne!(lockfile["pid"], json!(proxy.pid()));
    // In a process group of its own: an editor that kills its server's
    // group (eglot) leaves it alone.
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", hosts[0])).unwrap();
    let group = stat.rsplit(')').next().unwrap().split_whitespace().nth(2);
    assert_eq!(group, Some(hosts[0].to_string().as_str()), "{stat}");
    assert_eq!(lockfile["ideName"], "Test Editor");
    assert_eq!(
        lockfile["workspaceFolders"],
        json!([place.workspace.to_str().unwrap()])
    );
    assert_eq!(lockfile["transport"], "ws");
    proxy.send(&message(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
    ));
    proxy.send(&exit());
    assert_eq!(proxy.wait_exit(), Some(0));
    // No linger: the host goes with the last proxy.
    place.wait_all_gone(common::lsp::WAIT);
    // The echo answered `initialize` and `shutdown` with their params.
    let output = String::from_utf8(proxy.output()).unwrap();
    assert!(output.contains(r#""id":1,"result":{"#), "{output}");
    assert!(
        output.ends_with(r#"{"jsonrpc":"2.0","id":2,"result":null}"#),
        "{output}"
    );
}

#[test]
fn flags_name_the_ide_and_its_folders() {
    let place = Place::new();
    let other = place.dir.path().join("other");
    let (mut proxy, lockfile) = serving(
        &place,
        &[
            "--ide-name",
            "Helix",
            "--workspace",
            other.to_str().unwrap(),
        ],
    );
    assert_eq!(lockfile["ideName"], "Helix");
    assert_eq!(
        lockfile["workspaceFolders"],
        json!([other.to_str().unwrap()])
    );
    proxy.send(&exit());
    assert_eq!(proxy.wait_exit(), Some(0));
}

#[test]
fn the_editor_gone_without_exit_ends_the_server_too() {
    let place = Place::new();
    // A server that does not even read its input: killed after the grace.
    let mut proxy = place.proxy(&[], &["sleep", "60"]);
    proxy.send(&initialize(FAKE_EDITOR, &place.workspace, "Test Editor"));
    place.wait_lockfiles(&proxy, |found| found.len() == 1);
    // The server is ended before the proxy exits; the host the proxy
    // started (its child too) ends once its last proxy is gone, a moment
    // after.
    let start = std::time::Instant::now();
    let hosts = loop {
        let hosts = place.host_pids();
        if !hosts.is_empty() {
            break hosts;
        }
        assert!(start.elapsed() < common::lsp::WAIT, "no host");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let server: Vec<u32> = common::children(proxy.pid())
        .into_iter()
        .filter(|pid| !hosts.contains(pid))
        .collect();
    proxy.close_stdin();
    assert_eq!(proxy.wait_exit(), Some(128 + 9));
    assert!(server.iter().all(|&pid| common::is_dead(pid)), "{server:?}");
    place.wait_all_gone(common::lsp::WAIT);
}

#[test]
fn a_dying_server_ends_the_proxy_with_its_status() {
    let place = Place::new();
    let mut proxy = place.proxy(&[], &["sh", "-c", "sleep 2; exit 7"]);
    proxy.send(&initialize(FAKE_EDITOR, &place.workspace, "Test Editor"));
    place.wait_lockfiles(&proxy, |found| found.len() == 1);
    assert_eq!(proxy.wait_exit(), Some(7));
    place.wait_all_gone(common::lsp::WAIT);
}

#[test]
fn sigterm_ends_the_server_and_the_ide() {
    let place = Place::new();
    let (mut proxy, _) = serving(&place, &[]);
    let status = proxy.running.terminate(common::lsp::WAIT);
    // The echo server ends at the end of its input, with success.
    assert_eq!(status.code(), Some(0), "{}", proxy.running.stderr());
    place.wait_all_gone(common::lsp::WAIT);
}

#[test]
fn bad_input_is_forwarded_and_never_ends_the_proxy() {
    let place = Place::new();
    let (mut proxy, _) = serving(&place, &[]);
    proxy.send(b"Content-Length: 99999999999999999999999\r\n\r\n");
    proxy.send(b"Content-Length: -4\r\n\r\n");
    proxy.send(&message(
        &json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
        "params": {"textDocument": {"uri": "file:///never/opened.c", "version": 9},
                   "contentChanges": [{"range": {"start": {"line": 99, "character": 0},
                   "end": {"line": 99, "character": 5}}, "text": "x"}]}}),
    ));
    proxy.send(b"Content-Length: 5\r\n\r\n[[[[[");
    proxy.send(&message(
        &json!({"jsonrpc": "2.0", "id": 77, "method": "test/echo", "params": [1]}),
    ));
    let answer = br#"{"jsonrpc":"2.0","id":77,"result":[1]}"#;
    let start = std::time::Instant::now();
    while !proxy.output().windows(answer.len()).any(|w| w == answer) {
        proxy.running.assert_running();
        assert!(
            start.elapsed() < common::lsp::WAIT,
            "{}",
            proxy.running.stderr()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    proxy.send(&exit());
    assert_eq!(proxy.wait_exit(), Some(0));
}

#[test]
fn a_broken_stderr_neither_panics_nor_blocks_the_proxy() {
    let place = Place::new();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut command = Command::new(common::bin());
    command
        .args(["lsp-proxy", "--linger", "0", "--"])
        .args(Place::echo(&[]));
    place.environment(&mut command);
    let mut child = command
        .env("RUST_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(writer))
        .spawn()
        .unwrap();
    let mut input = initialize(FAKE_EDITOR, &place.workspace, "Test Editor");
    // Unframed bytes are logged: writes to the broken stderr.
    input.extend_from_slice(b"garbage\r\n\r\n".repeat(100).as_slice());
    input.extend_from_slice(&exit());
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &input).unwrap();
    drop(child.stdin.take());
    let mut output = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut output)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&output).contains(r#""id":1,"result""#),
        "the answer to initialize is missing"
    );
    place.wait_all_gone(common::lsp::WAIT);
}

/// `textDocument/didOpen` of `path`.
fn did_open(path: &std::path::Path, language: &str, text: &str) -> Vec<u8> {
    message(
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": format!("file://{}", path.display()), "languageId": language, "version": 1, "text": text}}}),
    )
}

/// The labels of `getOpenEditors` and the files with diagnostics, from the
/// IDE of `lockfile`.
async fn ide_view(
    lockfile: &(std::path::PathBuf, serde_json::Value),
) -> (Vec<String>, Vec<String>) {
    let port = common::lockfile_port(&lockfile.0);
    let mut client = common::ws::connect(port, lockfile.1["authToken"].as_str().unwrap()).await;
    let editors = client.call("getOpenEditors", json!({})).await;
    let mut labels: Vec<String> = editors["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tab| tab["label"].as_str().unwrap().to_owned())
        .collect();
    labels.sort();
    let diagnostics = client.call("getDiagnostics", json!({})).await;
    let mut files: Vec<String> = diagnostics
        .as_array()
        .unwrap()
        .iter()
        .filter(|file| !file["diagnostics"].as_array().unwrap().is_empty())
        .map(|file| {
            file["uri"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    files.sort();
    (labels, files)
}

/// Polls `ide_view` until it equals `expected`, within the deadline.
async fn wait_view(place: &Place, pid: u32, expected: (Vec<&str>, Vec<&str>)) {
    let start = std::time::Instant::now();
    loop {
        let lockfiles = place.lockfiles();
        if let [lockfile] = &lockfiles[..]
            && lockfile.1["pid"] == json!(pid)
        {
            let (labels, files) = ide_view(lockfile).await;
            if labels == expected.0 && files == expected.1 {
                return;
            }
            assert!(
                start.elapsed() < common::lsp::WAIT,
                "open {labels:?}, diagnostics {files:?}, expected {expected:?}"
            );
        }
        assert!(
            start.elapsed() < common::lsp::WAIT,
            "lockfiles {lockfiles:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// A file of `place`'s workspace that the echo server publishes one error
/// for as it starts: the `--play` file to give it.
fn diagnosing(place: &Place, name: &str) -> std::path::PathBuf {
    let play = place.dir.path().join(format!("{name}.play"));
    std::fs::write(
        &play,
        message(
            &json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
            "params": {"uri": format!("file://{}", place.workspace.join(name).display()), "diagnostics": [{
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                "severity": 1, "message": format!("bad {name}")}]}}),
        ),
    )
    .unwrap();
    play
}

/// A proxy of editor `editor` whose server diagnoses `name`, and which has
/// opened it.
fn editing(place: &Place, editor: u32, name: &str, extra: &[&str]) -> Proxy {
    let play = diagnosing(place, name);
    let mut proxy = place.proxy(extra, &Place::echo(&["--play", play.to_str().unwrap()]));
    proxy.send(&initialize(editor, &place.workspace, "Test Editor"));
    proxy.send(&did_open(&place.workspace.join(name), "x", "one\ntwo\n"));
    proxy
}

fn host_pid(lockfile: &serde_json::Value) -> u32 {
    u32::try_from(lockfile["pid"].as_u64().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxies_of_one_workspace_share_one_host_and_a_killed_host_is_replaced() {
    let place = Place::new();
    let names = ["a.c", "b.py", "c.rs"];
    // Two servers of one editor, and a second editor on the same workspace.
    let mut proxies: Vec<Proxy> = vec![
        editing(&place, FAKE_EDITOR, names[0], &[]),
        editing(&place, FAKE_EDITOR, names[1], &[]),
        editing(&place, FAKE_EDITOR + 1, names[2], &[]),
    ];
    let lockfiles = place.wait_lockfiles(&proxies[0], |found| found.len() == 1);
    let host = host_pid(&lockfiles[0].1);
    let all = names.to_vec();
    wait_view(&place, host, (all.clone(), all.clone())).await;
    // What the CLI deletes finds nothing of ours to delete, and nothing but
    // the one `<port>.lock` is in its directory.
    assert_eq!(place.cli_cleanup(), Vec::<String>::new());
    assert_eq!(
        place.ide_dir_entries(),
        [lockfiles[0].0.file_name().unwrap().to_str().unwrap()]
    );
    assert_eq!(place.host_pids(), [host]);

    // The host is killed: forwarding goes on, and the proxies start a new
    // host and replay their state into it.
    let killed = std::time::Instant::now();
    std::process::Command::new("kill")
        .args(["-KILL", &host.to_string()])
        .status()
        .unwrap();
    proxies[0].send(&message(
        &json!({"jsonrpc": "2.0", "id": 5, "method": "test/echo", "params": ["still here"]}),
    ));
    let answer = br#"{"jsonrpc":"2.0","id":5,"result":["still here"]}"#;
    let start = std::time::Instant::now();
    while !proxies[0]
        .output()
        .windows(answer.len())
        .any(|w| w == answer)
    {
        assert!(
            start.elapsed() < common::lsp::WAIT,
            "no answer without a host"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // The dead host's lockfile is the CLI's to delete (its pid is dead).
    let lockfiles = place.wait_lockfiles(&proxies[0], |found| {
        found
            .iter()
            .any(|(_, content)| content["pid"] != json!(host))
    });
    let next = lockfiles
        .iter()
        .map(|(_, content)| host_pid(content))
        .find(|&pid| pid != host)
        .unwrap();
    eprintln!(
        "a new host's lockfile {:?} after the kill",
        killed.elapsed()
    );
    place.cli_cleanup();
    wait_view(&place, next, (all.clone(), all)).await;
    assert_eq!(place.host_pids(), [next]);

    // A proxy that leaves takes its stream's documents and diagnostics.
    let mut gone = proxies.remove(2);
    gone.send(&exit());
    assert_eq!(gone.wait_exit(), Some(0));
    wait_view(&place, next, (names[..2].to_vec(), names[..2].to_vec())).await;
    for proxy in &mut proxies {
        proxy.send(&exit());
        assert_eq!(proxy.wait_exit(), Some(0));
    }
    place.wait_all_gone(common::lsp::WAIT);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ide_outlives_its_editors_for_the_linger_and_clients_stay_connected() {
    let place = Place::new();
    let linger = ["--linger", "3"];
    let mut first = editing(&place, FAKE_EDITOR, "a.c", &linger);
    let lockfiles = place.wait_lockfiles(&first, |found| found.len() == 1);
    let (lockfile, content) = lockfiles[0].clone();
    let host = host_pid(&content);
    wait_view(&place, host, (vec!["a.c"], vec!["a.c"])).await;
    let mut client = common::ws::connect(
        common::lockfile_port(&lockfile),
        content["authToken"].as_str().unwrap(),
    )
    .await;
    first.send(&exit());
    assert_eq!(first.wait_exit(), Some(0));

    // No editor: the same IDE serves on, with nothing open.
    let start = std::time::Instant::now();
    loop {
        let editors = client.call("getOpenEditors", json!({})).await;
        if editors == json!({"tabs": []}) {
            break;
        }
        assert!(start.elapsed() < common::lsp::WAIT, "{editors}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(client.call("getDiagnostics", json!({})).await, json!([]));
    assert_eq!(place.lockfiles(), lockfiles);
    assert_eq!(place.cli_cleanup(), Vec::<String>::new());

    // The editor restarts within the linger: the same host, port and
    // token, and the connected client sees the new session's files.
    let mut again = editing(&place, FAKE_EDITOR + 7, "b.py", &linger);
    let start = std::time::Instant::now();
    loop {
        let editors = client.call("getOpenEditors", json!({})).await;
        if editors["tabs"][0]["label"] == "b.py" {
            break;
        }
        assert!(start.elapsed() < common::lsp::WAIT, "{editors}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(place.lockfiles(), lockfiles);
    assert_eq!(place.host_pids(), [host]);
    // The linger starts once the host sees the editor go, after this: a
    // lower bound that a slow test thread cannot break.
    let gone = std::time::Instant::now();
    again.send(&exit());
    assert_eq!(again.wait_exit(), Some(0));

    // Past the linger: no lockfile, no host, no file; the client is
    // disconnected.
    place.wait_all_gone(common::lsp::WAIT);
    assert!(
        gone.elapsed() >= std::time::Duration::from_secs(2),
        "ended before its linger"
    );
    // Its files go just before it exits.
    let exiting = std::time::Instant::now();
    while !common::is_dead(host) {
        assert!(exiting.elapsed() < common::lsp::WAIT, "the host lives on");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // What is still queued are notifications (the editors' files opened
    // and closed changed the resources' list); then the connection ends.
    while let Some(message) = client.next_message(common::lsp::WAIT).await {
        assert!(
            message.get("id").is_none() && message["method"].is_string(),
            "{message}"
        );
    }
}

#[test]
fn editors_on_two_workspaces_get_two_ides_and_sigterm_ends_a_host_at_once() {
    let place = Place::new();
    let mut here = editing(&place, FAKE_EDITOR, "a.c", &["--linger", "600"]);
    let other = place.dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let mut there = place.proxy(
        &["--linger", "600", "--workspace", other.to_str().unwrap()],
        &Place::echo(&[]),
    );
    there.send(&initialize(FAKE_EDITOR, &place.workspace, "Test Editor"));
    let lockfiles = place.wait_lockfiles(&here, |found| found.len() == 2);
    let mut folders: Vec<&serde_json::Value> = lockfiles
        .iter()
        .map(|(_, c)| &c["workspaceFolders"])
        .collect();
    folders.sort_by_key(ToString::to_string);
    assert_eq!(
        folders,
        [
            &json!([other.to_str().unwrap()]),
            &json!([place.workspace.to_str().unwrap()])
        ]
    );
    let hosts = place.host_pids();
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    for proxy in [&mut here, &mut there] {
        proxy.send(&exit());
        assert_eq!(proxy.wait_exit(), Some(0));
    }
    // Lingering for ten minutes, each ends at once on SIGTERM, lockfile
    // removed.
    for &pid in &hosts {
        std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
    }
    // Far below the ten minutes they would linger.
    place.wait_all_gone(common::lsp::WAIT);
}

#[test]
fn log_file_takes_the_logs_and_stderr_stays_quiet() {
    let place = Place::new();
    let log = place.dir.path().join("proxy.log");
    let (mut proxy, _) = serving(&place, &["--log", log.to_str().unwrap()]);
    let start = std::time::Instant::now();
    while !std::fs::read_to_string(&log).is_ok_and(|logged| logged.contains("a proxy attached")) {
        assert!(start.elapsed() < common::lsp::WAIT, "never attached");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    proxy.send(&exit());
    assert_eq!(proxy.wait_exit(), Some(0));
    assert_eq!(proxy.running.stderr(), "");
    // The host the proxy started logs there too.
    place.wait_all_gone(common::lsp::WAIT);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("attached to the IDE host"), "{logged}");
    assert!(logged.contains("serving the IDE WebSocket"), "{logged}");
    assert!(logged.contains("the host ends ending=Lingered"), "{logged}");
    assert!(logged.contains("the language server ended"), "{logged}");
}

#[test]
fn a_server_that_cannot_start_is_a_clear_error() {
    let place = Place::new();
    let mut proxy = place.proxy(&[], &["no-such-language-server"]);
    assert_eq!(proxy.wait_exit(), Some(1));
    let stderr = proxy.running.stderr();
    assert!(
        stderr.contains("cannot start the language server `no-such-language-server`"),
        "{stderr}"
    );
    assert!(proxy.output().is_empty());
}

/// A message of several MiB (forwarded piece by piece as it arrives) and
/// the small ones around it reach the server byte for byte, and the
/// observer still reads it: the document is listed by the IDE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_message_crosses_unchanged_and_is_observed() {
    let place = Place::new();
    let record = place.dir.path().join("record");
    let mut proxy = place.proxy(&[], &Place::echo(&["--record", record.to_str().unwrap()]));
    let start = initialize(FAKE_EDITOR, &place.workspace, "Test Editor");
    proxy.send(&start);
    let big = place.workspace.join("big.txt");
    let text = "é🦀 line of text\n".repeat(200_000);
    let open = did_open(&big, "plaintext", &text);
    assert!(
        open.len() > 4 << 20,
        "larger than the proxy's streaming threshold"
    );
    let small = did_open(&place.workspace.join("small.c"), "c", "int x;\n");
    // The big message arrives in pieces, as from a pipe.
    for piece in open.chunks(700_000) {
        proxy.send(piece);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    proxy.send(&small);
    let lockfiles = place.wait_lockfiles(&proxy, |found| found.len() == 1);
    let pid = u32::try_from(lockfiles[0].1["pid"].as_u64().unwrap()).unwrap();
    wait_view(&place, pid, (vec!["big.txt", "small.c"], vec![])).await;
    proxy.send(&exit());
    assert_eq!(proxy.wait_exit(), Some(0));
    let expected = [start, open, small, exit()].concat();
    let recorded = std::fs::read(&record).unwrap();
    assert!(recorded == expected, "editor → server, byte for byte");
}

/// A review whose editor goes away before the user decided is answered
/// with an error (the CLI then keeps its terminal prompt), never with a
/// rejection the user did not make; while it is pending, the editor gets
/// the hunks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_whose_editor_goes_away_is_an_error_not_a_rejection() {
    let place = Place::new();
    let mut proxy = editing(&place, FAKE_EDITOR, "a.c", &["--linger", "5"]);
    let lockfiles = place.wait_lockfiles(&proxy, |found| found.len() == 1);
    let host = host_pid(&lockfiles[0].1);
    wait_view(&place, host, (vec!["a.c"], vec!["a.c"])).await;
    let mut client = common::ws::connect(
        common::lockfile_port(&lockfiles[0].0),
        lockfiles[0].1["authToken"].as_str().unwrap(),
    )
    .await;
    let path = place.workspace.join("a.c");
    let call = json!({"jsonrpc": "2.0", "id": 50, "method": "tools/call", "params": {"name": "openDiff",
        "arguments": {"old_file_path": path, "new_file_path": path,
                      "new_file_contents": "one\nTWO\n", "tab_name": "t"}}});
    ide_mcp_test_support::send(&mut client.ws, &call.to_string()).await;
    // The editor is shown the hunk, beside the server's own diagnostic.
    let start = std::time::Instant::now();
    while !String::from_utf8_lossy(&proxy.output()).contains(r#""source":"Claude Code""#) {
        assert!(
            start.elapsed() < common::lsp::WAIT,
            "no hunk for the editor"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    proxy.send(&exit());
    assert_eq!(proxy.wait_exit(), Some(0));
    let answer = loop {
        let message = client
            .next_message(common::lsp::WAIT)
            .await
            .expect("an answer to openDiff");
        if message["id"] == 50 {
            break message;
        }
    };
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        ide_mcp_lsp::host::review::EDITOR_GONE
    );
    place.wait_all_gone(common::lsp::WAIT);
}
