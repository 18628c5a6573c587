//! The proxy process: spawns the server, runs the two pumps, takes part in
//! the election, and ends with the server.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::AsFd as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::child::{EXIT_GRACE, ServerProcess, enlarge_pipe, exit_code, wait_or_kill};
use super::coordinate::{Coordinator, coordinate};
use super::handoff::HandOff;
use super::pump::{self, Blind, PumpEvent, Watch};
use super::sink::Sink;
use super::tap::Tap;
use crate::observer::Observer;
use crate::workspace::LspWorkspace;

/// How long the server's last output may take to reach the editor once the
/// server has exited.
const OUTPUT_DRAIN: Duration = Duration::from_secs(1);

/// How long the IDE's WebSocket may take to close when the proxy ends.
const SERVE_SHUTDOWN: Duration = Duration::from_secs(3);

/// How `ide-mcp lsp-proxy` runs.
#[derive(Clone, Debug, Default)]
pub struct ProxyOptions {
    /// The language server's program.
    pub server: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The IDE's name in the lockfile (default: the editor's `clientInfo.name`).
    pub ide_name: Option<String>,
    /// The workspace folders (default: the editor's, from `initialize`).
    pub workspaces: Vec<PathBuf>,
    /// Claude Code's configuration directory, where the lockfile goes
    /// (default: `CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub config_dir: Option<PathBuf>,
    /// Where the observer runs (or not at all).
    pub observation: Observation,
}

/// Where the observer runs; BENCHMARKS.md ("LSP proxy") compares them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Observation {
    /// On the forwarding threads, before each message is forwarded.
    Inline,
    /// On a thread of its own, through a bounded queue that keeps both
    /// directions in order ([`HandOff`]); the few messages whose verdict
    /// matters are observed inline once the queue has drained. The default:
    /// observation is then off the path of every message, a keystroke's or
    /// the one behind a large `didOpen`.
    #[default]
    HandOff,
    /// Nowhere: forward only, serve no IDE (the benchmarks' baseline).
    Off,
}

/// Runs the proxy on this process's stdin and stdout until the server ends;
/// returns the exit code to end with (the server's).
pub async fn run(options: ProxyOptions) -> io::Result<u8> {
    let ServerProcess {
        mut child,
        stdin,
        stdout,
    } = ServerProcess::spawn(&options.server, &options.args)?;
    let editor = Sink::stdout()?;
    let to_server = Sink::new("server", stdin);
    let ws = Arc::new(LspWorkspace::new());
    if !options.workspaces.is_empty() {
        ws.override_folders(options.workspaces.clone());
    }
    let (observer, mut requests) = Observer::new(ws.clone());
    let tap = Arc::new(Tap::new(observer));
    // What the observer asks the editor on its own (`window/showDocument`).
    let requests_to = editor.clone();
    let requesting = tokio::spawn(async move {
        while let Some(request) = requests.recv().await {
            requests_to.send(request.as_bytes());
        }
    });
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let input = File::from(io::stdin().as_fd().try_clone_to_owned()?);
    // The editor's pipes too, when they are pipes.
    enlarge_pipe(&input);
    enlarge_pipe(io::stdout());
    let watch: Arc<dyn Watch> = match options.observation {
        Observation::Inline => tap.clone(),
        Observation::HandOff => Arc::new(HandOff::new(tap.clone())?),
        Observation::Off => Arc::new(Blind),
    };
    spawn_pump("lsp-proxy-in", {
        let (watch, to_server, editor, events) = (
            watch.clone(),
            to_server.clone(),
            editor.clone(),
            events_tx.clone(),
        );
        move || pump::editor_to_server(input, &to_server, &editor, &*watch, &events)
    })?;
    spawn_pump("lsp-proxy-out", {
        let editor = editor.clone();
        move || pump::server_to_editor(stdout, &editor, &*watch, &events_tx)
    })?;
    let (stop, stopped) = watch::channel(false);
    let forward_only = options.observation == Observation::Off;
    let coordinator = Coordinator {
        options,
        ws,
        tap,
        stop: stopped,
    };
    let coordination = tokio::spawn(async move {
        if !forward_only {
            coordinate(coordinator).await;
        }
    });
    let mut output_ended = false;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status?,
            event = events.recv() => match event {
                Some(PumpEvent::ExitSent | PumpEvent::EditorEnded) => {
                    break wait_or_kill(&mut child, EXIT_GRACE).await?;
                }
                // The exit status follows.
                Some(PumpEvent::ServerEnded) => output_ended = true,
                None => {}
            },
            () = terminated() => {
                tracing::info!("signal received; ending the server");
                to_server.close();
                break wait_or_kill(&mut child, Duration::from_secs(1)).await?;
            }
        }
    };
    tracing::info!(%status, "the language server ended");
    // Its last bytes reach the editor before the proxy ends (unless a
    // descendant of the server keeps its output open).
    if !output_ended {
        let drained = async {
            while let Some(event) = events.recv().await {
                if event == PumpEvent::ServerEnded {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(OUTPUT_DRAIN, drained).await;
    }
    stop.send_replace(true);
    requesting.abort();
    if tokio::time::timeout(SERVE_SHUTDOWN, coordination)
        .await
        .is_err()
    {
        tracing::warn!("the IDE did not shut down in time");
    }
    Ok(exit_code(status))
}

fn spawn_pump(name: &str, pump: impl FnOnce() + Send + 'static) -> io::Result<()> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(pump)
        .map(drop)
}

/// Resolves at SIGTERM, SIGINT or SIGHUP.
async fn terminated() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
        _ = hup.recv() => {}
    }
}
