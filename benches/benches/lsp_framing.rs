//! LSP framing pass-through: a 50 MB `didOpen` cut from the stream and
//! written out unchanged (target ≥ 1 GB/s), with a fresh buffer per message
//! and with the buffer recycled, against plain copies of the same bytes (the
//! floors); and a stream of small messages.
//!
//! `cargo bench -p ide-mcp-benches --bench lsp_framing`

use std::hint::black_box;
use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ide_mcp_lsp::framing::{Frame, Message, MessageReader, SyncMessageReader};
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};

/// The same bytes over and over, as an endless stream.
struct Cycle<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl AsyncRead for Cycle<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let n = buf.remaining().min(self.bytes.len() - self.pos);
        let pos = self.pos;
        buf.put_slice(&self.bytes[pos..pos + n]);
        self.pos = (pos + n) % self.bytes.len();
        Poll::Ready(Ok(()))
    }
}

/// A `didOpen` of about `bytes` bytes of source text (escaped newlines, a
/// few non-ASCII characters), framed.
fn did_open(bytes: usize) -> Vec<u8> {
    let line = r#"    let value = compute(42, \"ünï\"); // some text\n"#;
    let mut text = String::with_capacity(bytes + line.len());
    while text.len() < bytes {
        text.push_str(line);
    }
    let body = format!(
        r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"file:///ws/big.c","languageId":"c","version":0,"text":"{text}"}}}}}}"#
    );
    Message::from_body(body).into_bytes()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

/// One 50 MB `didOpen`, framed, against copying its bytes.
fn large(c: &mut Criterion) {
    let rt = runtime();
    let wire = did_open(50 << 20);
    let mut group = c.benchmark_group("framing/50 MB didOpen");
    group.throughput(Throughput::Bytes(wire.len() as u64));
    group.sample_size(10);
    group.bench_function("MessageReader → sink", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut reader = MessageReader::new(&wire[..]);
                let mut sink = tokio::io::sink();
                while let Some(frame) = reader.next().await.unwrap() {
                    sink.write_all(frame.as_bytes()).await.unwrap();
                    black_box(&frame);
                }
            });
        });
    });
    group.bench_function("SyncMessageReader → sink", |b| {
        b.iter(|| {
            let mut sink = std::io::sink();
            for frame in SyncMessageReader::new(&wire[..]) {
                let frame = frame.unwrap();
                sink.write_all(frame.as_bytes()).unwrap();
                black_box(&frame);
            }
        });
    });
    group.bench_function("floor: copy into a fresh buffer", |b| {
        b.iter(|| black_box(wire.clone()));
    });
    let mut reader = MessageReader::new(Cycle {
        bytes: &wire,
        pos: 0,
    });
    group.bench_function("MessageReader → sink, buffer recycled", |b| {
        b.iter(|| {
            rt.block_on(async {
                let Some(Frame::Message(message)) = reader.next().await.unwrap() else {
                    unreachable!("the stream is one message, repeated")
                };
                tokio::io::sink()
                    .write_all(message.as_bytes())
                    .await
                    .unwrap();
                reader.recycle(black_box(message));
            });
        });
    });
    let mut reused = Vec::with_capacity(wire.len());
    group.bench_function("floor: copy into a reused buffer", |b| {
        b.iter(|| {
            reused.clear();
            reused.extend_from_slice(&wire);
            black_box(&reused);
        });
    });
    group.finish();
}

/// 10 000 small messages in one stream (a burst of didChange and hover).
fn small(c: &mut Criterion) {
    let rt = runtime();
    let mut small = Vec::new();
    for i in 0..10_000 {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"textDocument/hover","params":{{"textDocument":{{"uri":"file:///ws/a.c"}},"position":{{"line":{i},"character":4}}}}}}"#
        );
        small.extend_from_slice(Message::from_body(body).as_bytes());
    }
    let mut group = c.benchmark_group("framing/10k small messages");
    group.throughput(Throughput::Bytes(small.len() as u64));
    group.bench_function("MessageReader", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut reader = MessageReader::new(&small[..]);
                let mut n = 0;
                while let Some(Frame::Message(m)) = reader.next().await.unwrap() {
                    n += m.body().len();
                }
                black_box(n)
            })
        });
    });
    group.finish();
}

criterion_group!(benches, large, small);
criterion_main!(benches);
