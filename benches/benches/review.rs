//! Claude's proposed edit as line hunks: `hunks` of a 10-line change
//! spread over three places in a 50 000-line file (target ≤ 5 ms; the
//! LSP side's target is for the hunks computed *and* published), and
//! `compose` of them, every hunk accepted and one of three.
//!
//! `cargo bench -p ide-mcp-benches --bench review`

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ide_mcp_tools::review::{compose, hunks};

const LINES: usize = 50_000;

/// A source file of `LINES` lines, most distinct, with the repeats real code
/// has (closing braces, blank lines).
fn source() -> Vec<String> {
    (0..LINES)
        .map(|i| match i % 10 {
            4 => "    }\n".to_owned(),
            9 => "\n".to_owned(),
            _ => {
                let mut line = String::new();
                let _ = writeln!(
                    line,
                    "    let value_{i} = compute({i}, \"ünï\"); // step {i}"
                );
                line
            }
        })
        .collect()
}

/// Ten lines changed in three places: four replaced at 10 %, three
/// inserted at 50 %, three deleted at 90 %.
fn proposal(old: &[String]) -> Vec<String> {
    let mut new = old.to_vec();
    let at = |fraction: usize| LINES * fraction / 100 + 1;
    new.drain(at(90)..at(90) + 3);
    for k in 0..3 {
        new.insert(at(50), format!("    log(\"inserted {k}\");\n"));
    }
    for line in &mut new[at(10)..at(10) + 4] {
        line.insert_str(4, "// ");
    }
    new
}

fn bench(c: &mut Criterion) {
    let old_lines = source();
    let old = old_lines.concat();
    let new = proposal(&old_lines).concat();
    let h = hunks(&old, &new);
    assert_eq!(h.len(), 3, "{h:?}");
    assert_eq!(h.iter().map(|h| h.old_len.max(h.new_len)).sum::<u32>(), 10);
    assert_eq!(compose(&old, &h, &[true; 3]), new);

    let mut group = c.benchmark_group("review/50 000 lines, 10 changed in 3 places");
    group.bench_function("hunks", |b| {
        b.iter(|| hunks(black_box(&old), black_box(&new)));
    });
    group.bench_function("compose, all accepted", |b| {
        b.iter(|| compose(black_box(&old), black_box(&h), &[true; 3]));
    });
    group.bench_function("compose, one of three", |b| {
        b.iter(|| compose(black_box(&old), black_box(&h), &[false, true, false]));
    });
    group.bench_function("hunks, equal texts", |b| {
        b.iter(|| hunks(black_box(&old), black_box(&old)));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
