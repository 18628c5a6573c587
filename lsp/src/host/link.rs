//! The link between a proxy and its host, over the host's Unix socket.
//!
//! Every frame is one byte of [`Tag`], the body's length as four
//! big-endian bytes, then the body. Up, from the proxy: every message its
//! observer saw, in order, tagged by direction; a connection starts with
//! the observer's replay (synthetic messages that rebuild its state), so
//! the host's copy of the stream is whole whether the proxy attached first
//! thing or after the host was restarted. Down, from the host: messages the
//! proxy writes to its editor (the IDE's own requests, such as
//! `window/showDocument` for `openFile`), messages it writes to its server
//! (the live LSP tools' requests), and the reviews of Claude's edits
//! pending, whole, each time they change; the editor's and the server's
//! answers come back up with the rest of their traffic.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};

/// The largest body accepted (the framing's own limit).
pub const MAX_BODY: usize = 512 * 1024 * 1024;

/// What a frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// Up: a message from the editor to the server.
    FromEditor,
    /// Up: a message from the server to the editor.
    FromServer,
    /// Down: a message for the proxy to write to its editor.
    ToEditor,
    /// Down: the reviews pending, as JSON (an
    /// [`Overlay`](crate::observer::Overlay)) for the proxy to show.
    Review,
    /// Down: a message for the proxy to write to its server (a live LSP
    /// tool's request, `$/cancelRequest`, or the `didOpen` and `didClose`
    /// of a file the editor has not opened); the server's answers come
    /// back up with the rest of its traffic, and never reach the editor.
    ToServer,
}

impl Tag {
    fn byte(self) -> u8 {
        match self {
            Self::FromEditor => 0,
            Self::FromServer => 1,
            Self::ToEditor => 2,
            Self::Review => 3,
            Self::ToServer => 4,
        }
    }

    fn from_byte(byte: u8) -> io::Result<Self> {
        match byte {
            0 => Ok(Self::FromEditor),
            1 => Ok(Self::FromServer),
            2 => Ok(Self::ToEditor),
            3 => Ok(Self::Review),
            4 => Ok(Self::ToServer),
            tag => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unknown link tag {tag}"),
            )),
        }
    }
}

/// Writes one frame (unflushed).
pub async fn write_frame(
    out: &mut (impl AsyncWrite + Unpin),
    tag: Tag,
    body: &[u8],
) -> io::Result<()> {
    let len = u32::try_from(body.len())
        .ok()
        .filter(|&len| len as usize <= MAX_BODY)
        .ok_or_else(|| io::Error::other("message too large for the link"))?;
    out.write_u8(tag.byte()).await?;
    out.write_u32(len).await?;
    out.write_all(body).await
}

/// Reads one frame into `body`; `None` at a clean end (between frames).
/// Not cancel-safe: read from a task of its own.
pub async fn read_frame(
    input: &mut (impl AsyncRead + Unpin),
    body: &mut Vec<u8>,
) -> io::Result<Option<Tag>> {
    let tag = match input.read_u8().await {
        Ok(byte) => Tag::from_byte(byte)?,
        Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(error) => return Err(error),
    };
    let len = input.read_u32().await? as usize;
    if len > MAX_BODY {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("linked message of {len} bytes"),
        ));
    }
    // Into the buffer's spare room: a large body is not zeroed first.
    body.clear();
    body.reserve(len);
    while body.len() < len {
        let rest = (len - body.len()) as u64;
        if (&mut *input).take(rest).read_buf(body).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    }
    Ok(Some(tag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_cross_in_order() {
        let (mut a, mut b) = tokio::io::duplex(64);
        let writer = tokio::spawn(async move {
            write_frame(&mut a, Tag::FromEditor, b"one").await.unwrap();
            write_frame(&mut a, Tag::ToEditor, b"").await.unwrap();
            write_frame(&mut a, Tag::FromServer, &[7; 200])
                .await
                .unwrap();
        });
        let mut body = Vec::new();
        let mut seen = Vec::new();
        while let Some(tag) = read_frame(&mut b, &mut body).await.unwrap() {
            seen.push((tag, body.clone()));
        }
        writer.await.unwrap();
        assert_eq!(
            seen,
            [
                (Tag::FromEditor, b"one".to_vec()),
                (Tag::ToEditor, Vec::new()),
                (Tag::FromServer, vec![7; 200]),
            ]
        );
    }

    #[tokio::test]
    async fn garbage_is_an_error_and_a_cut_frame_too() {
        let mut body = Vec::new();
        let error = read_frame(&mut &[9_u8, 0, 0, 0, 1, b'x'][..], &mut body)
            .await
            .unwrap_err();
        assert!(error.to_string().contains("tag 9"), "{error}");
        let cut = read_frame(&mut &[0_u8, 0, 0, 0, 5, b'x'][..], &mut body).await;
        assert_eq!(cut.unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        let huge = read_frame(&mut &[0_u8, 0xff, 0xff, 0xff, 0xff][..], &mut body).await;
        assert!(huge.unwrap_err().to_string().contains("bytes"));
    }
}
