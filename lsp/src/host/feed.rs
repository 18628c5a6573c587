//! One attached proxy, as the host sees it: its stream observed into the
//! host's workspace; the IDE's requests for its editor and its server, and
//! the reviews pending, sent down.

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncWriteExt as _, BufReader};
use tokio::net::UnixStream;
use tokio::sync::watch;

use super::link::{Tag, read_frame, write_frame};
use crate::observer::{Observer, Overlay};
use crate::workspace::LspWorkspace;

/// Observes the proxy at the other end of `stream` into `ws` until it
/// detaches (or sends what is not a frame of the link); then the stream's
/// documents close unless another stream has them open, and its
/// diagnostics go.
pub(crate) async fn feed(
    ws: Arc<LspWorkspace>,
    stream: UnixStream,
    mut reviews: watch::Receiver<Arc<Overlay>>,
) -> io::Result<()> {
    let (mut observer, mut outgoing) = Observer::new(ws);
    let Some(mut to_server) = observer.take_server_queue() else {
        return Ok(());
    };
    let (read, mut write) = stream.into_split();
    // The reviews pending now, then each change; and the IDE's requests.
    reviews.mark_changed();
    let down = tokio::spawn(async move {
        loop {
            let (tag, body) = tokio::select! {
                message = outgoing.recv() => match message {
                    Some(message) => (Tag::ToEditor, message.body().to_vec()),
                    None => return,
                },
                message = to_server.recv() => match message {
                    Some(message) => (Tag::ToServer, message.body().to_vec()),
                    None => return,
                },
                changed = reviews.changed() => match changed {
                    Ok(()) => {
                        let overlay = Arc::clone(&reviews.borrow_and_update());
                        match serde_json::to_vec(&*overlay) {
                            Ok(body) => (Tag::Review, body),
                            Err(_) => continue,
                        }
                    }
                    Err(_) => return,
                },
            };
            let sent = write_frame(&mut write, tag, &body).await;
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
            Some(Tag::ToEditor | Tag::Review | Tag::ToServer) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a proxy sent a message for its own editor",
                ));
            }
            None => return Ok(()),
        }
    }
}
