//! A message observed off the forwarding path, its one buffer shared by
//! the observer and the link to the host: a large `didOpen` is not copied
//! for the host, and once the link has sent it its buffer serves the next
//! large message. The plain way, [`Shared::copy_of`], copies a body.
// BENCHMARKS.md §10 ("LSP proxy"): the copy for the host link.

use std::sync::Arc;

use crate::framing::Message;

/// A message's bytes, shared; reads as its body.
#[derive(Clone, Debug)]
pub struct Shared(Arc<Message>);

impl Shared {
    /// Shares `message` as it is, without a copy.
    pub(crate) fn new(message: Message) -> Self {
        Self(Arc::new(message))
    }

    /// Shares `body` as it is.
    pub(crate) fn of_body(body: Vec<u8>) -> Self {
        Self::new(Message::from_parts(body, 0))
    }

    /// A copy of `body` (the fallback: a body the caller keeps).
    pub fn copy_of(body: &[u8]) -> Self {
        Self::of_body(body.to_vec())
    }

    /// The body.
    pub fn body(&self) -> &[u8] {
        self.0.body()
    }

    /// The message back, once no one else holds it; otherwise `self`.
    pub(crate) fn reclaim(self) -> Result<Message, Self> {
        Arc::try_unwrap(self.0).map_err(Self)
    }
}

impl std::ops::Deref for Shared {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.body()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_and_copied_read_the_same_and_the_buffer_comes_back() {
        let message = Message::from_body(r#"{"method":"textDocument/didOpen"}"#);
        let copied = Shared::copy_of(message.body());
        let start = message.as_bytes().as_ptr();
        let shared = Shared::new(message);
        assert_eq!(&*shared, &*copied);
        assert_eq!(shared.body(), br#"{"method":"textDocument/didOpen"}"#);
        let held = shared.clone();
        let shared = shared.reclaim().expect_err("the link still holds it");
        drop(held);
        let message = shared.reclaim().expect("no one else holds it");
        assert_eq!(message.as_bytes().as_ptr(), start, "the same buffer");
    }
}
