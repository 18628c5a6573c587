//! Instruction-count probe (run under `valgrind --tool=callgrind`).
use ide_mcp_benches::synth::{self, Size};
use ide_mcp_runtime::result::write_json_text;
use std::hint::black_box;

fn main() {
    let variant = std::env::args().nth(1).unwrap();
    let n: usize = std::env::args().nth(2).unwrap().parse().unwrap();
    let (_ws, cx) = synth::workspace(Size {
        editors: 10_000,
        diagnostics: 0,
        selection_bytes: 10,
    });
    let state = ide_mcp_tools::get_open_editors(&cx);
    let value = serde_json::to_value(&state).unwrap();
    let mut out = Vec::new();
    for _ in 0..n {
        out.clear();
        match variant.as_str() {
            "tool" => write_json_text(&mut out, black_box(&state)),
            "read" => {
                black_box(ide_mcp_tools::get_open_editors(&cx));
            }
            "plain" => serde_json::to_writer(&mut out, black_box(&value)).unwrap(),
            _ => {}
        }
        black_box(out.len());
    }
}
