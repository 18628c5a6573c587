//! [`CombinedDiagnostics`]: every diagnostics source of the host (a cargo
//! engine per workspace, a language server per `--lsp`) as one
//! `DiagnosticsQuery` port, merged per document.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use ide_mcp_tools::{DiagnosticsQuery, FileDiagnostics, SettleFuture};
use lsp_types::Diagnostic;

/// Several diagnostics sources as one port: a file's list is the
/// concatenation of every source's list for it, in the order the sources were
/// added, without repeats (two folders of one cargo workspace report the same
/// files). Each source tags its own diagnostics with `source` (`rustc`,
/// `clippy`, `Pyright`, `clang`, …), so the merged list says where each came
/// from.
#[derive(Default)]
pub struct CombinedDiagnostics {
    sources: Vec<Arc<dyn DiagnosticsQuery>>,
}

impl std::fmt::Debug for CombinedDiagnostics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CombinedDiagnostics")
            .field("sources", &self.sources.len())
            .finish()
    }
}

impl CombinedDiagnostics {
    /// The sources' diagnostics together.
    pub fn new(sources: impl IntoIterator<Item = Arc<dyn DiagnosticsQuery>>) -> Self {
        Self {
            sources: sources.into_iter().collect(),
        }
    }

    /// Adds one more source.
    pub fn push(&mut self, source: Arc<dyn DiagnosticsQuery>) {
        self.sources.push(source);
    }

    /// How many sources there are.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Whether there is no source at all.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }
}

/// Appends `more` to `into`, leaving out what `into` already holds. Returns
/// the shared list itself when there is nothing to merge with (no copy).
fn merge(into: Option<Arc<[Diagnostic]>>, more: Arc<[Diagnostic]>) -> Arc<[Diagnostic]> {
    let Some(into) = into else {
        return more;
    };
    if more.is_empty() || Arc::ptr_eq(&into, &more) {
        return into;
    }
    if into.is_empty() {
        return more;
    }
    let mut list = into.to_vec();
    for diagnostic in more.iter() {
        if !list.contains(diagnostic) {
            list.push(diagnostic.clone());
        }
    }
    list.into()
}

impl DiagnosticsQuery for CombinedDiagnostics {
    fn all(&self) -> Vec<FileDiagnostics> {
        if let [one] = self.sources.as_slice() {
            return one.all();
        }
        let mut files: BTreeMap<Arc<Path>, Arc<[Diagnostic]>> = BTreeMap::new();
        for source in &self.sources {
            for file in source.all() {
                let merged = merge(files.remove(&file.path), file.diagnostics);
                files.insert(file.path, merged);
            }
        }
        files
            .into_iter()
            .map(|(path, diagnostics)| FileDiagnostics { path, diagnostics })
            .collect()
    }

    fn for_file(&self, path: &Path) -> Option<Arc<[Diagnostic]>> {
        self.sources
            .iter()
            .filter_map(|source| source.for_file(path))
            .fold(None, |merged, list| Some(merge(merged, list)))
    }

    /// Each source's generation only grows, and grows whenever its data
    /// changes, so their sum does too.
    fn generation(&self) -> u64 {
        self.sources
            .iter()
            .map(|source| source.generation())
            .fold(0, u64::wrapping_add)
    }

    fn settle(&self) -> Option<SettleFuture> {
        let pending: Vec<SettleFuture> = self
            .sources
            .iter()
            .filter_map(|source| source.settle())
            .collect();
        match pending.len() {
            0 => None,
            1 => pending.into_iter().next(),
            // Each bound was fixed when its future was made, so awaiting them
            // together waits no longer than the longest.
            _ => Some(Box::pin(async move {
                futures_join_all(pending).await;
            })),
        }
    }
}

/// Awaits every future, concurrently.
async fn futures_join_all(futures: Vec<SettleFuture>) {
    let mut set = tokio::task::JoinSet::new();
    for future in futures {
        set.spawn(future);
    }
    while set.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    struct Fixed(u64, Vec<(&'static str, Vec<&'static str>)>);

    fn diagnostic(message: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(0, 0), Position::new(0, 1)),
            message: message.to_owned(),
            source: Some(message.split(':').next().unwrap().to_owned()),
            ..Diagnostic::default()
        }
    }

    impl DiagnosticsQuery for Fixed {
        fn all(&self) -> Vec<FileDiagnostics> {
            self.1
                .iter()
                .map(|(path, messages)| FileDiagnostics {
                    path: Arc::from(Path::new(path)),
                    diagnostics: messages.iter().map(|m| diagnostic(m)).collect(),
                })
                .collect()
        }

        fn for_file(&self, path: &Path) -> Option<Arc<[Diagnostic]>> {
            self.all()
                .into_iter()
                .find(|file| *file.path == *path)
                .map(|file| file.diagnostics)
        }

        fn generation(&self) -> u64 {
            self.0
        }
    }

    fn messages(list: &[Diagnostic]) -> Vec<&str> {
        list.iter().map(|d| d.message.as_str()).collect()
    }

    #[test]
    fn sources_merge_per_document_in_order_without_repeats() {
        let cargo = Fixed(2, vec![("/w/a.rs", vec!["rustc: e1"]), ("/w/m.py", vec![])]);
        let pyright = Fixed(
            5,
            vec![
                ("/w/m.py", vec!["Pyright: p1", "Pyright: p2"]),
                ("/w/a.rs", vec!["rustc: e1", "clippy: c1"]),
            ],
        );
        let combined = CombinedDiagnostics::new([
            Arc::new(cargo) as Arc<dyn DiagnosticsQuery>,
            Arc::new(pyright),
        ]);
        let all = combined.all();
        let listed: Vec<(&Path, Vec<&str>)> = all
            .iter()
            .map(|file| (&*file.path, messages(&file.diagnostics)))
            .collect();
        assert_eq!(
            listed,
            [
                (Path::new("/w/a.rs"), vec!["rustc: e1", "clippy: c1"]),
                (Path::new("/w/m.py"), vec!["Pyright: p1", "Pyright: p2"]),
            ]
        );
        assert_eq!(
            messages(&combined.for_file(Path::new("/w/a.rs")).unwrap()),
            ["rustc: e1", "clippy: c1"]
        );
        assert!(combined.for_file(Path::new("/w/none.rs")).is_none());
        assert_eq!(combined.generation(), 7);
        assert!(combined.settle().is_none(), "nothing is running");
    }

    #[test]
    fn one_source_is_served_as_is() {
        let list: Arc<[Diagnostic]> = vec![diagnostic("rustc: e")].into();
        assert!(Arc::ptr_eq(&merge(None, Arc::clone(&list)), &list));
        assert!(Arc::ptr_eq(
            &merge(Some(Arc::clone(&list)), Arc::from(Vec::new())),
            &list
        ));
    }
}
