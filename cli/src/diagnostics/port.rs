//! The tools crate's [`DiagnosticsQuery`] port over [`CargoDiagnostics`].

use std::path::Path;
use std::sync::Arc;

use ide_mcp_tools::{DiagnosticsQuery, FileDiagnostics, SettleFuture};
use lsp_types::Diagnostic;

use super::engine::CargoDiagnostics;

impl DiagnosticsQuery for CargoDiagnostics {
    fn all(&self) -> Vec<FileDiagnostics> {
        self.start_if_lazy();
        FileDiagnostics::list(self.snapshot().files())
    }

    fn for_file(&self, path: &Path) -> Option<Arc<[Diagnostic]>> {
        self.start_if_lazy();
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
        self.start_if_lazy();
        self.settle_future()
            .map(|settled| Box::pin(settled) as SettleFuture)
    }
}
