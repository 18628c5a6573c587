//! The end-to-end benchmark against the speed of light: runs `bench-server`
//! (ours) and `floor-server` (no work) alternately, A B A B …, for each tool,
//! concurrency and transport (`ws`, `stdio`, `http`: 2026-07-28 stateless
//! requests on keep-alive connections, `http-session`: a 2025-11-25 session),
//! and prints medians and ratios as a Markdown table.
//!
//! ```text
//! cargo build --release -p ide-mcp-benches
//! target/release/e2e --rounds 5 --requests 5000
//! # pinned: the driver on CPU 0, the servers on CPU 1
//! taskset -c 0 target/release/e2e --rounds 5 --requests 5000 --pin-servers 1
//! ```

// Statistics turn counts into floats; the values are far below 2^52.
#![allow(clippy::cast_precision_loss)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use clap::Parser;
use ide_mcp_benches::client::{Connection, Error, Load, Report, Target, run_load};
use ide_mcp_benches::http_client::{HttpTarget, run_http_load};
use tokio::process::{Child, Command};

#[derive(Parser, Debug)]
#[command(about = "Ours vs the floor, end to end, over WebSocket and stdio")]
struct Cli {
    /// Directory holding `bench-server` and `floor-server` (default: beside this binary).
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    /// Alternating rounds per case (medians are reported).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Measured requests per run.
    #[arg(long, default_value_t = 5000)]
    requests: u64,
    /// Unmeasured requests per run.
    #[arg(long, default_value_t = 500)]
    warmup: u64,
    /// Concurrency levels.
    #[arg(long, value_delimiter = ',', default_values_t = [1_usize, 16])]
    concurrency: Vec<usize>,
    /// Transports: `ws`, `stdio`, `http`, `http-session`.
    #[arg(long, value_delimiter = ',', default_values_t = ["ws".to_owned(), "stdio".to_owned()])]
    transports: Vec<String>,
    /// Cases: tool names, `getDiagnostics(uri)`, `tools/list` (default:
    /// the five tools, `getDiagnostics(uri)` and `tools/list`).
    #[arg(long, value_delimiter = ',')]
    tools: Vec<String>,
    /// Server sizes, passed on.
    #[arg(long, default_value_t = 1000)]
    editors: usize,
    /// Server sizes, passed on.
    #[arg(long, default_value_t = 10_000)]
    diagnostics: usize,
    /// How ours serves (`bench-server --runtime`): `serving-thread` (as
    /// `ide-mcp serve` does), `multi-thread` or `current-thread`.
    #[arg(long, default_value = "serving-thread")]
    ours_runtime: String,
    /// Pin the servers to this CPU (through `taskset`); pin the driver to
    /// another one by starting it with `taskset -c N`.
    #[arg(long)]
    pin_servers: Option<usize>,
}

const TOKEN: &str = "e2e-benchmark-token-0123456789abcdef";

/// The method and params of a case: a tool's name (called with what it
/// needs), `getDiagnostics(uri)` (one file's), or `tools/list`.
fn request(case: &str) -> (&'static str, String) {
    let call = |name: &str, arguments: &str| {
        (
            "tools/call",
            format!(r#"{{"name":"{name}","arguments":{arguments}}}"#),
        )
    };
    match case {
        "tools/list" => ("tools/list", "{}".to_owned()),
        "checkDocumentDirty" => call(case, r#"{"filePath":"/ws/src/file3.rs"}"#),
        "getDiagnostics(uri)" => call("getDiagnostics", r#"{"uri":"file:///ws/src/file3.rs"}"#),
        _ => call(case, "{}"),
    }
}

struct Running {
    child: Option<Child>,
    target: Target,
}

async fn start(bin: &Path, transport: &str, cli: &Cli, extra: &[&str]) -> Result<Running, Error> {
    let mut sizes = vec![
        "--editors".to_owned(),
        cli.editors.to_string(),
        "--diagnostics".to_owned(),
        cli.diagnostics.to_string(),
    ];
    sizes.extend(extra.iter().map(|arg| (*arg).to_owned()));
    // `taskset -c CPU server …` when pinned.
    let mut program: Vec<String> = cli
        .pin_servers
        .map(|cpu| vec!["taskset".to_owned(), "-c".to_owned(), cpu.to_string()])
        .unwrap_or_default();
    program.push(bin.display().to_string());
    if transport == "stdio" {
        let mut command = program;
        command.push("--stdio".to_owned());
        command.extend(sizes);
        return Ok(Running {
            child: None,
            target: Target::Stdio { command },
        });
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let flag = if transport == "ws" { "--ws" } else { "--http" };
    let child = Command::new(&program[0])
        .args(&program[1..])
        .args([flag, &port.to_string(), "--token", TOKEN])
        .args(&sizes)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let target = Target::Ws {
        port,
        token: TOKEN.to_owned(),
    };
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok(Running {
                child: Some(child),
                target,
            });
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Err(format!("{} did not listen on {port}", bin.display()).into())
}

async fn measure(
    bin: &Path,
    extra: &[&str],
    transport: &str,
    tool: &str,
    concurrency: usize,
    cli: &Cli,
) -> Result<Report, Error> {
    let mut running = start(bin, transport, cli, extra).await?;
    let (method, params) = request(tool);
    let load = Load {
        method,
        params: &params,
        concurrency,
        warmup: cli.warmup,
        requests: cli.requests,
    };
    let report = if let Some(stateless) = match transport {
        "http" => Some(true),
        "http-session" => Some(false),
        _ => None,
    } {
        let Target::Ws { port, token } = running.target.clone() else {
            return Err("an HTTP server runs on a port".into());
        };
        let target = HttpTarget {
            port,
            token,
            stateless,
        };
        run_http_load(&target, &load).await
    } else {
        let mut conn = Connection::open(&running.target).await?;
        let report = run_load(&mut conn, &load).await;
        conn.close().await;
        report
    };
    if let Some(mut child) = running.child.take() {
        let _ = child.kill().await;
    }
    report
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let cli = Cli::parse();
    let bin_dir = match &cli.bin_dir {
        Some(dir) => dir.clone(),
        None => std::env::current_exe()?
            .parent()
            .ok_or("no directory of this binary")?
            .to_path_buf(),
    };
    let ours = bin_dir.join("bench-server");
    let floor = bin_dir.join("floor-server");
    let ours_extra: &[&str] = &["--runtime", &cli.ours_runtime];
    let tools: Vec<String> = if cli.tools.is_empty() {
        [
            "getCurrentSelection",
            "getOpenEditors",
            "getWorkspaceFolders",
            "getDiagnostics",
            "getDiagnostics(uri)",
            "checkDocumentDirty",
            "tools/list",
        ]
        .map(str::to_owned)
        .to_vec()
    } else {
        cli.tools.clone()
    };
    let mut lines = vec![
        "| transport | tool | C | ours rps | floor rps | rps ratio | ours p50 µs | floor p50 µs | p50 ratio | ours p99 µs | floor p99 µs | bytes |".to_owned(),
        "|---|---|---|---|---|---|---|---|---|---|---|---|".to_owned(),
    ];
    for transport in &cli.transports {
        for tool in &tools {
            for &c in &cli.concurrency {
                let (mut a_rps, mut b_rps, mut a_p50, mut b_p50, mut a_p99, mut b_p99) =
                    (vec![], vec![], vec![], vec![], vec![], vec![]);
                let mut bytes = 0;
                for _ in 0..cli.rounds {
                    let a = measure(&ours, ours_extra, transport, tool, c, &cli).await?;
                    let b = measure(&floor, &[], transport, tool, c, &cli).await?;
                    if a.bytes != b.bytes {
                        return Err(format!(
                            "{tool}: ours sent {} bytes, the floor {}",
                            a.bytes, b.bytes
                        )
                        .into());
                    }
                    bytes = a.bytes / a.requests.max(1);
                    a_rps.push(a.rps());
                    b_rps.push(b.rps());
                    a_p50.push(a.quantile(0.5).as_secs_f64() * 1e6);
                    b_p50.push(b.quantile(0.5).as_secs_f64() * 1e6);
                    a_p99.push(a.quantile(0.99).as_secs_f64() * 1e6);
                    b_p99.push(b.quantile(0.99).as_secs_f64() * 1e6);
                }
                let (ar, br) = (median(a_rps), median(b_rps));
                let (ap, bp) = (median(a_p50), median(b_p50));
                let line = format!(
                    "| {transport} | {tool} | {c} | {ar:.0} | {br:.0} | {:.2} | {ap:.1} | {bp:.1} | {:.2} | {:.1} | {:.1} | {bytes} |",
                    ar / br,
                    ap / bp,
                    median(a_p99),
                    median(b_p99)
                );
                eprintln!("{line}");
                lines.push(line);
            }
        }
    }
    #[allow(clippy::print_stdout)]
    {
        println!("{}", lines.join("\n"));
    }
    Ok(())
}
