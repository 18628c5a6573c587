//! Readers on several threads while a writer publishes snapshots: every
//! snapshot a reader sees is whole (its text matches its version).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::memory::MemoryWorkspace;
use crate::{BufferId, BufferStore, EditorPorts, check_document_dirty, get_current_selection};
use lsp_types::Position;

/// The text published as version `v`: its length and content both encode `v`,
/// so a text from one version and a version number from another disagree.
fn text_for(version: i32) -> String {
    let line = format!("version {version}\n");
    line.repeat(1 + usize::try_from(version % 7).unwrap())
}

#[test]
fn readers_never_see_a_torn_document() {
    const READERS: usize = 4;
    const PUBLISHES: i32 = 20_000;
    let ws = MemoryWorkspace::new();
    let handle = ws.open(
        BufferId(1),
        Some(Path::new("/ws/a.rs")),
        "rust",
        &text_for(0),
    );
    ws.select(BufferId(1), Position::new(0, 0), Position::new(0, 7));
    let cx: EditorPorts = ws.editor_ports().build();
    let done = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + Duration::from_secs(20);

    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let (cx, done, store) = (cx.clone(), Arc::clone(&done), Arc::clone(&ws.buffers));
            thread::spawn(move || {
                let (mut reads, mut last_version) = (0_u64, -1);
                while !done.load(Ordering::Acquire) && Instant::now() < deadline {
                    let doc = store.handle_for(BufferId(1)).unwrap().snapshot();
                    assert_eq!(
                        doc.text.to_string(),
                        text_for(doc.version),
                        "reader {r}: torn snapshot"
                    );
                    assert!(
                        doc.version >= last_version,
                        "reader {r}: versions go forward"
                    );
                    assert_eq!(doc.dirty, doc.version % 2 == 1);
                    last_version = doc.version;
                    // Through the tools as well.
                    let sel = serde_json::to_string(&get_current_selection(&cx)).unwrap();
                    assert!(
                        sel.starts_with(r#"{"success":true,"text":"version""#),
                        "{sel}"
                    );
                    let _ = check_document_dirty(&cx, "/ws/a.rs".into());
                    reads += 1;
                }
                reads
            })
        })
        .collect();

    let writer = {
        let done = Arc::clone(&done);
        thread::spawn(move || {
            for version in 1..=PUBLISHES {
                handle.update(|doc| crate::Document {
                    text: text_for(version).into(),
                    version,
                    dirty: version % 2 == 1,
                    ..doc.clone()
                });
                if Instant::now() > deadline {
                    break;
                }
            }
            done.store(true, Ordering::Release);
        })
    };

    writer.join().expect("the writer finished");
    let reads: u64 = readers
        .into_iter()
        .map(|r| r.join().expect("no reader saw a torn document"))
        .sum();
    assert!(reads > 0);
}
