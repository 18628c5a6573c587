//! One attached proxy, as the host sees it: its stream observed into the
//! host's workspace, and the IDE's requests for its editor sent down.

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncWriteExt as _, BufReader};
use tokio::net::UnixStream;

use super::link::{Tag, read_frame, write_frame};
use crate::observer::Observer;
use crate::workspace::LspWorkspace;

/// Observes the proxy at the other end of `stream` into `ws` until it
/// detaches (or sends what is not a frame of the link); then the stream's
/// documents close unless another stream has them open, and its
/// diagnostics go.
pub(crate) async fn feed(ws: Arc<LspWorkspace>, stream: UnixStream) -> io::Result<()> {
    let (observer, mut outgoing) = Observer::new(ws);
    let (read, mut write) = stream.into_split();
    let down = tokio::spawn(async move {
        while let Some(message) = outgoing.recv().await {
            let sent = write_frame(&mut write, Tag::ToEditor, message.body()).await;
            if sent.and(write.flush().await).is_err() {
                return;
            }
        }
    });
    let result = observe(observer, BufReader::new(read)).await;
    down.abort();
    result
}

/// Verdicts are the proxy's business: its own observer made them.
async fn observe(
    mut observer: Observer,
    mut read: BufReader<impl tokio::io::AsyncRead + Unpin>,
) -> io::Result<()> {
    let mut body = Vec::new();
    loop {
        match read_frame(&mut read, &mut body).await? {
            Some(Tag::FromEditor) => drop(observer.from_client(&body)),
            Some(Tag::FromServer) => drop(observer.from_server(&body)),
            Some(Tag::ToEditor | Tag::Review) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a proxy sent a message for its own editor",
                ));
            }
            None => return Ok(()),
        }
    }
}
