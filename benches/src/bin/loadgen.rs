//! An MCP load generator: keeps `--concurrency` requests in flight against any
//! server over WebSocket (with the IDE token), Streamable HTTP (keep-alive
//! connections, 2026-07-28 requests or with `--session` a 2025-11-25 session)
//! or stdio, parses and checks every response, and prints throughput and
//! latency quantiles.
//!
//! ```text
//! loadgen --ws PORT --token T --tool getDiagnostics --concurrency 16 --requests 20000
//! loadgen --http PORT --token T --tool getCurrentSelection --concurrency 16
//! loadgen --tool getOpenEditors --stdio -- bench-server --stdio --editors 1000
//! ```

use clap::Parser;
use ide_mcp_benches::client::{Connection, Load, Target, run_load};
use ide_mcp_benches::http_client::{HttpTarget, run_http_load};

#[derive(Parser, Debug)]
#[command(about = "MCP load generator (WebSocket, Streamable HTTP or stdio)")]
struct Cli {
    /// Port of a WebSocket server on 127.0.0.1.
    #[arg(long, requires = "token", conflicts_with = "stdio")]
    ws: Option<u16>,
    /// Port of a Streamable HTTP server on 127.0.0.1 (endpoint `/mcp`; the
    /// token is the bearer token).
    #[arg(long, requires = "token", conflicts_with_all = ["stdio", "ws"])]
    http: Option<u16>,
    /// Over HTTP: open a 2025-11-25 session rather than send stateless
    /// 2026-07-28 requests.
    #[arg(long, requires = "http")]
    session: bool,
    /// The `x-claude-code-ide-authorization` token.
    #[arg(long)]
    token: Option<String>,
    /// Run the given command and speak to it over its stdio.
    #[arg(long)]
    stdio: bool,
    /// The tool to call (`tools/call`); `--method` overrides.
    #[arg(long, default_value = "getDiagnostics")]
    tool: String,
    /// The tool's arguments as JSON.
    #[arg(long, default_value = "{}")]
    args: String,
    /// A raw JSON-RPC method instead of `tools/call` (e.g. `tools/list`, `ping`).
    #[arg(long)]
    method: Option<String>,
    /// Requests kept in flight.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Measured requests.
    #[arg(long, default_value_t = 10_000)]
    requests: u64,
    /// Unmeasured requests first.
    #[arg(long, default_value_t = 1_000)]
    warmup: u64,
    /// Print one JSON line instead of text.
    #[arg(long)]
    json: bool,
    /// The server command for `--stdio`.
    #[arg(last = true)]
    command: Vec<String>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), ide_mcp_benches::client::Error> {
    let args = Cli::parse();
    let (method, params) = if let Some(method) = &args.method {
        (method.clone(), "{}".to_owned())
    } else {
        let arguments: serde_json::Value = serde_json::from_str(&args.args)?;
        let params = serde_json::json!({"name": args.tool, "arguments": arguments});
        ("tools/call".to_owned(), params.to_string())
    };
    let load = Load {
        method: &method,
        params: &params,
        concurrency: args.concurrency,
        warmup: args.warmup,
        requests: args.requests,
    };
    let report = if let Some(port) = args.http {
        let target = HttpTarget {
            port,
            token: args.token.clone().unwrap_or_default(),
            stateless: !args.session,
        };
        run_http_load(&target, &load).await?
    } else {
        stream_load(&args, &load).await?
    };
    print_report(&args, &report);
    Ok(())
}

/// The load over one WebSocket connection or a child's stdio.
async fn stream_load(
    args: &Cli,
    load: &Load<'_>,
) -> Result<ide_mcp_benches::client::Report, ide_mcp_benches::client::Error> {
    let target = match (args.ws, args.stdio) {
        (Some(port), false) => Target::Ws {
            port,
            token: args.token.clone().unwrap_or_default(),
        },
        (None, true) => Target::Stdio {
            command: args.command.clone(),
        },
        _ => {
            return Err(
                "give --ws PORT --token T, --http PORT --token T, or --stdio -- COMMAND".into(),
            );
        }
    };
    let mut conn = Connection::open(&target).await?;
    let report = run_load(&mut conn, load).await;
    conn.close().await;
    report
}

fn print_report(args: &Cli, report: &ide_mcp_benches::client::Report) {
    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
    if args.json {
        let line = serde_json::json!({
            "requests": report.requests,
            "rps": report.rps(),
            "p50_us": us(report.quantile(0.5)),
            "p90_us": us(report.quantile(0.9)),
            "p99_us": us(report.quantile(0.99)),
            "max_us": us(report.quantile(1.0)),
            "mean_response_bytes": report.bytes / report.requests.max(1),
        });
        #[allow(clippy::print_stdout)]
        {
            println!("{line}");
        }
    } else {
        eprintln!(
            "{} requests in {:.3}s: {:.0} rps; p50 {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max {:.1} µs; {} B/response",
            report.requests,
            report.elapsed.as_secs_f64(),
            report.rps(),
            us(report.quantile(0.5)),
            us(report.quantile(0.9)),
            us(report.quantile(0.99)),
            us(report.quantile(1.0)),
            report.bytes / report.requests.max(1)
        );
    }
}
