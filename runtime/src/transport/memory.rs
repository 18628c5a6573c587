//! The in-memory twin of the transports: a session driven over channels, for
//! tests and benchmarks that need no socket.

use std::io;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::connection;
use crate::server::Server;
use crate::transport::wire::{Limits, Outbox, Recv, Wire};

/// How many messages may wait in each direction of an in-memory connection.
pub const MEMORY_QUEUE: usize = 64;

/// The client end of an in-memory connection ([`Server::connect_memory`]).
///
/// Messages go through the same session and connection loop as a socket's,
/// one JSON-RPC message per `send`/`recv`.
#[derive(Debug)]
pub struct MemoryClient {
    tx: Option<mpsc::Sender<Vec<u8>>>,
    rx: mpsc::Receiver<String>,
    task: JoinHandle<io::Result<()>>,
}

impl MemoryClient {
    /// Sends one message to the server.
    pub async fn send(&self, message: impl Into<Vec<u8>>) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(message.into()).await;
        }
    }

    /// The next message from the server; `None` once the connection ended.
    pub async fn recv(&mut self) -> Option<String> {
        self.rx.recv().await
    }

    /// A message the server already sent, without waiting.
    pub fn try_recv(&mut self) -> Option<String> {
        self.rx.try_recv().ok()
    }

    /// Sends `message` and waits for the next message from the server.
    pub async fn request(&mut self, message: impl Into<Vec<u8>>) -> String {
        self.send(message).await;
        self.recv().await.expect("the in-memory connection ended")
    }

    /// Opens a 2025-11-25 session as a client does: `initialize` (id 0, no
    /// capabilities, client `t` version `0`), then `notifications/initialized`;
    /// returns the answer to `initialize`.
    pub async fn initialize(&mut self) -> String {
        let answer = self
            .request(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#)
            .await;
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        answer
    }

    /// Ends the input (like a closed pipe) and waits for the connection to
    /// answer what is running and finish; returns the messages still unread.
    pub async fn close(mut self) -> Vec<String> {
        self.tx = None;
        let mut rest = Vec::new();
        while let Some(message) = self.rx.recv().await {
            rest.push(message);
        }
        let _ = (&mut self.task).await;
        rest
    }
}

impl Drop for MemoryClient {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct MemoryWire {
    rx: mpsc::Receiver<Vec<u8>>,
    tx: mpsc::Sender<String>,
    current: Vec<u8>,
}

impl Wire for MemoryWire {
    const TERMINATOR: Option<u8> = None;
    const DRAIN_ON_EOF: bool = true;

    async fn recv(&mut self) -> Recv {
        match self.rx.recv().await {
            Some(message) => {
                self.current = message;
                Recv::Message
            }
            None => Recv::Closed,
        }
    }

    fn message(&self) -> &[u8] {
        &self.current
    }

    async fn send(&mut self, out: &Outbox) -> io::Result<()> {
        for message in out.messages() {
            let text = String::from_utf8_lossy(message).into_owned();
            if self.tx.send(text).await.is_err() {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
        }
        Ok(())
    }

    async fn close(&mut self) {}
}

impl Server {
    /// Connects an in-memory client to this server (spawned on the current
    /// tokio runtime).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = ide_mcp_runtime::Server::builder("editor", "1.0")
    ///     .registry(std::sync::Arc::new(ide_mcp_runtime::Registry::from_tools([]).unwrap()))
    ///     .build()
    ///     .unwrap();
    /// let mut client = server.connect_memory();
    /// let answer = client.request(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await;
    /// assert_eq!(answer, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    /// # }
    /// ```
    pub fn connect_memory(&self) -> MemoryClient {
        let (client_tx, server_rx) = mpsc::channel(MEMORY_QUEUE);
        let (server_tx, client_rx) = mpsc::channel(MEMORY_QUEUE);
        let wire = MemoryWire {
            rx: server_rx,
            tx: server_tx,
            current: Vec::new(),
        };
        let limits = Limits::with_write_timeout(std::time::Duration::from_hours(365 * 24));
        let task = tokio::spawn(connection::run(self.clone(), wire, limits, None));
        MemoryClient {
            tx: Some(client_tx),
            rx: client_rx,
            task,
        }
    }
}
