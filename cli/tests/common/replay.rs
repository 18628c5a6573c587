//! Replaying a recorded editor session (`ide-mcp lsp-record` lines, as
//! `tests/helix/record.sh` writes them) through the real `ide-mcp
//! lsp-proxy`, without the editor nor the servers: one proxy per recorded
//! stream, whose server is `lsp-echo --replay` playing that
//! stream's server wire, while the test writes the editor's messages to
//! the proxy's stdin in the recorded order. Before each editor message,
//! the proxy must have written the editor everything the editor had
//! received by then (its answers to the server's requests, `initialized`
//! after `initialize`...); the recorded order already puts every cause
//! before its effect.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ide_mcp_lsp::framing::{Frame, SyncMessageReader};
use serde_json::Value;
use serde_json::value::RawValue;

use super::lsp::{Place, Proxy, WAIT};

/// One line of a recording.
#[derive(serde::Deserialize)]
struct Line {
    step: Option<String>,
    stream: Option<String>,
    wire: Option<String>,
    from: Option<String>,
    body: Option<Box<RawValue>>,
    text: Option<String>,
    header: Option<String>,
    unframed: Option<String>,
}

/// What a recording holds, in order.
#[derive(Debug)]
pub(crate) enum Entry {
    /// The person recording marked a step: what the editor did has settled.
    Step(String),
    /// A message on the editor's wire of `stream`, written by the editor
    /// (`from_editor`) or by the proxy.
    Editor {
        stream: String,
        from_editor: bool,
        body: String,
    },
    /// A message on the server's wire of `stream`, written by the proxy
    /// (`from_proxy`) or by the server.
    Server {
        stream: String,
        from_proxy: bool,
        body: String,
    },
}

/// Reads a recording whose placeholders (`${WORKSPACE}`, ...) are replaced
/// as `substitutions` say.
///
/// # Panics
///
/// On a line that is not a step nor a message with a one-line JSON body
/// and the standard header (the only ones the replay plays), or a
/// placeholder left.
pub(crate) fn load(recording: &str, substitutions: &[(&str, &str)]) -> Vec<Entry> {
    let mut text = recording.to_owned();
    for (placeholder, value) in substitutions {
        text = text.replace(placeholder, value);
    }
    // (Snippets, such as clangd's `${1:expression}`, are no placeholders.)
    let left = text.split("${").skip(1).find_map(|after| {
        let name = &after[..after.find('}')?];
        let upper = name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
        (upper && !name.is_empty()).then_some(name)
    });
    assert_eq!(left, None, "a placeholder is left in the recording");
    text.lines()
        .enumerate()
        .map(|(n, line)| entry(n + 1, line))
        .collect()
}

fn entry(number: usize, line: &str) -> Entry {
    let line: Line =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("recording line {number}: {e}"));
    if let Some(step) = line.step {
        return Entry::Step(step);
    }
    assert!(
        line.text.is_none() && line.header.is_none() && line.unframed.is_none(),
        "recording line {number}: not a JSON body with the standard header"
    );
    let (Some(stream), Some(wire), Some(from), Some(body)) =
        (line.stream, line.wire, line.from, line.body)
    else {
        panic!("recording line {number}: neither a step nor a message");
    };
    let body = body.get().to_owned();
    match wire.as_str() {
        "editor" => Entry::Editor {
            stream,
            from_editor: from == "editor",
            body,
        },
        "server" => Entry::Server {
            stream,
            from_proxy: from == "proxy",
            body,
        },
        other => panic!("recording line {number}: wire {other}"),
    }
}

/// Asserts that two lists of bodies are equal, showing the first
/// difference rather than both lists.
fn same(what: &str, got: &[String], expected: &[String]) {
    if let Some(i) = (0..got.len().max(expected.len())).find(|&i| got.get(i) != expected.get(i)) {
        panic!(
            "{what}: message {i} of {} (expected {}):\n{:?}\nexpected:\n{:?}",
            got.len(),
            expected.len(),
            got.get(i),
            expected.get(i)
        );
    }
}

pub(crate) use ide_mcp_test_support::lsp::frame;

/// The bodies of the messages in `bytes`, which must all be messages.
pub(crate) fn bodies(bytes: &[u8]) -> Vec<String> {
    let (bodies, rest) = complete_bodies(bytes);
    assert!(rest.is_empty(), "bytes that are no message: {rest:?}");
    bodies
}

/// The bodies of the complete messages in `bytes`, and the bytes after
/// them (a message still arriving).
pub(crate) fn complete_bodies(bytes: &[u8]) -> (Vec<String>, Vec<u8>) {
    let mut reader = SyncMessageReader::new(bytes);
    let mut bodies = Vec::new();
    while let Some(frame) = reader.next_frame().unwrap() {
        match frame {
            Frame::Message(message) => {
                bodies.push(String::from_utf8(message.body().to_vec()).unwrap());
            }
            Frame::Unframed(rest) => return (bodies, rest),
        }
    }
    (bodies, Vec::new())
}

/// One recorded stream, replayed: its proxy, and what is expected of it.
struct Stream {
    proxy: Proxy,
    /// What the fake server receives (`lsp-echo --record`).
    received: PathBuf,
    /// The editor's messages written to the proxy, framed.
    sent: Vec<u8>,
    /// The server's messages, as recorded.
    from_server: Vec<String>,
    /// The proxy's messages to the server, as recorded.
    to_server: Vec<String>,
    /// How many messages the editor had received from the proxy before
    /// the editor message to be written next.
    received_before: usize,
}

/// A recording being replayed.
pub(crate) struct Replay {
    entries: std::vec::IntoIter<Entry>,
    streams: BTreeMap<String, Stream>,
    /// Run before each editor message is written (a file saved on disk
    /// before its `didSave`, as the editor did).
    before_send: Box<dyn FnMut(&str) + Send>,
}

impl Replay {
    /// Starts one proxy per stream of `entries`, in `place`, each with its
    /// recorded server; `before_send` sees each editor body before it is
    /// written.
    pub(crate) fn start(
        place: &Place,
        entries: Vec<Entry>,
        before_send: impl FnMut(&str) + Send + 'static,
    ) -> Self {
        Self::start_with(place, entries, &[], before_send)
    }

    /// [`start`](Self::start), each proxy with `extra` arguments.
    pub(crate) fn start_with(
        place: &Place,
        entries: Vec<Entry>,
        extra: &[&str],
        before_send: impl FnMut(&str) + Send + 'static,
    ) -> Self {
        let mut scripts: BTreeMap<String, String> = BTreeMap::new();
        for entry in &entries {
            if let Entry::Server {
                stream,
                from_proxy,
                body,
            } = entry
            {
                let from = if *from_proxy { "proxy" } else { "server" };
                let line = format!("{{\"from\":\"{from}\",\"body\":{body}}}\n");
                scripts.entry(stream.clone()).or_default().push_str(&line);
            }
        }
        let streams = scripts
            .into_iter()
            .map(|(name, script)| {
                let stream = Stream::start(place, &name, &script, &entries, extra);
                (name, stream)
            })
            .collect();
        Self {
            entries: entries.into_iter(),
            streams,
            before_send: Box::new(before_send),
        }
    }

    /// Replays the editor's side up to the next step marker and returns
    /// its name; `None` once the recording has been replayed to its end.
    pub(crate) fn next_step(&mut self) -> Option<String> {
        for entry in self.entries.by_ref() {
            match entry {
                Entry::Step(step) => return Some(step),
                Entry::Editor {
                    stream,
                    from_editor,
                    body,
                } => {
                    let replayed = self.streams.get_mut(&stream).unwrap();
                    if from_editor {
                        replayed.wait_for_output(&stream);
                        (self.before_send)(&body);
                        replayed.send(&body);
                    } else {
                        replayed.received_before += 1;
                    }
                }
                Entry::Server { .. } => {}
            }
        }
        None
    }

    /// The proxy of `stream`.
    pub(crate) fn proxy(&self, stream: &str) -> &Proxy {
        &self.streams[stream].proxy
    }

    /// Ends the editor's side (as an editor that quits closes its pipes),
    /// waits for each proxy to exit with 0, and checks each stream's
    /// server side: the server received exactly the bytes the editor wrote,
    /// less those `kept_from_server` (which the proxy answers itself), and
    /// so exactly what it received in the recording. Returns, by stream,
    /// what the proxy changed on the editor's side.
    pub(crate) fn finish(
        self,
        kept_from_server: impl Fn(&str) -> bool,
    ) -> BTreeMap<String, Changes> {
        self.finish_with(Some(&kept_from_server))
    }

    /// [`finish`](Self::finish), but what the server received is checked
    /// only against the recording (the proxy changed some of the editor's
    /// messages: it takes Claude's markers out of a code action's
    /// context).
    pub(crate) fn finish_as_recorded(self) -> BTreeMap<String, Changes> {
        self.finish_with(None)
    }

    fn finish_with(
        mut self,
        kept_from_server: Option<&dyn Fn(&str) -> bool>,
    ) -> BTreeMap<String, Changes> {
        assert!(self.next_step().is_none(), "steps are left");
        let mut changes = BTreeMap::new();
        for (name, mut stream) in std::mem::take(&mut self.streams) {
            stream.proxy.close_stdin();
            let code = stream.proxy.wait_exit();
            assert_eq!(code, Some(0), "{name}: {}", stream.proxy.running.stderr());
            let received = std::fs::read(&stream.received).unwrap();
            if let Some(kept_from_server) = kept_from_server {
                let forwarded: Vec<u8> = bodies(&stream.sent)
                    .iter()
                    .filter(|body| !kept_from_server(body))
                    .flat_map(|body| frame(body))
                    .collect();
                // Bytes first: the framing too must be the editor's.
                if received != forwarded {
                    same(
                        &format!("{name}: what the server received, of what the editor wrote"),
                        &bodies(&received),
                        &bodies(&forwarded),
                    );
                    panic!("{name}: the server received other bytes than the editor wrote");
                }
            }
            same(
                &format!("{name}: what the server received, as recorded"),
                &bodies(&received),
                &stream.to_server,
            );
            changes.insert(name, stream.changes());
        }
        changes
    }
}

/// What a proxy wrote the editor other than the server's messages as the
/// server wrote them (in whatever order: where no message waits for
/// another, the proxy's order may differ from the recording's).
#[derive(Debug)]
pub(crate) struct Changes {
    /// The editor's messages, in order.
    pub(crate) editor: Vec<Value>,
    /// What the editor received that the server did not write so.
    pub(crate) written: Vec<Value>,
    /// What the server wrote that the editor did not receive so.
    pub(crate) replaced: Vec<Value>,
}

impl Stream {
    fn start(place: &Place, name: &str, script: &str, entries: &[Entry], extra: &[&str]) -> Self {
        let dir = place.dir.path().join("replay");
        std::fs::create_dir_all(&dir).unwrap();
        let script_path = dir.join(format!("{name}.jsonl"));
        std::fs::write(&script_path, script).unwrap();
        let received = dir.join(format!("{name}.received"));
        let server = Place::echo(&[
            "--replay",
            script_path.to_str().unwrap(),
            "--record",
            received.to_str().unwrap(),
        ]);
        let proxy = place.proxy(extra, &server);
        // The recorded server wire: written by the proxy, or by the server.
        let of = |by_proxy: bool| -> Vec<String> {
            entries
                .iter()
                .filter_map(|entry| match entry {
                    Entry::Server {
                        stream,
                        from_proxy,
                        body,
                    } if stream == name && *from_proxy == by_proxy => Some(body.clone()),
                    _ => None,
                })
                .collect()
        };
        Self {
            proxy,
            received,
            sent: Vec::new(),
            from_server: of(false),
            to_server: of(true),
            received_before: 0,
        }
    }

    fn changes(&self) -> Changes {
        let mut replaced = self.from_server.clone();
        let mut written = Vec::new();
        for body in bodies(&self.proxy.output()) {
            match replaced.iter().position(|server| *server == body) {
                Some(i) => drop(replaced.swap_remove(i)),
                None => written.push(body),
            }
        }
        let json = |bodies: Vec<String>| {
            bodies
                .iter()
                .map(|b| serde_json::from_str(b).unwrap())
                .collect()
        };
        Changes {
            editor: json(bodies(&self.sent)),
            written: json(written),
            replaced: json(replaced),
        }
    }

    fn send(&mut self, body: &str) {
        let bytes = frame(body);
        self.proxy.send(&bytes);
        self.sent.extend_from_slice(&bytes);
    }

    /// Waits until the proxy has written the editor as many messages as
    /// the editor had received when it wrote its next one.
    fn wait_for_output(&self, name: &str) {
        let start = Instant::now();
        loop {
            let (written, _) = complete_bodies(&self.proxy.output());
            if written.len() >= self.received_before {
                return;
            }
            assert!(
                start.elapsed() < WAIT,
                "{name}: the proxy wrote the editor {} of {} messages:\n{written:#?}\nstderr:\n{}",
                written.len(),
                self.received_before,
                self.proxy.running.stderr()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
