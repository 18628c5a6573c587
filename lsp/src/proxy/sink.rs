//! Where whole messages are written: the editor's stdout (shared by the
//! server's messages and the proxy's own answers and requests) and the
//! server's stdin.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::sync::lock;

/// A byte sink written one whole message at a time, so that messages from
/// several threads never interleave; after the first failed write (the peer
/// is gone) it drops everything, logged once.
#[derive(Clone, Debug)]
pub(crate) struct Sink {
    inner: Arc<SinkInner>,
}

#[derive(Debug)]
struct SinkInner {
    name: &'static str,
    out: Mutex<Box<dyn WriteDebug>>,
    broken: AtomicBool,
}

/// `Write` that can be shown in a `Debug` derive.
trait WriteDebug: Write + Send + std::fmt::Debug {}
impl<T: Write + Send + std::fmt::Debug> WriteDebug for T {}

impl Sink {
    /// A sink over `out`, named in logs (`"editor"`, `"server"`).
    pub(crate) fn new(
        name: &'static str,
        out: impl Write + Send + std::fmt::Debug + 'static,
    ) -> Self {
        Self {
            inner: Arc::new(SinkInner {
                name,
                out: Mutex::new(Box::new(out)),
                broken: AtomicBool::new(false),
            }),
        }
    }

    /// A sink over this process's stdout, unbuffered: each message is one
    /// `write_all` on the file descriptor (std's `Stdout` would flush at
    /// every newline inside a message).
    pub(crate) fn stdout() -> io::Result<Self> {
        let fd = io::stdout().as_fd().try_clone_to_owned()?;
        Ok(Self::new("editor", File::from(fd)))
    }

    /// Writes `bytes` whole; returns whether they were written.
    pub(crate) fn send(&self, bytes: &[u8]) -> bool {
        self.stream().write(bytes)
    }

    /// Holds the sink for one message written in pieces (see
    /// [`SyncMessageReader::next_frame_streaming`]): no other message can
    /// come between them.
    ///
    /// [`SyncMessageReader::next_frame_streaming`]: crate::framing::SyncMessageReader::next_frame_streaming
    pub(crate) fn stream(&self) -> Streaming<'_> {
        Streaming {
            inner: &self.inner,
            out: lock(&self.inner.out),
        }
    }

    /// Closes the underlying writer (the reader then sees end of stream),
    /// once every clone of the sink has let go of it.
    pub(crate) fn close(&self) {
        let mut out = lock(&self.inner.out);
        *out = Box::new(io::sink());
        self.inner.broken.store(true, Ordering::Relaxed);
    }
}

/// A [`Sink`] held for one message: see [`Sink::stream`].
pub(crate) struct Streaming<'a> {
    inner: &'a SinkInner,
    out: MutexGuard<'a, Box<dyn WriteDebug>>,
}

impl Streaming<'_> {
    /// Writes `bytes` whole; returns whether they were written.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> bool {
        if self.inner.broken.load(Ordering::Relaxed) {
            return false;
        }
        match self.out.write_all(bytes).and_then(|()| self.out.flush()) {
            Ok(()) => true,
            Err(error) => {
                if !self.inner.broken.swap(true, Ordering::Relaxed) {
                    tracing::info!(to = self.inner.name, %error, "cannot write; dropping what follows");
                }
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Failing;

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_broken_peer_is_reported_once_and_then_skipped() {
        let sink = Sink::new("editor", Failing);
        assert!(!sink.send(b"a"));
        assert!(sink.inner.broken.load(Ordering::Relaxed));
        assert!(!sink.send(b"b"));
    }

    #[test]
    fn messages_from_threads_never_interleave() {
        let (mut reader, writer) = io::pipe().unwrap();
        let sink = Sink::new("editor", writer);
        let threads: Vec<_> = (0..4_u8)
            .map(|n| {
                let sink = sink.clone();
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        assert!(sink.send(&[b'a' + n; 1000]));
                    }
                })
            })
            .collect();
        let collector = std::thread::spawn(move || {
            let mut all = Vec::new();
            io::Read::read_to_end(&mut reader, &mut all).unwrap();
            all
        });
        for thread in threads {
            thread.join().unwrap();
        }
        sink.close();
        drop(sink);
        let all = collector.join().unwrap();
        assert_eq!(all.len(), 4 * 50 * 1000);
        for chunk in all.chunks(1000) {
            assert!(chunk.iter().all(|&byte| byte == chunk[0]));
        }
    }
}
