//! rustc's JSON diagnostics → `lsp_types::Diagnostic`, per absolute file path.
//!
//! rustc reports positions as 1-based lines and 1-based *character* columns;
//! LSP wants zero-based lines and UTF-16 code units. The conversion counts
//! through the source lines rustc copies into each span (`spans[].text`): the
//! text rustc checked, so the columns are right even when the file changed
//! after the check, and no file is read while converting.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use cargo_metadata::diagnostic::{
    Diagnostic as RustcDiagnostic, DiagnosticLevel, DiagnosticSpan, DiagnosticSpanLine,
};
use ide_mcp_tools::position::PositionEncoding;
use lsp_types::{Diagnostic, DiagnosticSeverity, DiagnosticTag, NumberOrString, Position, Range};

/// Diagnostics by absolute file path, each list in the order rustc reported
/// them and without duplicates.
pub type DiagnosticsByFile = BTreeMap<PathBuf, Vec<Diagnostic>>;

/// Suggested replacements longer than this are left out of the message.
const MAX_INLINE_SUGGESTION: usize = 80;

/// Converts the compiler messages of one check run.
#[derive(Debug)]
pub struct Converter {
    root: PathBuf,
    files: DiagnosticsByFile,
}

impl Converter {
    /// A converter for messages whose relative paths are relative to
    /// `workspace_root` (cargo runs rustc there for workspace members; paths
    /// of packages outside the workspace arrive absolute).
    pub fn new(workspace_root: impl Into<PathBuf>) -> Self {
        Self {
            root: workspace_root.into(),
            files: DiagnosticsByFile::new(),
        }
    }

    /// Adds one compiler message. Returns `false` when it was skipped: a
    /// message without a span in a file (the "aborting due to…" and
    /// "N warnings emitted" summaries) or a duplicate of one already added
    /// (an `--all-targets` build reports a library's warning once for the
    /// library and again for its test target).
    pub fn add(&mut self, diagnostic: &RustcDiagnostic) -> bool {
        let Some((path, converted)) = self.convert(diagnostic) else {
            return false;
        };
        let list = self.files.entry(path).or_default();
        if list.contains(&converted) {
            return false;
        }
        list.push(converted);
        true
    }

    /// The diagnostics added so far, by file.
    pub fn finish(self) -> DiagnosticsByFile {
        self.files
    }

    /// Converts one message into its file's absolute path and an LSP
    /// diagnostic; `None` for a message with no span in a file.
    pub fn convert(&mut self, diagnostic: &RustcDiagnostic) -> Option<(PathBuf, Diagnostic)> {
        let reported = diagnostic
            .spans
            .iter()
            .find(|span| span.is_primary)
            .or_else(|| diagnostic.spans.first())?;
        let span = self.located_span(reported)?;
        let path = self.resolve(&span.file_name);
        let range = Range::new(
            position(span.text.first(), span.line_start, span.column_start),
            position(span.text.last(), span.line_end, span.column_end),
        );
        let code = diagnostic.code.as_ref().map(|code| code.code.clone());
        let source = match &code {
            Some(code) if code.starts_with("clippy::") => "clippy",
            _ => "rustc",
        };
        let converted = Diagnostic {
            range,
            severity: Some(severity(diagnostic.level)),
            tags: code.as_deref().and_then(tag).map(|tag| vec![tag]),
            code: code.map(NumberOrString::String),
            source: Some(source.to_owned()),
            message: message(diagnostic, reported),
            ..Diagnostic::default()
        };
        Some((path, converted))
    }

    /// The span to show: the reported one when it is in the workspace, else
    /// the first macro call site up its expansion chain that is (an error
    /// inside `println!` shows at the `println!`), else the reported one.
    /// `None` when that is no file at all (`<macros>`-style names).
    fn located_span<'a>(&self, reported: &'a DiagnosticSpan) -> Option<&'a DiagnosticSpan> {
        let mut span = reported;
        loop {
            if is_file(&span.file_name) && self.resolve(&span.file_name).starts_with(&self.root) {
                return Some(span);
            }
            match &span.expansion {
                Some(expansion) => span = &expansion.span,
                None => break,
            }
        }
        is_file(&reported.file_name).then_some(reported)
    }

    fn resolve(&self, file_name: &str) -> PathBuf {
        let path = Path::new(file_name);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        }
    }
}

/// The LSP position of rustc's 1-based `line` and 1-based character
/// `column`, counted through rustc's copy of that line (`span_line`). A span
/// without one (rare: rustc could not read the source) counts one unit per
/// character, which is exact for ASCII.
fn position(span_line: Option<&DiagnosticSpanLine>, line: usize, column: usize) -> Position {
    let line = line.saturating_sub(1);
    let chars = column.saturating_sub(1);
    let character = span_line.map_or(chars, |span_line| {
        utf16_len_of_chars(&span_line.text, chars)
    });
    Position::new(line as u32, character as u32)
}

/// Whether rustc's `file_name` names a file (not `<std macros>` and the like).
fn is_file(file_name: &str) -> bool {
    !file_name.is_empty() && !file_name.starts_with('<')
}

/// UTF-16 code units in the first `chars` characters of `line`; characters
/// past its end (a span at the end of a line) count one each.
fn utf16_len_of_chars(line: &str, chars: usize) -> usize {
    let (within, past) = match line.char_indices().nth(chars) {
        Some((byte, _)) => (&line[..byte], 0),
        None => (line, chars - line.chars().count()),
    };
    PositionEncoding::Utf16.len(within) + past
}

fn severity(level: DiagnosticLevel) -> DiagnosticSeverity {
    match level {
        DiagnosticLevel::Error | DiagnosticLevel::Ice => DiagnosticSeverity::ERROR,
        DiagnosticLevel::Warning => DiagnosticSeverity::WARNING,
        DiagnosticLevel::Help => DiagnosticSeverity::HINT,
        _ => DiagnosticSeverity::INFORMATION,
    }
}

fn tag(code: &str) -> Option<DiagnosticTag> {
    if code == "dead_code" || code.starts_with("unused_") {
        Some(DiagnosticTag::UNNECESSARY)
    } else if code == "deprecated" {
        Some(DiagnosticTag::DEPRECATED)
    } else {
        None
    }
}

fn level_name(level: DiagnosticLevel) -> &'static str {
    match level {
        DiagnosticLevel::Error | DiagnosticLevel::Ice => "error",
        DiagnosticLevel::Warning => "warning",
        DiagnosticLevel::Help => "help",
        _ => "note",
    }
}

/// The message, then the primary span's label, then one line per child
/// (`help: …`, `note: …`) with its suggested replacement or, when it points
/// elsewhere, its location. Children that only say which lint is on by
/// default, or where clippy's docs are, are left out: the code says as much.
fn message(diagnostic: &RustcDiagnostic, primary: &DiagnosticSpan) -> String {
    let mut text = diagnostic.message.clone();
    if let Some(label) = primary.label.as_deref()
        && !label.is_empty()
        && !diagnostic.message.contains(label)
    {
        text.push('\n');
        text.push_str(label);
    }
    for child in &diagnostic.children {
        if is_boilerplate(child) {
            continue;
        }
        let _ = write!(text, "\n{}: {}", level_name(child.level), child.message);
        let mut replacements: Vec<&str> = Vec::new();
        for replacement in child
            .spans
            .iter()
            .filter_map(|span| span.suggested_replacement.as_deref())
        {
            if !replacement.is_empty()
                && replacement.len() <= MAX_INLINE_SUGGESTION
                && !replacement.contains('\n')
                && !replacements.contains(&replacement)
            {
                replacements.push(replacement);
            }
        }
        if !replacements.is_empty() {
            let quoted: Vec<String> = replacements.iter().map(|r| format!("`{r}`")).collect();
            let _ = write!(text, ": {}", quoted.join(", "));
        } else if let Some(span) = child.spans.iter().find(|span| span.is_primary)
            && (span.file_name != primary.file_name || span.line_start != primary.line_start)
        {
            let _ = write!(
                text,
                " ({}:{}:{})",
                span.file_name, span.line_start, span.column_start
            );
        }
    }
    text
}

fn is_boilerplate(child: &RustcDiagnostic) -> bool {
    let message = child.message.as_str();
    (message.starts_with("`#[") && message.ends_with("on by default"))
        || message.starts_with("for further information visit ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use cargo_metadata::Message;

    /// Real `cargo check --message-format=json` lines (explanations and
    /// rendered text dropped, paths moved under `/ws`).
    const FIXTURE_LINES: &str = include_str!("testdata/fixture.jsonl");
    /// Real `cargo clippy` lines: a typo with a suggestion, a clippy lint.
    const CLIPPY_LINES: &str = include_str!("testdata/clippy.jsonl");

    fn messages(lines: &str) -> Vec<RustcDiagnostic> {
        Message::parse_stream(lines.as_bytes())
            .filter_map(|message| match message.unwrap() {
                Message::CompilerMessage(message) => Some(message.message),
                _ => None,
            })
            .collect()
    }

    fn convert_all(converter: Converter, lines: &str) -> DiagnosticsByFile {
        let mut converter = converter;
        for message in messages(lines) {
            converter.add(&message);
        }
        converter.finish()
    }

    fn range(a: (u32, u32), b: (u32, u32)) -> Range {
        Range::new(Position::new(a.0, a.1), Position::new(b.0, b.1))
    }

    #[test]
    fn error_after_non_ascii_text_counts_utf16_units() {
        let files = convert_all(Converter::new("/ws"), FIXTURE_LINES);
        let broken = &files[Path::new("/ws/broken/src/lib.rs")];
        assert_eq!(
            broken.len(),
            1,
            "duplicates and summaries dropped: {broken:#?}"
        );
        let error = &broken[0];
        // `    let pair = ("héllo 🦀", ` is 27 chars, 28 UTF-16 units (the crab is two).
        assert_eq!(error.range, range((5, 28), (5, 41)));
        assert_eq!(error.severity, Some(DiagnosticSeverity::ERROR));
        assert_eq!(error.code, Some(NumberOrString::String("E0425".into())));
        assert_eq!(error.source.as_deref(), Some("rustc"));
        assert_eq!(
            error.message,
            "cannot find value `missing_value` in this scope\nnot found in this scope"
        );
    }

    #[test]
    fn warning_folds_its_help_and_drops_the_lint_note() {
        let files = convert_all(Converter::new("/ws"), FIXTURE_LINES);
        let warning = &files[Path::new("/ws/warns/src/lib.rs")][0];
        assert_eq!(warning.range, range((4, 8), (4, 14)));
        assert_eq!(warning.severity, Some(DiagnosticSeverity::WARNING));
        assert_eq!(
            warning.code,
            Some(NumberOrString::String("unused_variables".into()))
        );
        assert_eq!(warning.tags, Some(vec![DiagnosticTag::UNNECESSARY]));
        assert_eq!(
            warning.message,
            "unused variable: `ünused`\nhelp: if this is intentional, prefix it with an underscore: `_ünused`"
        );
    }

    #[test]
    fn columns_come_from_the_span_text_not_the_file_on_disk() {
        // No such file on disk, and a file that changed after the check would
        // not matter either: the span carries the line rustc checked.
        let files = convert_all(
            Converter::new("/nonexistent-ws"),
            &FIXTURE_LINES.replace("/ws", "/nonexistent-ws"),
        );
        let error = &files[Path::new("/nonexistent-ws/broken/src/lib.rs")][0];
        assert_eq!(error.range, range((5, 28), (5, 41)));
    }

    #[test]
    fn clippy_lints_have_source_clippy_and_suggestions_are_folded() {
        let files = convert_all(Converter::new("/ws"), CLIPPY_LINES);
        let list = &files[Path::new("/ws/src/lib.rs")];
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].range, range((3, 17), (3, 23)));
        assert_eq!(
            list[0].message,
            "cannot find value `résume` in this scope\nhelp: a local variable with a similar name exists: `résumé`"
        );
        assert_eq!(list[1].source.as_deref(), Some("clippy"));
        assert_eq!(
            list[1].code,
            Some(NumberOrString::String("clippy::ptr_arg".into()))
        );
        assert_eq!(list[1].range, range((6, 12), (6, 21)));
        assert_eq!(
            list[1].message,
            "writing `&Vec` instead of `&[_]` involves a new object where a slice will do\nhelp: change this to: `&[i32]`"
        );
    }

    #[test]
    fn utf16_counting_handles_astral_bmp_and_past_the_end() {
        assert_eq!(utf16_len_of_chars("a🦀é", 0), 0);
        assert_eq!(utf16_len_of_chars("a🦀é", 2), 3);
        assert_eq!(utf16_len_of_chars("a🦀é", 3), 4);
        assert_eq!(utf16_len_of_chars("a🦀é", 5), 6);
    }

    fn span(
        file: &str,
        line: usize,
        columns: (usize, usize),
        expansion: Option<serde_json::Value>,
    ) -> serde_json::Value {
        serde_json::json!({
            "file_name": file, "byte_start": 0, "byte_end": 0,
            "line_start": line, "line_end": line,
            "column_start": columns.0, "column_end": columns.1,
            "is_primary": true, "text": [], "label": null,
            "suggested_replacement": null, "suggestion_applicability": null,
            "expansion": expansion.map(|span| serde_json::json!({
                "span": span, "macro_decl_name": "format!", "def_site_span": null,
            })),
        })
    }

    fn diagnostic(spans: &serde_json::Value) -> RustcDiagnostic {
        serde_json::from_value(serde_json::json!({
            "message": "m", "code": null, "level": "error",
            "spans": spans, "children": [], "rendered": null,
        }))
        .unwrap()
    }

    #[test]
    fn absolute_paths_of_packages_outside_the_workspace_are_kept() {
        let mut converter = Converter::new("/ws");
        let (path, found) = converter
            .convert(&diagnostic(&serde_json::json!([span(
                "/elsewhere/dep/src/lib.rs",
                1,
                (2, 3),
                None
            )])))
            .unwrap();
        assert_eq!(path, Path::new("/elsewhere/dep/src/lib.rs"));
        assert_eq!(found.range, range((0, 1), (0, 2)));
    }

    #[test]
    fn errors_inside_external_macros_show_at_the_call_site() {
        let call_site = span("src/main.rs", 2, (5, 20), None);
        let inside = span(
            "/rustc/0000/library/alloc/src/macros.rs",
            120,
            (1, 9),
            Some(call_site),
        );
        let mut converter = Converter::new("/ws");
        let (path, found) = converter
            .convert(&diagnostic(&serde_json::json!([inside])))
            .unwrap();
        assert_eq!(path, Path::new("/ws/src/main.rs"));
        assert_eq!(found.range, range((1, 4), (1, 19)));

        // A span in no file at all, with nothing to walk up to: skipped.
        let nowhere = span("<::core::macros::panic>", 1, (1, 2), None);
        assert!(
            converter
                .convert(&diagnostic(&serde_json::json!([nowhere])))
                .is_none()
        );
    }

    #[test]
    fn multi_line_spans_count_each_end_on_its_own_line() {
        let line = |text: &str| -> DiagnosticSpanLine {
            serde_json::from_value(serde_json::json!({
                "text": text, "highlight_start": 1, "highlight_end": 1,
            }))
            .unwrap()
        };
        let first = line("é🦀x = (");
        let last = line("  𝄞𝄞) ;");
        assert_eq!(position(Some(&first), 1, 3), Position::new(0, 3));
        assert_eq!(position(Some(&last), 4, 5), Position::new(3, 6));
        // Without rustc's copy of the line: one unit per character.
        assert_eq!(position(None, 2, 7), Position::new(1, 6));
    }
}
