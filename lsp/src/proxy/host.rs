//! What the proxy serves: the IDE state its observers fill, one observer per
//! stream (this proxy's own, and one per follower when it leads).

use ide_mcp_tools::ReadContext;

use super::pump::{Blind, Watch};
use super::relay::{Copy, Direction};

/// The IDE state of one proxy and the observers that feed it.
#[derive(Clone, Debug, Default)]
pub struct Host {
    context: ReadContext,
}

impl Host {
    /// An empty IDE.
    pub fn new() -> Self {
        Self {
            context: ReadContext::empty(),
        }
    }

    /// The observer of this proxy's own stream.
    pub fn watch(&self) -> Box<dyn Watch> {
        Box::new(Blind)
    }

    /// Synthetic messages that rebuild this proxy's own stream elsewhere.
    pub fn replay(&self) -> Vec<Copy> {
        Vec::new()
    }

    /// A feed for a follower's stream: its copies go through an observer of
    /// their own into this state; dropping the feed forgets the stream.
    pub fn follower(&self) -> FollowerFeed {
        FollowerFeed {
            watch: Box::new(Blind),
        }
    }

    /// The ports the tools read.
    pub fn context(&self) -> &ReadContext {
        &self.context
    }
}

/// The leader's observer of one follower's stream.
pub struct FollowerFeed {
    watch: Box<dyn Watch>,
}

impl FollowerFeed {
    /// One copied message; verdicts are the follower's business.
    pub fn feed(&mut self, direction: Direction, body: &[u8]) {
        match direction {
            Direction::FromEditor => drop(self.watch.editor_message(body)),
            Direction::FromServer => drop(self.watch.server_message(body)),
        }
    }
}
