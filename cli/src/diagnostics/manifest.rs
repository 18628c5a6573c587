//! A cargo run that failed before building (a broken `Cargo.toml`, a bad
//! dependency declaration, a workspace member that cannot be loaded) as
//! diagnostics on the manifests cargo names: an empty answer would tell
//! the model all is well.

use std::path::Path;

use lsp_types::{Diagnostic, DiagnosticSeverity, Position, Range};

use super::convert::DiagnosticsByFile;

/// The diagnostics for cargo's stderr `stderr`, run in `dir`: one per
/// `error:` block, on the file its `-->` line names (relative to `dir`),
/// else on `dir/Cargo.toml` at its start.
pub fn manifest_diagnostics(dir: &Path, stderr: &str) -> DiagnosticsByFile {
    let mut files = DiagnosticsByFile::new();
    let mut blocks: Vec<Block> = Vec::new();
    for line in stderr.lines() {
        if let Some(message) = line.strip_prefix("error: ") {
            blocks.push(Block {
                message: message.trim().to_owned(),
                location: None,
            });
            continue;
        }
        let Some(block) = blocks.last_mut() else {
            continue;
        };
        let trimmed = line.trim();
        if let Some(location) = trimmed.strip_prefix("--> ") {
            block.location = parse_location(location).map(|(path, line, column)| Location {
                path: path.to_owned(),
                line,
                column,
                width: 1,
            });
        } else if let Some(carets) = snippet_carets(trimmed) {
            if let Some(location) = &mut block.location
                && carets > 0
            {
                location.width = carets;
            }
        } else if !trimmed.is_empty() && !line.starts_with("warning: ") {
            block.message.push('\n');
            block.message.push_str(trimmed);
        }
    }
    if blocks.is_empty() && !stderr.trim().is_empty() {
        blocks.push(Block {
            message: stderr.trim().to_owned(),
            location: None,
        });
    }
    for block in blocks {
        let (path, range) = match &block.location {
            Some(location) => {
                let start = Position::new(
                    location.line.saturating_sub(1),
                    location.column.saturating_sub(1),
                );
                let end = Position::new(start.line, start.character + location.width);
                (dir.join(&location.path), Range::new(start, end))
            }
            None => (dir.join("Cargo.toml"), Range::default()),
        };
        let list = files.entry(path).or_default();
        let diagnostic = Diagnostic {
            range,
            severity: Some(DiagnosticSeverity::ERROR),
            source: Some("cargo".to_owned()),
            message: block.message,
            ..Diagnostic::default()
        };
        if !list.contains(&diagnostic) {
            list.push(diagnostic);
        }
    }
    files
}

struct Block {
    message: String,
    location: Option<Location>,
}

struct Location {
    path: String,
    line: u32,
    column: u32,
    width: u32,
}

/// `Cargo.toml:7:7` → (`Cargo.toml`, 7, 7).
fn parse_location(text: &str) -> Option<(&str, u32, u32)> {
    let mut parts = text.rsplitn(3, ':');
    let column = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    let path = parts.next().filter(|path| !path.is_empty())?;
    Some((path, line, column))
}

/// The snippet lines of an error (`1 | [package`, `|     ^^^`): `Some` with
/// the number of carets (0 for a source line).
fn snippet_carets(trimmed: &str) -> Option<u32> {
    let rest = trimmed.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = rest.trim_start().strip_prefix('|')?;
    Some(rest.chars().filter(|c| *c == '^').count() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn only(files: &DiagnosticsByFile, path: &str) -> Vec<(Range, String)> {
        files[Path::new(path)]
            .iter()
            .map(|d| (d.range, d.message.clone()))
            .collect()
    }

    fn range(line: u32, start: u32, end: u32) -> Range {
        Range::new(Position::new(line, start), Position::new(line, end))
    }

    #[test]
    fn toml_errors_land_on_their_manifest_with_cargos_message() {
        // cargo 1.95's words for an unclosed table and a bad dependency.
        let files = manifest_diagnostics(
            Path::new("/ws"),
            "error: unclosed table, expected `]`\n --> Cargo.toml:1:9\n  |\n1 | [package\n  |         ^\n",
        );
        assert_eq!(
            only(&files, "/ws/Cargo.toml"),
            [(range(0, 8, 9), "unclosed table, expected `]`".to_owned())]
        );
        let files = manifest_diagnostics(
            Path::new("/ws"),
            "error: invalid type: integer `2021`, expected a string or workspace\n --> a/Cargo.toml:4:9\n  |\n4 | edition=2021\n  |         ^^^^\nerror: failed to load manifest for workspace member `/ws/a`\nreferenced by workspace at `/ws/Cargo.toml`\n",
        );
        assert_eq!(
            only(&files, "/ws/a/Cargo.toml"),
            [(
                range(3, 8, 12),
                "invalid type: integer `2021`, expected a string or workspace".to_owned()
            )]
        );
        let top = &files[Path::new("/ws/Cargo.toml")][0];
        assert_eq!(top.range, Range::default());
        assert_eq!(
            top.message,
            "failed to load manifest for workspace member `/ws/a`\nreferenced by workspace at `/ws/Cargo.toml`"
        );
        assert_eq!(top.source.as_deref(), Some("cargo"));
        assert_eq!(top.severity, Some(DiagnosticSeverity::ERROR));
    }

    #[test]
    fn an_unstructured_failure_is_kept_whole() {
        let files = manifest_diagnostics(Path::new("/ws"), "something broke\n");
        assert_eq!(
            only(&files, "/ws/Cargo.toml"),
            [(Range::default(), "something broke".to_owned())]
        );
        assert!(manifest_diagnostics(Path::new("/ws"), "").is_empty());
    }
}
