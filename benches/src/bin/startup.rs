//! Start-up and footprint of the headless host: time from process start to
//! lockfile written, RSS idle, and RSS with N idle WebSocket connections.
//!
//! ```text
//! cargo build --release -p ide-mcp -p ide-mcp-benches
//! target/release/startup --server target/release/ide-mcp --runs 20 --connections 100
//! ```

// Statistics turn counts into floats; the values are far below 2^52.
#![allow(clippy::cast_precision_loss)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use ide_mcp_benches::client::{Connection, Target};

#[derive(Parser, Debug)]
#[command(about = "Start-up time and memory footprint of `ide-mcp serve`")]
struct Cli {
    /// The `ide-mcp` binary.
    #[arg(long)]
    server: PathBuf,
    /// Start-ups to time.
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Idle connections to hold open for the footprint.
    #[arg(long, default_value_t = 100)]
    connections: usize,
}

struct Server {
    child: Child,
    _config: TempDir,
    lockfile: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A directory removed on drop (benches avoid a tempfile dependency).
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> std::io::Result<Self> {
        let dir =
            std::env::temp_dir().join(format!("ide-mcp-{tag}-{}-{}", std::process::id(), unique()));
        std::fs::create_dir_all(&dir)?;
        Ok(Self(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn unique() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

fn start(server: &Path, max_connections: usize) -> std::io::Result<(Server, Duration)> {
    let config = TempDir::new("startup")?;
    let workspace = TempDir::new("ws")?;
    let ide = config.0.join("ide");
    let begun = Instant::now();
    let child = Command::new(server)
        .args(["serve", "--diagnostics", "none", "--max-connections"])
        .arg((max_connections + 1).to_string())
        .arg("--workspace")
        .arg(&workspace.0)
        .env("CLAUDE_CONFIG_DIR", &config.0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let mut server = Server {
        child,
        _config: config,
        lockfile: PathBuf::new(),
    };
    loop {
        if let Some(found) = std::fs::read_dir(&ide).ok().and_then(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|e| e == "lock"))
        }) {
            server.lockfile = found;
            let elapsed = begun.elapsed();
            drop(workspace);
            return Ok((server, elapsed));
        }
        if begun.elapsed() > Duration::from_secs(10) {
            return Err(std::io::Error::other("no lockfile within 10 s"));
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), ide_mcp_benches::client::Error> {
    let cli = Cli::parse();
    let mut times = Vec::with_capacity(cli.runs);
    for _ in 0..cli.runs {
        let (server, elapsed) = start(&cli.server, cli.connections)?;
        times.push(elapsed);
        drop(server);
    }
    times.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;

    let (server, _) = start(&cli.server, cli.connections)?;
    // Let the lockfile's content land and the process settle.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let lock: serde_json::Value = serde_json::from_slice(&std::fs::read(&server.lockfile)?)?;
    let port: u16 = server
        .lockfile
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.parse().ok())
        .ok_or("lockfile name is not <port>.lock")?;
    let token = lock["authToken"].as_str().ok_or("no authToken")?.to_owned();
    let pid = server.child.id();
    let idle = rss_kib(pid);
    let target = Target::Ws { port, token };
    let mut held = Vec::with_capacity(cli.connections);
    for _ in 0..cli.connections {
        held.push(Connection::open(&target).await?);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let loaded = rss_kib(pid);
    let per_connection = loaded.saturating_sub(idle) as f64 / cli.connections.max(1) as f64;
    for conn in held {
        conn.close().await;
    }
    eprintln!(
        "start-up to lockfile: median {:.2} ms, min {:.2} ms, max {:.2} ms ({} runs)",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1]),
        times.len()
    );
    eprintln!(
        "RSS idle: {:.2} MiB; with {} idle connections: {:.2} MiB ({per_connection:.1} KiB per connection)",
        idle as f64 / 1024.0,
        cli.connections,
        loaded as f64 / 1024.0
    );
    Ok(())
}
