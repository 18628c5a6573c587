//! The five read tools served through the real runtime, over synthetic
//! in-memory state, for the end-to-end benchmark.
//!
//! ```text
//! bench-server --stdio --editors 1000 --diagnostics 10000 --selection-bytes 100
//! bench-server --ws 4711 --token <32+ chars> --editors 1000 --diagnostics 10000
//! bench-server --http 4712 --token <32+ chars>
//! ```

use clap::Parser;
use ide_mcp_benches::synth::{self, ServerArgs};
use ide_mcp_runtime::{HttpOptions, ServingThread, WsOptions};

/// Where and how big.
#[derive(Parser, Debug)]
#[command(about = "Serve the five read tools over synthetic state (benchmarks)")]
struct Cli {
    #[command(flatten)]
    server: ServerArgs,
    /// How to serve: `serving-thread` (a `ServingThread` beside the main
    /// multi-thread runtime, as `ide-mcp serve` does), `multi-thread` (the
    /// main runtime) or `current-thread` (the main runtime, current-thread).
    #[arg(long, value_enum, default_value_t = Flavour::Serving)]
    runtime: Flavour,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Flavour {
    #[value(name = "serving-thread")]
    Serving,
    #[value(name = "multi-thread")]
    Multi,
    #[value(name = "current-thread")]
    Current,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let mut runtime = if cli.runtime == Flavour::Current {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let runtime = runtime.enable_all().build()?;
    let serving = (cli.runtime == Flavour::Serving)
        .then(|| ServingThread::start("bench-server"))
        .transpose()?;
    runtime.block_on(async {
        let (_ws, cx) = synth::workspace(cli.server.size());
        let server = synth::server(cx)?;
        if let Some(port) = cli.server.ws {
            let options = WsOptions {
                port: Some(port),
                write_lockfile: false,
                auth_token: cli.server.token.clone(),
                ..WsOptions::default()
            };
            let server = server.clone();
            let handle = on(
                serving.as_ref(),
                async move { server.serve_ws(options).await },
            )
            .await?;
            handle.run_until_signal().await?;
        } else if let Some(port) = cli.server.http {
            let options = HttpOptions {
                port: Some(port),
                auth_token: cli.server.token.clone(),
                ..HttpOptions::default()
            };
            let server = server.clone();
            let handle = on(
                serving.as_ref(),
                async move { server.serve_http(options).await },
            )
            .await?;
            tokio::signal::ctrl_c().await?;
            handle.shutdown().await;
        } else if cli.server.stdio {
            on(serving.as_ref(), async move { server.serve_stdio().await }).await?;
        } else {
            return Err("give --stdio, --ws PORT --token T or --http PORT --token T".into());
        }
        Ok(())
    })
}

/// Runs `start` (a transport's start-up, and so its connections) on the
/// serving thread when there is one, else on the current runtime.
async fn on<F>(serving: Option<&ServingThread>, start: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match serving {
        Some(serving) => serving.run(start).await,
        None => start.await,
    }
}
