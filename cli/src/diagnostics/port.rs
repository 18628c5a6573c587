//! The tools crate's [`DiagnosticsQuery`] port over [`CargoDiagnostics`],
//! for one cargo workspace or several.

use std::path::Path;
use std::sync::Arc;

use ide_mcp_tools::{DiagnosticsQuery, FileDiagnostics, SettleFuture};
use lsp_types::Diagnostic;

use super::engine::CargoDiagnostics;

impl DiagnosticsQuery for CargoDiagnostics {
    fn all(&self) -> Vec<FileDiagnostics> {
        self.snapshot()
            .files()
            .iter()
            .map(|(path, diagnostics)| FileDiagnostics {
                path: Arc::clone(path),
                diagnostics: Arc::clone(diagnostics),
            })
            .collect()
    }

    fn for_file(&self, path: &Path) -> Option<Arc<[Diagnostic]>> {
        let snapshot = self.snapshot();
        if let Some(found) = snapshot.files().get(path) {
            return Some(Arc::clone(found));
        }
        // Checked paths are physical; a client may name one through a symlink.
        let physical = std::fs::canonicalize(path).ok()?;
        snapshot.files().get(physical.as_path()).cloned()
    }

    fn generation(&self) -> u64 {
        CargoDiagnostics::generation(self)
    }

    fn settle(&self) -> Option<SettleFuture> {
        self.settle_future()
            .map(|settled| Box::pin(settled) as SettleFuture)
    }
}

/// Several engines (one per workspace folder with a `Cargo.toml`) as one port.
#[derive(Debug)]
pub struct CombinedDiagnostics {
    engines: Vec<Arc<CargoDiagnostics>>,
}

impl CombinedDiagnostics {
    /// The engines' diagnostics together.
    pub fn new(engines: Vec<Arc<CargoDiagnostics>>) -> Self {
        Self { engines }
    }
}

impl DiagnosticsQuery for CombinedDiagnostics {
    fn all(&self) -> Vec<FileDiagnostics> {
        let mut files: Vec<FileDiagnostics> = self
            .engines
            .iter()
            .flat_map(|engine| engine.all())
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        // Two folders of one cargo workspace report the same files.
        files.dedup_by(|a, b| a.path == b.path);
        files
    }

    fn for_file(&self, path: &Path) -> Option<Arc<[Diagnostic]>> {
        self.engines.iter().find_map(|engine| engine.for_file(path))
    }

    /// Each engine's generation only grows and grows whenever its data
    /// changes, so their sum does too.
    fn generation(&self) -> u64 {
        self.engines.iter().map(|engine| engine.generation()).sum()
    }

    fn settle(&self) -> Option<SettleFuture> {
        let pending: Vec<SettleFuture> = self
            .engines
            .iter()
            .filter_map(|engine| DiagnosticsQuery::settle(&**engine))
            .collect();
        if pending.is_empty() {
            return None;
        }
        // Each deadline was fixed when its future was made, so awaiting them
        // in turn waits no longer than the longest bound.
        Some(Box::pin(async move {
            for settled in pending {
                settled.await;
            }
        }))
    }
}
