//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) through the
//! fuzz targets' bodies on the stable toolchain, so that CI exercises every
//! seed (and every crash once fixed and committed) without nightly or
//! libFuzzer.

#[allow(unreachable_pub)]
#[path = "../../fuzz/src/lib.rs"]
mod bodies;

use std::path::PathBuf;

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

fn replay(target: &str, body: fn(&[u8])) {
    let files = corpus(target);
    assert!(files.len() >= 20, "{target}: only {} seeds", files.len());
    for (path, bytes) in files {
        let outcome = std::panic::catch_unwind(|| body(&bytes));
        assert!(outcome.is_ok(), "{target}: {} fails", path.display());
    }
}

#[test]
fn frame_corpus() {
    replay("frame", bodies::frame);
}

#[test]
fn jsonrpc_corpus() {
    replay("jsonrpc", bodies::jsonrpc);
}

#[test]
fn uri_position_corpus() {
    replay("uri_position", bodies::uri_position);
}

#[test]
fn admission_corpus() {
    replay("admission", bodies::admission);
}

#[test]
fn uri_template_corpus() {
    replay("uri_template", bodies::uri_template);
}
