//! One server as the live tools reach it: its current life, and the
//! documents open on it.

use std::sync::Arc;

use tokio::sync::watch;

use super::connection::ServerLink;
use super::documents::OpenDocuments;
use crate::live::ServerFacts;

/// One life of a server, once initialized.
#[derive(Clone, Debug)]
pub(crate) struct Running {
    pub(super) link: ServerLink,
    pub(super) life: u64,
    pub(super) facts: ServerFacts,
}

/// Where a server stands, for the questions.
#[derive(Clone, Debug)]
enum Status {
    /// Not started yet, starting, or restarting.
    Down,
    Up(Running),
    /// Shut down, or given up after too many failures.
    Stopped,
}

/// One server as the live tools reach it: its current life, and the
/// documents open on it.
#[derive(Debug)]
pub(crate) struct Access {
    status: watch::Sender<Status>,
    pub(crate) documents: Arc<OpenDocuments>,
}

impl Default for Access {
    fn default() -> Self {
        Self {
            status: watch::Sender::new(Status::Down),
            documents: Arc::default(),
        }
    }
}

impl Access {
    /// The server is initialized and has the host's documents: questions
    /// go to it through `link`.
    pub(crate) fn up(&self, link: ServerLink, facts: ServerFacts) {
        let life = self.documents.life();
        self.status
            .send_replace(Status::Up(Running { link, life, facts }));
    }

    /// The server's life ended; `for_good` when it is not started again.
    /// Its questions fail at once.
    pub(crate) fn down(&self, for_good: bool) {
        let status = if for_good {
            Status::Stopped
        } else {
            Status::Down
        };
        if let Status::Up(running) = self.status.send_replace(status) {
            running.link.fail_all();
        }
    }

    pub(super) fn running(&self) -> Option<Running> {
        match &*self.status.borrow() {
            Status::Up(running) => Some(running.clone()),
            Status::Down | Status::Stopped => None,
        }
    }

    /// Resolves once the server is up or stopped.
    pub(super) async fn settled(&self) {
        let mut status = self.status.subscribe();
        // The sender lives in `self`: the wait cannot fail.
        let _ = status
            .wait_for(|status| !matches!(status, Status::Down))
            .await;
    }
}
