//! `openFile`: asks the editor to show a file, optionally selecting a range
//! found by text, through the [`FileOpener`](crate::ports::FileOpener) port.
//!
//! The arguments are those of the official IDE extensions: `filePath`,
//! `preview`, `startText`/`endText` (the selection runs from the first
//! occurrence of `startText` to the end of the first occurrence of `endText`
//! after it, or to the end of `startText` alone), `selectToEndOfLine`, and
//! `makeFrontmost` (default `true`). The text searched is the open
//! document's (unsaved changes included), else the file on disk.

use std::path::Path;

use ide_mcp_runtime::CallToolResult;
use lsp_types::Position;
use ropey::Rope;

use crate::context::EditorPorts;
use crate::ports::OpenFileRequest;
use crate::position::{PositionEncoding, char_to_position, line_content_end};
use crate::uri::PathInput;

/// The message of the result when the host has no [`FileOpener`](crate::ports::FileOpener).
pub const NO_OPENER: &str = "openFile is not available: this host cannot show files in an editor";

/// The range `startText`..`endText` in `text`, in UTF-16 positions; `None`
/// without `start_text`; `Err` naming what was not found.
pub fn find_selection(
    text: &Rope,
    start_text: Option<&str>,
    end_text: Option<&str>,
    select_to_end_of_line: bool,
) -> Result<Option<(Position, Position)>, String> {
    let Some(start_text) = start_text.filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let whole = text.to_string();
    let start = whole
        .find(start_text)
        .ok_or_else(|| format!("`startText` not found: {start_text:?}"))?;
    let mut end = start + start_text.len();
    if let Some(end_text) = end_text.filter(|s| !s.is_empty()) {
        let at = whole[start..]
            .find(end_text)
            .ok_or_else(|| format!("`endText` not found after `startText`: {end_text:?}"))?;
        end = start + at + end_text.len();
    }
    let (start, mut end) = (text.byte_to_char(start), text.byte_to_char(end));
    if select_to_end_of_line {
        // The line of the selection's last char (not the next line when
        // the selection ends right after a line break).
        let line = text.char_to_line(end.saturating_sub(1).max(start));
        end = line_content_end(text, line, text.line_to_char(line)).max(end);
    }
    Ok(Some((
        char_to_position(text, start, PositionEncoding::Utf16),
        char_to_position(text, end, PositionEncoding::Utf16),
    )))
}

/// Builds the request: the path from `file_path` and the selection found in
/// `text`.
fn request(
    path: &Path,
    text: Option<&Rope>,
    args: &OpenFileArgs,
) -> Result<OpenFileRequest, String> {
    let selection = match (text, args.start_text.as_deref()) {
        (_, None) => None,
        (Some(text), start) => find_selection(
            text,
            start,
            args.end_text.as_deref(),
            args.select_to_end_of_line,
        )?,
        (None, Some(_)) => {
            return Err(format!(
                "cannot read {} to find `startText`",
                path.display()
            ));
        }
    };
    Ok(OpenFileRequest {
        path: path.to_path_buf(),
        selection,
        take_focus: args.make_frontmost,
        preview: args.preview,
    })
}

/// `openFile`'s arguments, defaults applied.
#[derive(Clone, Debug)]
struct OpenFileArgs {
    preview: bool,
    start_text: Option<String>,
    end_text: Option<String>,
    select_to_end_of_line: bool,
    make_frontmost: bool,
}

/// Opens the file at `filePath` (an absolute path or `file://` URI) in the
/// editor, optionally selecting from the first occurrence of `startText` to
/// the end of the first `endText` after it. Answers `Opened file: <path>`.
#[ide_mcp_runtime::mcp_tool]
pub async fn open_file(
    cx: &EditorPorts,
    #[arg(description = "The file's absolute path or `file://` URI")] file_path: String,
    #[arg(description = "Open in a preview tab where the editor has them")] preview: Option<bool>,
    #[arg(description = "Select from the first occurrence of this text")] start_text: Option<
        String,
    >,
    #[arg(
        description = "Select to the end of the first occurrence of this text after `startText`"
    )]
    end_text: Option<String>,
    #[arg(description = "Extend the selection to the end of its last line")]
    select_to_end_of_line: Option<bool>,
    #[arg(description = "Focus the editor on the file (default true)")] make_frontmost: Option<
        bool,
    >,
) -> CallToolResult {
    let Some(opener) = cx.opener() else {
        return CallToolResult::error(NO_OPENER);
    };
    let Some(input) = PathInput::parse(&file_path) else {
        return CallToolResult::error(format!(
            "`filePath` is not an absolute path or file URI: {file_path:?}"
        ));
    };
    // Neither shown nor read: its text would answer `startText`.
    if let Some(rule) = cx.read_denial_of(&input) {
        return CallToolResult::error(rule.refusal("openFile refused", &file_path));
    }
    let path = input.path().to_path_buf();
    let args = OpenFileArgs {
        preview: preview.unwrap_or(false),
        start_text,
        end_text,
        select_to_end_of_line: select_to_end_of_line.unwrap_or(false),
        make_frontmost: make_frontmost.unwrap_or(true),
    };
    let text = match cx.buffers().and_then(|b| b.handle_for_path(&path)) {
        Some(handle) => Some(handle.snapshot().text.clone()),
        None if args.start_text.is_some() => std::fs::read_to_string(&path).ok().map(Rope::from),
        None => None,
    };
    let request = match request(&path, text.as_ref(), &args) {
        Ok(request) => request,
        Err(message) => return CallToolResult::error(message),
    };
    match opener.open_file(request).await {
        Ok(()) => CallToolResult::text(format!("Opened file: {}", path.display())),
        Err(message) => {
            CallToolResult::error(format!("could not open {}: {message}", path.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(
        text: &str,
        start: Option<&str>,
        end: Option<&str>,
        eol: bool,
    ) -> Option<(Position, Position)> {
        find_selection(&Rope::from_str(text), start, end, eol).unwrap()
    }

    #[test]
    fn selections_by_text() {
        let text = "fn a() {}\nfn main() {\n    let 😀 = 1;\n}\n";
        assert_eq!(found(text, None, Some("x"), true), None);
        assert_eq!(
            found(text, Some("fn main"), None, false),
            Some((Position::new(1, 0), Position::new(1, 7)))
        );
        assert_eq!(
            found(text, Some("fn main"), Some("}"), false),
            Some((Position::new(1, 0), Position::new(3, 1)))
        );
        assert_eq!(
            found(text, Some("let"), None, true),
            Some((Position::new(2, 4), Position::new(2, 15))),
            "to the end of the line, in UTF-16 units"
        );
        let err = find_selection(&Rope::from_str(text), Some("nope"), None, false).unwrap_err();
        assert!(err.contains("`startText` not found"), "{err}");
        let err =
            find_selection(&Rope::from_str(text), Some("main"), Some("fn a"), false).unwrap_err();
        assert!(err.contains("`endText` not found"), "{err}");
    }
}
