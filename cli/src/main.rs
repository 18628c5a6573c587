//! `ide-mcp`: the headless host. See `ide-mcp --help`.
//!
//! Command output (`tools`, `call`) goes to stdout; logs go to stderr
//! (`RUST_LOG` sets the filter, `info` by default).

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser as _;
use ide_mcp::args::{Cli, Command};
use ide_mcp::run;
// The tools register themselves through a link-time slice: keep the crate linked.
use ide_mcp_tools as _;
use tracing_subscriber::EnvFilter;

/// How long shutdown waits for leftover blocking work (a stdin read) to end.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_millis(500);

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        #[cfg(unix)]
        Command::LspProxy(args) => return lsp_proxy(args),
        #[cfg(unix)]
        Command::Host(args) => return host(args),
        #[cfg(unix)]
        Command::LspRecord(args) => {
            return ide_mcp::lsp_record::run(args).unwrap_or_else(|error| {
                eprintln!("error: {error}");
                ExitCode::FAILURE
            });
        }
        _ => {}
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    // stdout is locked only by the commands that print: in `serve --stdio`
    // the runtime writes the wire there.
    let outcome = runtime.block_on(async {
        match &cli.command {
            Command::Serve(args) => run::serve(args).await.map(|()| true),
            Command::Bridge(args) => ide_mcp::bridge::run(args).await.map(|()| true),
            Command::Tools(args) => run::tools(args, &mut std::io::stdout().lock()),
            Command::Call(args) => run::call(args, &mut std::io::stdout().lock()).await,
            #[cfg(unix)]
            Command::LspProxy(_) | Command::Host(_) | Command::LspRecord(_) => {
                unreachable!("handled above")
            }
        }
    });
    runtime.shutdown_timeout(SHUTDOWN_TIMEOUT);
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(unix)]
/// The two-thread runtime of `lsp-proxy` and `host`, each worker started
/// with `on_start`; `None`, logged, when it cannot start.
fn two_thread_runtime(on_start: fn()) -> Option<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .on_thread_start(on_start)
        .enable_all()
        .build()
        .inspect_err(|error| tracing::error!(%error, "cannot start the async runtime"))
        .ok()
}

#[cfg(unix)]
/// `ide-mcp lsp-proxy`: stdout is the editor's wire and stderr may be a
/// broken pipe, so nothing here prints; errors go to the log.
fn lsp_proxy(args: &ide_mcp::proxy::LspProxyArgs) -> ExitCode {
    let Ok(_flush) = args.init_logging() else {
        return ExitCode::FAILURE;
    };
    // Forwarding runs on threads of its own; the runtime (signals, the
    // server's exit, the link to the IDE host) yields to it.
    let Some(runtime) = two_thread_runtime(ide_mcp_lsp::background::lower_priority) else {
        return ExitCode::FAILURE;
    };
    let outcome = runtime.block_on(ide_mcp_lsp::proxy::run(args.options()));
    runtime.shutdown_timeout(SHUTDOWN_TIMEOUT);
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            tracing::error!(%error, "lsp-proxy failed");
            ExitCode::FAILURE
        }
    }
}

#[cfg(unix)]
/// `ide-mcp host`: detached from any terminal, so it logs to `--log` and
/// ends quietly when another host already serves the workspace.
fn host(args: &ide_mcp::proxy::HostArgs) -> ExitCode {
    let Ok(_flush) = args.init_logging() else {
        return ExitCode::FAILURE;
    };
    let options = match args.options() {
        Ok(options) => options,
        Err(error) => {
            tracing::error!(%error, "cannot serve the IDE");
            return ExitCode::FAILURE;
        }
    };
    // The whole host yields to the editors' forwarding: its threads inherit
    // this one's priority.
    ide_mcp_lsp::background::lower_priority();
    let Some(runtime) = two_thread_runtime(|| {}) else {
        return ExitCode::FAILURE;
    };
    let outcome = runtime.block_on(async {
        let dir = ide_mcp_lsp::host::private_dir()?;
        ide_mcp_lsp::host::serve(&options, &dir, host_stop()).await
    });
    runtime.shutdown_timeout(SHUTDOWN_TIMEOUT);
    match outcome {
        Ok(ending) => {
            tracing::info!(?ending, "host ended");
            ExitCode::SUCCESS
        }
        Err(error) => {
            tracing::error!(%error, "the host failed");
            ExitCode::FAILURE
        }
    }
}

#[cfg(unix)]
/// Resolves at SIGTERM or SIGINT; SIGHUP (a terminal closing on a host
/// started from it) is ignored: the host outlives terminals and editors.
async fn host_stop() {
    use ide_mcp_lsp::signals::{StopSignal, StopSignals};
    let Some(mut signals) = StopSignals::listen() else {
        return std::future::pending().await;
    };
    while signals.next().await == StopSignal::HangUp {}
}
