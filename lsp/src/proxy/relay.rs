//! The proxy's side of the link to its host ([`crate::host::link`]): the
//! copies of what it observes go up, the IDE's messages for the editor and
//! the server come down.

use std::io;
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::{AsyncWriteExt as _, BufReader, BufWriter};
use tokio::net::UnixStream;
use tokio::sync::mpsc;

use super::shared::Shared;
use super::sink::Sink;
use crate::framing::Message;
use crate::host::link::{Tag, read_frame, write_frame};
use crate::observer::Overlay;
use crate::sync::lock;

/// How many copies may wait for the host; beyond it the link is dropped
/// and made again with a replay rather than losing a message.
const BACKLOG: usize = 4096;

/// What follows each request of the IDE to an editor that needs it
/// ([`nudges`]): a notification every editor may ignore (`$/`), which
/// eglot does, silently.
const NUDGE: &[u8] =
    b"Content-Length: 44\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"$/ide-mcp/nudge\"}";

/// When the nudges follow a request, each after the one before.
const NUDGE_AFTER: [Duration; 4] = [
    Duration::from_millis(100),
    Duration::from_millis(500),
    Duration::from_secs(2),
    Duration::from_secs(5),
];

/// Writes [`NUDGE`] to `editor` after each of [`NUDGE_AFTER`]: each its
/// own write, so that one of them is read after the editor's loop stopped
/// and takes in the request waiting before it.
async fn nudges(editor: Sink) {
    for wait in NUDGE_AFTER {
        tokio::time::sleep(wait).await;
        if !tokio::task::block_in_place(|| editor.send(NUDGE)) {
            return;
        }
    }
}

/// Whether `body` is a request (it has an `id` and a `method`).
fn is_request(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        id: Option<serde::de::IgnoredAny>,
        method: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Probe>(body).is_ok_and(|p| p.id.is_some() && p.method.is_some())
}

/// One observed message for the host: which way it went
/// ([`Tag::FromEditor`] or [`Tag::FromServer`]) and its body, shared.
pub type Copy = (Tag, Shared);

/// The link to the host as the pumps see it: what they copy into, swapped
/// atomically with the observation when the proxy (re)attaches.
#[derive(Debug, Default)]
pub struct Upstream {
    link: Mutex<Option<mpsc::Sender<Copy>>>,
}

impl Upstream {
    /// Runs `observe` and, in the same critical section, queues `body()`
    /// for the host if there is one: a replay taken by
    /// [`connect`](Self::connect) and the copies that follow never miss or
    /// repeat a message.
    pub fn observe<R>(
        &self,
        tag: Tag,
        body: impl FnOnce() -> Shared,
        observe: impl FnOnce() -> R,
    ) -> R {
        let mut link = lock(&self.link);
        let verdict = observe();
        if let Some(sender) = link.as_ref()
            && sender.try_send((tag, body())).is_err()
        {
            // Full or closed: the link task notices and attaches again.
            *link = None;
        }
        verdict
    }

    /// Links to a host: queues `replay()`'s messages, then every copy from
    /// now on; returns what the link task sends.
    pub fn connect(&self, replay: impl FnOnce() -> Vec<Copy>) -> mpsc::Receiver<Copy> {
        let mut link = lock(&self.link);
        let replay = replay();
        let (sender, receiver) = mpsc::channel(BACKLOG.max(replay.len() + 1));
        for copy in replay {
            // Cannot fail: the channel has room for all of them.
            let _ = sender.try_send(copy);
        }
        *link = Some(sender);
        receiver
    }

    /// Unlinks (the host is gone).
    pub fn disconnect(&self) {
        *lock(&self.link) = None;
    }
}

/// Where the IDE's messages for the server go: the server's sink, and the
/// interest that then looks for the server's answers to them.
#[derive(Clone, Debug)]
pub(crate) struct ToServer {
    pub(crate) sink: Sink,
    pub(crate) interest: std::sync::Arc<crate::observer::Interest>,
}

/// Sends `copies` up `stream` and writes what comes down to `editor`
/// (each request followed by [`nudges`] when `nudge`), until the host goes
/// away (its end closes), sends what is not a frame of the link, or the
/// copies stop (the link was dropped for a full backlog). The caller
/// attaches again.
pub(crate) async fn run(
    stream: UnixStream,
    mut copies: mpsc::Receiver<Copy>,
    editor: Sink,
    nudge: bool,
    server: ToServer,
    reviews: impl Fn(Overlay) + Send + 'static,
) -> io::Result<()> {
    let (read, write) = stream.into_split();
    // Reading frames is not cancel-safe: a task of its own.
    let down = tokio::spawn(async move {
        let mut read = BufReader::new(read);
        let mut body = Vec::new();
        loop {
            match read_frame(&mut read, &mut body).await? {
                Some(Tag::ToEditor) => {
                    tracing::debug!(bytes = body.len(), "from the host to the editor");
                    editor.send(Message::from_body(&body).as_bytes());
                    if nudge && is_request(&body) {
                        tokio::spawn(nudges(editor.clone()));
                    }
                }
                Some(Tag::ToServer) => {
                    // Before it is written: its answer may come at once.
                    server.interest.asked_server();
                    // Whole, on the sink the editor's messages take: never
                    // inside one of them.
                    let message = Message::from_body(&body);
                    tokio::task::block_in_place(|| server.sink.send(message.as_bytes()));
                }
                Some(Tag::Review) => match serde_json::from_slice(&body) {
                    // Settling the hand-off may wait for the observer.
                    Ok(overlay) => tokio::task::block_in_place(|| reviews(overlay)),
                    Err(error) => {
                        tracing::warn!(%error, "unreadable reviews from the host; ignored");
                    }
                },
                Some(tag) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("the host sent {tag:?}"),
                    ));
                }
                None => return Ok(()),
            }
        }
    });
    let up = async {
        let mut write = BufWriter::new(write);
        while let Some((tag, body)) = copies.recv().await {
            write_frame(&mut write, tag, &body).await?;
            if copies.is_empty() {
                write.flush().await?;
            }
        }
        Ok(())
    };
    let abort = down.abort_handle();
    let result = tokio::select! {
        ended = down => ended.unwrap_or(Ok(())),
        sent = up => sent,
    };
    abort.abort();
    result
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A sink collecting what the proxy would write to its editor.
    #[derive(Clone, Debug, Default)]
    struct Collect(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Collect {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn copies_go_up_after_the_replay_and_requests_come_down() {
        let (proxy, host) = UnixStream::pair().unwrap();
        let upstream = Upstream::default();
        // Observed before any host: only the replay carries it.
        let early = || Shared::copy_of(b"early");
        upstream.observe(Tag::FromEditor, early, || ());
        let copies = upstream.connect(|| vec![(Tag::FromEditor, Shared::copy_of(b"replayed"))]);
        upstream.observe(Tag::FromServer, || Shared::copy_of(b"one"), || ());
        // Shared, not copied: the same bytes go up.
        let two = Shared::new(Message::from_body("two"));
        upstream.observe(Tag::FromEditor, || two.clone(), || ());
        let editor = Collect::default();
        let server = Collect::default();
        let interest = Arc::new(crate::observer::Interest::default());
        let to_server = ToServer {
            sink: Sink::new("server", server.clone()),
            interest: Arc::clone(&interest),
        };
        let linked = tokio::spawn(run(
            proxy,
            copies,
            Sink::new("editor", editor.clone()),
            false,
            to_server,
            drop,
        ));

        let (mut read, mut write) = host.into_split();
        write_frame(&mut write, Tag::ToEditor, b"{}").await.unwrap();
        write_frame(&mut write, Tag::ToServer, b"[1]")
            .await
            .unwrap();
        let mut body = Vec::new();
        let mut seen = Vec::new();
        for _ in 0..3 {
            let tag = read_frame(&mut read, &mut body).await.unwrap().unwrap();
            seen.push((tag, body.clone()));
        }
        assert_eq!(
            seen,
            [
                (Tag::FromEditor, b"replayed".to_vec()),
                (Tag::FromServer, b"one".to_vec()),
                (Tag::FromEditor, b"two".to_vec()),
            ]
        );
        drop(write);
        drop(read);
        linked.await.unwrap().unwrap();
        assert_eq!(*editor.0.lock().unwrap(), b"Content-Length: 2\r\n\r\n{}");
        assert_eq!(*server.0.lock().unwrap(), b"Content-Length: 3\r\n\r\n[1]");
        assert!(interest.awaiting_answers(), "the answer is looked for");
    }

    /// A request of the IDE to an editor that needs nudges is followed by
    /// them; a notification is not, and the nudge is a whole message.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requests_to_eglot_are_nudged() {
        let nudged = |name| crate::workspace::EditorKind::of(name).needs_nudges();
        assert!(nudged("Eglot") && nudged("GNU Emacs"));
        assert!(!nudged("Neovim") && !nudged("helix"));
        assert_eq!(
            Message::from_body(br#"{"jsonrpc":"2.0","method":"$/ide-mcp/nudge"}"#).as_bytes(),
            NUDGE
        );
        let (proxy, host) = UnixStream::pair().unwrap();
        // Kept: without it the copies end, and the link with them.
        let upstream = Upstream::default();
        let copies = upstream.connect(Vec::new);
        let editor = Collect::default();
        let linked = tokio::spawn(run(
            proxy,
            copies,
            Sink::new("editor", editor.clone()),
            true,
            nowhere(),
            drop,
        ));
        let (_read, mut write) = host.into_split();
        let notification = br#"{"jsonrpc":"2.0","method":"n"}"#;
        let request = br#"{"jsonrpc":"2.0","id":"ide-mcp/1","method":"workspace/applyEdit"}"#;
        write_frame(&mut write, Tag::ToEditor, notification)
            .await
            .unwrap();
        write_frame(&mut write, Tag::ToEditor, request)
            .await
            .unwrap();
        let mut expected = Message::from_body(notification).as_bytes().to_vec();
        expected.extend_from_slice(Message::from_body(request).as_bytes());
        expected.extend_from_slice(NUDGE);
        let deadline = std::time::Instant::now() + Duration::from_mins(1);
        while editor.0.lock().unwrap().len() < expected.len() {
            assert!(std::time::Instant::now() < deadline, "no nudge");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(editor.0.lock().unwrap()[..expected.len()], expected[..]);
        drop(write);
        linked.await.unwrap().unwrap();
    }

    fn nowhere() -> ToServer {
        ToServer {
            sink: Sink::new("server", io::sink()),
            interest: Arc::default(),
        }
    }

    /// The link over `proxy`, with nothing observed, editor and server
    /// sinks that drop what they get.
    async fn run_idle(proxy: UnixStream) -> io::Result<()> {
        let upstream = Upstream::default();
        let copies = upstream.connect(Vec::new);
        run(
            proxy,
            copies,
            Sink::new("editor", io::sink()),
            false,
            nowhere(),
            drop,
        )
        .await
    }

    #[tokio::test]
    async fn a_host_that_goes_away_ends_the_link() {
        let (proxy, host) = UnixStream::pair().unwrap();
        drop(host);
        run_idle(proxy).await.unwrap();
    }

    #[tokio::test]
    async fn a_host_that_sends_copies_is_refused() {
        let (proxy, host) = UnixStream::pair().unwrap();
        let (_read, mut write) = host.into_split();
        write_frame(&mut write, Tag::FromServer, b"x")
            .await
            .unwrap();
        let error = run_idle(proxy).await.unwrap_err();
        assert!(error.to_string().contains("FromServer"), "{error}");
    }
}
