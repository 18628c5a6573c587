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
use ide_mcp_runtime::{HttpOptions, WsOptions};

/// Where and how big.
#[derive(Parser, Debug)]
#[command(about = "Serve the five read tools over synthetic state (benchmarks)")]
struct Cli {
    #[command(flatten)]
    server: ServerArgs,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let (_ws, cx) = synth::workspace(cli.server.size());
        let server = synth::server(cx)?;
        if let Some(port) = cli.server.ws {
            let handle = server
                .serve_ws(WsOptions {
                    port: Some(port),
                    write_lockfile: false,
                    auth_token: cli.server.token.clone(),
                    ..WsOptions::default()
                })
                .await?;
            handle.run_until_signal().await?;
        } else if let Some(port) = cli.server.http {
            let handle = server
                .serve_http(HttpOptions {
                    port: Some(port),
                    auth_token: cli.server.token.clone(),
                    ..HttpOptions::default()
                })
                .await?;
            tokio::signal::ctrl_c().await?;
            handle.shutdown().await;
        } else if cli.server.stdio {
            server.serve_stdio().await?;
        } else {
            return Err("give --stdio, --ws PORT --token T or --http PORT --token T".into());
        }
        Ok(())
    })
}
