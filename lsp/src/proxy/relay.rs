//! Followers copy what they observe to the leader.
//!
//! On the rendezvous socket a follower sends, in order, every message its
//! observer saw: one byte for the direction (`0` editor to server, `1`
//! server to editor), the body's length as four big-endian bytes, then the
//! body. A new connection starts with the observer's replay (synthetic
//! messages that rebuild its state), so the leader's copy of the stream is
//! whole whether the follower connected first thing or after a takeover.
//! The leader never writes; the follower learns the leader is gone when its
//! read ends.

use std::io;
use std::sync::{Mutex, PoisonError};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, BufReader, BufWriter};
use tokio::net::UnixStream;
use tokio::sync::mpsc;

/// How many copies may wait for the leader; beyond it the connection is
/// dropped and made again with a replay rather than losing a message.
const BACKLOG: usize = 4096;

/// The largest body accepted from a follower (the framing's own limit).
const MAX_BODY: usize = 512 * 1024 * 1024;

/// Which way an observed message went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From the editor to the server.
    FromEditor,
    /// From the server to the editor.
    FromServer,
}

impl Direction {
    fn tag(self) -> u8 {
        match self {
            Self::FromEditor => 0,
            Self::FromServer => 1,
        }
    }
}

/// One copied message: direction and body.
pub type Copy = (Direction, Vec<u8>);

/// A follower's link to the leader: what the pumps copy into, swapped
/// atomically with the observation when the follower (re)connects.
#[derive(Debug, Default)]
pub struct Upstream {
    link: Mutex<Option<mpsc::Sender<Copy>>>,
}

impl Upstream {
    /// Runs `observe` and, in the same critical section, queues a copy of
    /// `body` for the leader if there is one: a replay taken by
    /// [`connect`](Self::connect) and the copies that follow never miss or
    /// repeat a message.
    pub fn observe<R>(&self, direction: Direction, body: &[u8], observe: impl FnOnce() -> R) -> R {
        let mut link = self.link.lock().unwrap_or_else(PoisonError::into_inner);
        let verdict = observe();
        if let Some(sender) = link.as_ref()
            && sender.try_send((direction, body.to_vec())).is_err()
        {
            // Full or closed: the connection task notices and connects again.
            *link = None;
        }
        verdict
    }

    /// Links to a new leader: queues `replay()`'s messages, then every copy
    /// from now on; returns what the connection task sends.
    pub fn connect(&self, replay: impl FnOnce() -> Vec<Copy>) -> mpsc::Receiver<Copy> {
        let mut link = self.link.lock().unwrap_or_else(PoisonError::into_inner);
        let replay = replay();
        let (sender, receiver) = mpsc::channel(BACKLOG.max(replay.len() + 1));
        for copy in replay {
            // Cannot fail: the channel has room for all of them.
            let _ = sender.try_send(copy);
        }
        *link = Some(sender);
        receiver
    }

    /// Unlinks (the leader is gone).
    pub fn disconnect(&self) {
        *self.link.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// Sends `copies` to the leader over `stream` until the leader goes away
/// (its end closes) or the link is dropped; `Ok` either way, so the caller
/// runs the election again.
pub async fn forward(stream: UnixStream, mut copies: mpsc::Receiver<Copy>) -> io::Result<()> {
    let (mut read, write) = stream.into_split();
    let mut write = BufWriter::new(write);
    let mut probe = [0_u8; 1];
    loop {
        tokio::select! {
            // The leader never writes: a read that ends means it is gone.
            _ = read.read(&mut probe) => return Ok(()),
            copy = copies.recv() => {
                let Some((direction, body)) = copy else { return Ok(()) };
                let len = u32::try_from(body.len()).map_err(|_| io::Error::other("message too large to relay"))?;
                write.write_u8(direction.tag()).await?;
                write.write_u32(len).await?;
                write.write_all(&body).await?;
                if copies.is_empty() {
                    write.flush().await?;
                }
            }
        }
    }
}

/// Reads a follower's copies from `stream`, giving each to `feed`, until the
/// follower goes away or sends something that is not a copy.
pub async fn receive(stream: UnixStream, mut feed: impl FnMut(Direction, &[u8])) -> io::Result<()> {
    let mut read = BufReader::new(stream);
    let mut body = Vec::new();
    loop {
        let direction = match read.read_u8().await {
            Ok(0) => Direction::FromEditor,
            Ok(1) => Direction::FromServer,
            Ok(tag) => return Err(io::Error::other(format!("unknown relay tag {tag}"))),
            Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(error) => return Err(error),
        };
        let len = read.read_u32().await? as usize;
        if len > MAX_BODY {
            return Err(io::Error::other(format!("relayed message of {len} bytes")));
        }
        body.resize(len, 0);
        read.read_exact(&mut body).await?;
        feed(direction, &body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn copies_arrive_after_the_replay_in_order() {
        let (follower, leader) = UnixStream::pair().unwrap();
        let upstream = Upstream::default();
        // Observed before any leader: only the replay carries it.
        upstream.observe(Direction::FromEditor, b"early", || ());
        let copies = upstream.connect(|| vec![(Direction::FromEditor, b"replayed".to_vec())]);
        upstream.observe(Direction::FromServer, b"one", || ());
        upstream.observe(Direction::FromEditor, b"two", || ());
        let sender = tokio::spawn(forward(follower, copies));
        let mut seen = Vec::new();
        let receiver = tokio::spawn(async move {
            receive(leader, |direction, body| {
                seen.push((direction, body.to_vec()));
            })
            .await
            .unwrap();
            seen
        });
        upstream.disconnect();
        sender.await.unwrap().unwrap();
        let seen = receiver.await.unwrap();
        assert_eq!(
            seen,
            [
                (Direction::FromEditor, b"replayed".to_vec()),
                (Direction::FromServer, b"one".to_vec()),
                (Direction::FromEditor, b"two".to_vec()),
            ]
        );
    }

    #[tokio::test]
    async fn a_leader_that_goes_away_ends_forwarding() {
        let (follower, leader) = UnixStream::pair().unwrap();
        let upstream = Upstream::default();
        let copies = upstream.connect(Vec::new);
        drop(leader);
        forward(follower, copies).await.unwrap();
    }

    #[tokio::test]
    async fn garbage_from_a_follower_ends_its_stream_with_an_error() {
        let (mut follower, leader) = UnixStream::pair().unwrap();
        follower.write_all(&[9, 0, 0, 0, 1, b'x']).await.unwrap();
        let error = receive(leader, |_, _| panic!("fed garbage"))
            .await
            .unwrap_err();
        assert!(error.to_string().contains("tag 9"), "{error}");
    }
}
