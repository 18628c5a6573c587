//! The `fix_diagnostics` prompt (Claude Code's `/mcp__<server>__fix_diagnostics`):
//! "fix the errors in the open files", with the editor's diagnostics embedded.

use std::fmt::Write as _;

use ide_mcp_runtime::{PromptMessage, PromptResult, ResourceContents, mcp_prompt};
use lsp_types::DiagnosticSeverity;

use crate::context::EditorPorts;
use crate::diagnostics::{all_diagnostics_result, severity_name, shown_diagnostics};
use crate::ports::{DiagnosticsQuery, FileDiagnostics};
use crate::uri::PathInput;

/// Fixes the errors the editor reports in the open files, with the current
/// diagnostics embedded in the prompt.
#[mcp_prompt(title = "Fix the errors in the open files")]
pub fn fix_diagnostics(
    cx: &EditorPorts,
    #[arg(description = "Only this file (an absolute path or a `file://` URI)")] file: Option<
        String,
    >,
    #[arg(description = "Also fix warnings (`yes`), not only errors")] warnings: Option<String>,
) -> PromptResult {
    let mut files = shown_diagnostics(
        cx,
        cx.diagnostics()
            .map(DiagnosticsQuery::all)
            .unwrap_or_default(),
    );
    if let Some(file) = &file {
        let wanted: Vec<_> = PathInput::parse(file)
            .map(|input| input.candidates().map(ToOwned::to_owned).collect())
            .unwrap_or_default();
        files.retain(|f| wanted.iter().any(|path| **path == *f.path));
    }
    let with_warnings = warnings
        .as_deref()
        .is_some_and(|w| w.eq_ignore_ascii_case("yes"));
    let listing = listing(&files, with_warnings);
    let scope = file
        .as_deref()
        .map_or_else(|| "the open files".to_owned(), |f| format!("`{f}`"));
    let what = if with_warnings {
        "errors and warnings"
    } else {
        "errors"
    };
    let text = if listing.is_empty() {
        format!(
            "The editor reports no {what} in {scope} right now. Check that the code builds, and fix what does not."
        )
    } else {
        format!(
            "Fix the {what} the editor reports in {scope}. Read each file before you edit it, fix the cause rather than the symptom, and keep unrelated code as it is.\n\n{listing}"
        )
    };
    let json =
        serde_json::to_string(&all_diagnostics_result(&files)).expect("diagnostics serialize");
    PromptResult {
        description: Some(format!("Fix the {what} in {scope}")),
        messages: vec![
            PromptMessage::user(text),
            PromptMessage::resource(
                ResourceContents::text(json)
                    .with_uri("ide://diagnostics")
                    .with_mime_type("application/json"),
            ),
        ],
    }
}

/// One line per diagnostic kept: `path:line:column: severity: message (source)`,
/// one-based as editors show them.
fn listing(files: &[FileDiagnostics], with_warnings: bool) -> String {
    let mut out = String::new();
    for file in files {
        for d in file.diagnostics.iter() {
            let severity = d.severity.unwrap_or(DiagnosticSeverity::ERROR);
            let kept = severity == DiagnosticSeverity::ERROR
                || (with_warnings && severity == DiagnosticSeverity::WARNING);
            if !kept {
                continue;
            }
            let _ = write!(
                out,
                "{}:{}:{}: {}: {}",
                file.path.display(),
                d.range.start.line + 1,
                d.range.start.character + 1,
                severity_name(Some(severity)),
                d.message.replace('\n', " "),
            );
            if let Some(source) = &d.source {
                let _ = write!(out, " ({source})");
            }
            out.push('\n');
        }
    }
    out
}
