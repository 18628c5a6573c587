//! The proxy process: spawns the server, runs the two pumps, attaches to
//! the workspace's IDE host, and ends with the server.

use std::fs::File;
use std::io;
use std::os::fd::AsFd as _;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::attach::{Attacher, attach};
use super::child::{EXIT_GRACE, ServerProcess, enlarge_pipe, exit_code, wait_or_kill};
use super::handoff::HandOff;
use super::options::{Observation, ProxyOptions};
use super::pump::{self, Blind, PumpEvent, Watch};
use super::sink::Sink;
use super::tap::Tap;
use crate::observer::Observer;
use crate::signals::StopSignals;
use crate::workspace::LspWorkspace;

/// How long the server's last output may take to reach the editor once the
/// server has exited.
const OUTPUT_DRAIN: Duration = Duration::from_secs(1);

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
    // The IDE's own requests for the editor come from the host (this
    // stream's workspace serves no tools); what the observer sends the
    // editor itself (diagnostics published again with a review's hunks)
    // comes from here.
    let (observer, mut to_editor) = Observer::new(ws.clone());
    let tap = Arc::new(Tap::new(observer));
    let editor_out = editor.clone();
    let sending = tokio::spawn(async move {
        while let Some(message) = to_editor.recv().await {
            editor_out.send(message.as_bytes());
        }
    });
    let watch: Arc<dyn Watch> = match options.observation {
        Observation::Inline => tap.clone(),
        Observation::HandOff => Arc::new(HandOff::new(tap.clone())?),
        Observation::Off => Arc::new(Blind),
    };
    let (events_tx, mut events) = mpsc::unbounded_channel();
    start_pumps(stdout, &watch, &to_server, &editor, events_tx)?;
    let (stop, stopped) = watch::channel(false);
    let forward_only = options.observation == Observation::Off;
    let attacher = Attacher {
        options,
        ws,
        tap,
        watch,
        editor,
        server: to_server.clone(),
        stop: stopped,
    };
    let attaching = tokio::spawn(async move {
        if !forward_only {
            attach(attacher).await;
        }
    });
    let (status, output_ended) = server_end(&mut child, &mut events, &to_server).await?;
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
    // Detaching costs the host this stream; the host itself lives on.
    stop.send_replace(true);
    let _ = attaching.await;
    sending.abort();
    Ok(exit_code(status))
}

/// Starts the two pumps, on threads of their own: the editor's stdin to the
/// server, and the server's `stdout` to the editor, both seen by `watch`.
fn start_pumps(
    stdout: io::PipeReader,
    watch: &Arc<dyn Watch>,
    to_server: &Sink,
    editor: &Sink,
    events: mpsc::UnboundedSender<PumpEvent>,
) -> io::Result<()> {
    let input = File::from(io::stdin().as_fd().try_clone_to_owned()?);
    // The editor's pipes too, when they are pipes.
    enlarge_pipe(&input);
    enlarge_pipe(io::stdout());
    spawn_pump("lsp-proxy-in", {
        let (watch, to_server, editor, events) = (
            watch.clone(),
            to_server.clone(),
            editor.clone(),
            events.clone(),
        );
        move || pump::editor_to_server(input, &to_server, &editor, &*watch, &events)
    })?;
    spawn_pump("lsp-proxy-out", {
        let (watch, editor) = (watch.clone(), editor.clone());
        move || pump::server_to_editor(stdout, &editor, &*watch, &events)
    })
}

/// Waits for the server to end: by itself, after the editor's `exit` (or
/// its end) within [`EXIT_GRACE`], or at a signal; its status, and whether
/// its output has ended already.
async fn server_end(
    child: &mut tokio::process::Child,
    events: &mut mpsc::UnboundedReceiver<PumpEvent>,
    to_server: &Sink,
) -> io::Result<(std::process::ExitStatus, bool)> {
    let mut output_ended = false;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status?,
            event = events.recv() => match event {
                Some(PumpEvent::ExitSent | PumpEvent::EditorEnded) => {
                    break wait_or_kill(child, EXIT_GRACE).await?;
                }
                // The exit status follows.
                Some(PumpEvent::ServerEnded) => output_ended = true,
                None => {}
            },
            () = terminated() => {
                tracing::info!("signal received; ending the server");
                to_server.close();
                break wait_or_kill(child, Duration::from_secs(1)).await?;
            }
        }
    };
    Ok((status, output_ended))
}

fn spawn_pump(name: &str, pump: impl FnOnce() + Send + 'static) -> io::Result<()> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(pump)
        .map(drop)
}

/// Resolves at SIGTERM, SIGINT or SIGHUP.
async fn terminated() {
    match StopSignals::listen() {
        Some(mut signals) => {
            signals.next().await;
        }
        None => std::future::pending().await,
    }
}
