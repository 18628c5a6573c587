//! Reads under writes: `getCurrentSelection` and `checkDocumentDirty` latency
//! (p50/p99) on 2 reader threads while a writer publishes 10 000 document
//! snapshots per second, against the same readers idle; and the writer's
//! top publish rate alone and with the 2 readers running.
//!
//! ```text
//! cargo run --release -p ide-mcp-benches --bin reads-under-writes
//! ```

// Statistics turn counts into floats; the values are far below 2^52.
#![allow(clippy::cast_precision_loss, clippy::cast_sign_loss)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use clap::Parser;
use ide_mcp_runtime::ResultOut;
use ide_mcp_tools::memory::MemoryWorkspace;
use ide_mcp_tools::{BufferId, DocumentHandle, EditorPorts};
use lsp_types::Position;

#[derive(Parser, Debug)]
#[command(about = "Read latency while a writer publishes snapshots")]
struct Cli {
    /// Seconds per phase.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Snapshots per second the writer publishes in the latency phase.
    #[arg(long, default_value_t = 10_000)]
    rate: u64,
    /// Alternating rounds (idle, loaded); medians are reported.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Reader threads (the first reads the selection, the others dirty flags).
    #[arg(long, default_value_t = 2)]
    readers: usize,
}

const PATH: &str = "/ws/src/main.rs";

fn setup() -> (MemoryWorkspace, DocumentHandle, EditorPorts) {
    let ws = MemoryWorkspace::new();
    let mut text = String::new();
    for i in 0..2000 {
        let _ = writeln!(text, "    let value_{i} = compute({i}, \"ünï\");");
    }
    // The editor keeps the handle `open` gives and publishes through it.
    let handle = ws.open(BufferId(1), Some(Path::new(PATH)), "rust", &text);
    ws.select(BufferId(1), Position::new(1000, 4), Position::new(1001, 10));
    let cx = ws.editor_ports().workspace_folder("/ws").build();
    (ws, handle, cx)
}

/// Runs `readers` readers for `duration`; returns their sorted latencies.
fn read(cx: &EditorPorts, readers: usize, duration: Duration) -> Vec<Duration> {
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..readers)
        .map(|r| {
            let cx = cx.clone();
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let mut out = Vec::with_capacity(4096);
                let mut latencies = Vec::with_capacity(1 << 20);
                while !stop.load(Ordering::Relaxed) {
                    let begun = Instant::now();
                    out.clear();
                    if r == 0 {
                        ResultOut::new(&mut out)
                            .json_text(&ide_mcp_tools::get_current_selection(&cx));
                    } else {
                        ResultOut::new(&mut out)
                            .json_text(&ide_mcp_tools::check_document_dirty(&cx, PATH.to_owned()));
                    }
                    black_box(out.len());
                    latencies.push(begun.elapsed());
                }
                latencies
            })
        })
        .collect();
    thread::sleep(duration);
    stop.store(true, Ordering::Relaxed);
    let mut all: Vec<Duration> = readers
        .into_iter()
        .flat_map(|r| r.join().expect("reader"))
        .collect();
    all.sort_unstable();
    all
}

/// Publishes snapshots, paced to `rate` per second (0 = as fast as possible),
/// until `stop`; returns how many per second it managed.
fn write(handle: &DocumentHandle, rate: u64, stop: &AtomicBool) -> f64 {
    let begun = Instant::now();
    let mut published = 0_u64;
    while !stop.load(Ordering::Relaxed) {
        handle.update(|doc| {
            let mut next = doc.clone();
            let at = (published as usize * 7) % 1000;
            next.text.insert(at, "x");
            next.text.remove(at..=at);
            next.version += 1;
            next.dirty = published.is_multiple_of(2);
            next
        });
        published += 1;
        if rate > 0 {
            let due = begun + Duration::from_secs_f64(published as f64 / rate as f64);
            while Instant::now() < due {
                std::hint::spin_loop();
                if stop.load(Ordering::Relaxed) {
                    break;
                }
            }
        }
    }
    published as f64 / begun.elapsed().as_secs_f64()
}

fn quantile(sorted: &[Duration], q: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1e9
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[allow(clippy::cast_sign_loss)]
fn main() {
    let cli = Cli::parse();
    let duration = Duration::from_secs_f64(cli.seconds);
    let (_ws, handle, cx) = setup();
    let (mut idle50, mut idle99, mut load50, mut load99) = (vec![], vec![], vec![], vec![]);
    let (mut rate_alone, mut rate_with) = (vec![], vec![]);
    let mut paced = vec![];
    for _ in 0..cli.rounds {
        let idle = read(&cx, cli.readers, duration);
        idle50.push(quantile(&idle, 0.5));
        idle99.push(quantile(&idle, 0.99));

        let stop = AtomicBool::new(false);
        let (loaded, rate) = thread::scope(|s| {
            let writer = s.spawn(|| write(&handle, cli.rate, &stop));
            let loaded = read(&cx, cli.readers, duration);
            stop.store(true, Ordering::Relaxed);
            (loaded, writer.join().expect("writer"))
        });
        paced.push(rate);
        load50.push(quantile(&loaded, 0.5));
        load99.push(quantile(&loaded, 0.99));

        let stop = AtomicBool::new(false);
        rate_alone.push(thread::scope(|s| {
            let writer = s.spawn(|| write(&handle, 0, &stop));
            thread::sleep(duration);
            stop.store(true, Ordering::Relaxed);
            writer.join().expect("writer")
        }));
        let stop = AtomicBool::new(false);
        rate_with.push(thread::scope(|s| {
            let writer = s.spawn(|| write(&handle, 0, &stop));
            let _ = read(&cx, cli.readers, duration);
            stop.store(true, Ordering::Relaxed);
            writer.join().expect("writer")
        }));
    }
    let (i50, i99, l50, l99) = (
        median(idle50),
        median(idle99),
        median(load50),
        median(load99),
    );
    eprintln!(
        "reads idle: p50 {i50:.0} ns, p99 {i99:.0} ns; under {:.0} publishes/s: p50 {l50:.0} ns, p99 {l99:.0} ns; p99 ratio {:.2}",
        median(paced),
        l99 / i99
    );
    let (alone, with) = (median(rate_alone), median(rate_with));
    eprintln!(
        "writer top rate: alone {alone:.0}/s, with {} readers {with:.0}/s; ratio {:.2}",
        cli.readers,
        with / alone
    );
}
