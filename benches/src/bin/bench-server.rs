//! The five read tools served through the real runtime, over synthetic
//! in-memory state, for the end-to-end benchmark.
//!
//! ```text
//! bench-server --stdio --editors 1000 --diagnostics 10000 --selection-bytes 100
//! bench-server --ws 4711 --token <32+ chars> --editors 1000 --diagnostics 10000
//! ```

use clap::Parser;
use ide_mcp_benches::synth::{self, Size};
use ide_mcp_runtime::{Server, WsOptions};

/// Where and how big.
#[derive(Parser, Debug)]
#[command(about = "Serve the five read tools over synthetic state (benchmarks)")]
pub struct Cli {
    /// Serve newline-delimited JSON-RPC on stdin/stdout.
    #[arg(long, conflicts_with = "ws")]
    stdio: bool,
    /// Serve the IDE WebSocket on 127.0.0.1:PORT (no lockfile).
    #[arg(long, requires = "token")]
    ws: Option<u16>,
    /// The auth token clients must send (at least 32 characters).
    #[arg(long)]
    token: Option<String>,
    /// Open files `/ws/src/file{i}.rs`, the first one active.
    #[arg(long, default_value_t = 1000)]
    editors: usize,
    /// Diagnostics, spread evenly over the files.
    #[arg(long, default_value_t = 10_000)]
    diagnostics: usize,
    /// Bytes selected in the active file.
    #[arg(long, default_value_t = 100)]
    selection_bytes: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let (_ws, cx) = synth::workspace(Size {
            editors: cli.editors,
            diagnostics: cli.diagnostics,
            selection_bytes: cli.selection_bytes,
        });
        let server = Server::builder("bench-server", env!("CARGO_PKG_VERSION"))
            .state(cx)
            .build()?;
        if let Some(port) = cli.ws {
            let handle = server
                .serve_ws(WsOptions {
                    port: Some(port),
                    write_lockfile: false,
                    auth_token: cli.token.clone(),
                    ..WsOptions::default()
                })
                .await?;
            handle.run_until_signal().await?;
        } else if cli.stdio {
            server.serve_stdio().await?;
        } else {
            return Err("give --stdio or --ws PORT --token T".into());
        }
        Ok(())
    })
}
