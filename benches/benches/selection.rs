//! Selection cost is O(selection): `getCurrentSelection` of 10 characters in a
//! 1 KB and in a 100 MB document.
//!
//! `cargo bench -p ide-mcp-benches --bench selection`

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use ide_mcp_benches::synth::document;
use ide_mcp_runtime::ResultOut;
use ide_mcp_tools::BufferId;
use ide_mcp_tools::memory::MemoryWorkspace;
use lsp_types::Position;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("getCurrentSelection/10 chars");
    for (label, bytes) in [("1 KB", 1024), ("100 MB", 100 << 20)] {
        let ws = MemoryWorkspace::new();
        let text = document(bytes);
        let lines = text.lines().count() as u32;
        ws.open(
            BufferId(1),
            Some(Path::new("/ws/src/big.rs")),
            "rust",
            &text,
        );
        drop(text);
        // 10 characters in the middle of the document.
        let line = lines / 2;
        ws.select(BufferId(1), Position::new(line, 4), Position::new(line, 14));
        let cx = ws.editor_ports().workspace_folder("/ws").build();
        let mut out = Vec::with_capacity(1024);
        ResultOut::new(&mut out).json_text(&ide_mcp_tools::get_current_selection(&cx));
        assert!(String::from_utf8_lossy(&out).contains(r#"\"text\":\"let value \""#));
        group.bench_function(label, |b| {
            b.iter(|| {
                out.clear();
                ResultOut::new(&mut out)
                    .json_text(&ide_mcp_tools::get_current_selection(black_box(&cx)));
                black_box(out.len())
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
