//! The headless state: workspace folders, files "open" from disk, a
//! selection, and the diagnostics sources, in the tools crate's ports.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use ide_mcp_lsp::client::{language_id, language_servers};
use ide_mcp_tools::deny::{DenyRules, SettingsRoots};
use ide_mcp_tools::memory::MemoryWorkspace;
use ide_mcp_tools::position::{PositionEncoding, convert};
use ide_mcp_tools::{BufferId, BufferStore, EditorPorts};
use lsp_types::Position;

use crate::diagnostics::ProgressBoard;
use crate::diagnostics::lsp::{LspSources, glob_files};
use crate::diagnostics::sources::{SourceOptions, combine, start_sources};

/// How long a one-shot query waits for the diagnostics: as long as the
/// first check takes, within reason.
pub const ONE_SHOT_WAIT: Duration = Duration::from_hours(1);

/// What the headless host serves.
#[derive(Clone, Debug, Default)]
pub struct HeadlessOptions {
    /// Workspace folders; the current directory when empty.
    pub workspaces: Vec<PathBuf>,
    /// Files shown as open editors, in tab order.
    pub open: Vec<PathBuf>,
    /// The active editor's selection (its file is opened too).
    pub select: Option<SelectionSpec>,
    /// Globs of files to open in the language servers at start, relative to
    /// each folder (`--lsp-open`).
    pub lsp_open: Vec<String>,
    /// The diagnostics sources; the language servers open, beside
    /// `sources.lsp_open`, the files opened here and the matches of
    /// [`lsp_open`](Self::lsp_open).
    pub sources: SourceOptions,
}

impl HeadlessOptions {
    /// For one query and exit (`ide-mcp call`): no watching; diagnostics
    /// computed only when a tool asks for them, and then waited for in full.
    pub fn one_shot(mut self) -> Self {
        self.sources.watch = false;
        self.sources.lazy = true;
        self.sources.wait = ONE_SHOT_WAIT;
        self
    }
}

/// `FILE:LINE:COL` or `FILE:LINE:COL-LINE:COL`: lines and columns 1-based,
/// columns counting characters, as compilers and editors print them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectionSpec {
    /// The file.
    pub path: PathBuf,
    /// Where the selection starts: (line, column), 1-based.
    pub start: (usize, usize),
    /// Where it ends; the same as `start` for a cursor.
    pub end: (usize, usize),
}

impl FromStr for SelectionSpec {
    type Err = String;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let number = |text: &str| text.parse::<usize>().ok().filter(|n| *n >= 1);
        // A range first: FILE:L:C-L:C (the file name may itself hold colons).
        let parts: Vec<&str> = input.rsplitn(4, ':').collect();
        if let [end_col, middle, start_line, path] = parts[..]
            && let Some((start_col, end_line)) = middle.split_once('-')
            && let (Some(a), Some(b), Some(c), Some(d)) = (
                number(start_line),
                number(start_col),
                number(end_line),
                number(end_col),
            )
            && !path.is_empty()
        {
            return Ok(Self {
                path: PathBuf::from(path),
                start: (a, b),
                end: (c, d),
            });
        }
        let parts: Vec<&str> = input.rsplitn(3, ':').collect();
        if let [col, line, path] = parts[..]
            && let (Some(line), Some(col)) = (number(line), number(col))
            && !path.is_empty()
        {
            return Ok(Self {
                path: PathBuf::from(path),
                start: (line, col),
                end: (line, col),
            });
        }
        Err(format!(
            "expected `FILE:LINE:COL` or `FILE:LINE:COL-LINE:COL` (1-based), got `{input}`"
        ))
    }
}

/// A setup problem, reported before anything is served.
#[derive(Debug)]
pub struct SetupError(String);

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SetupError {}

/// The headless host's state.
#[derive(Debug)]
pub struct Headless {
    /// What the tools read.
    pub context: EditorPorts,
    /// The open files and selection behind `context`.
    pub workspace: MemoryWorkspace,
    /// The workspace folders, absolute.
    pub folders: Vec<PathBuf>,
    /// Where the diagnostics sources report long work.
    pub progress: ProgressBoard,
    /// The language servers (the diagnostics of `--lsp`, and the live LSP
    /// tools' servers), shut down by [`shutdown`](Self::shutdown).
    pub lsp: LspSources,
    /// The user's deny rules for the folders, watched: what they hide is
    /// neither read from disk nor served.
    pub deny: Arc<DenyRules>,
}

impl Headless {
    /// Reads the open files and starts the diagnostics engines; must be
    /// called within a tokio runtime when diagnostics are on.
    pub fn new(options: &HeadlessOptions) -> Result<Self, SetupError> {
        let folders = canonical_folders(&options.workspaces)?;
        let deny = DenyRules::watch(SettingsRoots::from_env(), folders.clone());
        let workspace = MemoryWorkspace::new();
        let opened = open_files(&workspace, options, &deny)?;
        let progress = ProgressBoard::new();
        let mut sources = options.sources.clone();
        sources.lsp_open.extend(opened);
        sources
            .lsp_open
            .extend(glob_files(&folders, &options.lsp_open).map_err(SetupError)?);
        sources.lsp_open.retain(|path| !deny.hides(path));
        let (sources, lsp) = start_sources(&folders, &sources, &progress);
        let mut builder = EditorPorts::builder()
            .editor(workspace.editor.clone())
            .buffers(workspace.buffers.clone())
            .workspace_folders(folders.iter().cloned())
            .deny_rules(Arc::clone(&deny));
        if let Some(port) = combine(sources) {
            builder = builder.diagnostics(port);
        }
        if !lsp.servers.is_empty() {
            // The live LSP tools, on the servers' documents as synced from
            // disk (the memory workspace's open files are the disk's too).
            builder = builder.servers(language_servers(&lsp.servers, &folders));
        }
        Ok(Self {
            context: builder.build(),
            workspace,
            folders,
            progress,
            lsp,
            deny,
        })
    }

    /// Stops what runs in the background: the language servers get
    /// `shutdown` and `exit`, each bounded, and are killed if they hang.
    pub async fn shutdown(&self) {
        self.lsp.shutdown().await;
    }
}

/// The workspace folders, absolute and each once; `.` when none are given.
fn canonical_folders(requested: &[PathBuf]) -> Result<Vec<PathBuf>, SetupError> {
    let here = [PathBuf::from(".")];
    let requested = if requested.is_empty() {
        &here[..]
    } else {
        requested
    };
    let mut folders = Vec::new();
    for folder in requested {
        let absolute = std::fs::canonicalize(folder)
            .map_err(|error| SetupError(format!("workspace `{}`: {error}", folder.display())))?;
        if !absolute.is_dir() {
            return Err(SetupError(format!(
                "workspace `{}` is not a directory",
                folder.display()
            )));
        }
        if !folders.contains(&absolute) {
            folders.push(absolute);
        }
    }
    Ok(folders)
}

/// Opens `--open`'s files and `--select`'s in `workspace`, from disk, and
/// focuses the selection's (else the last opened); the files opened,
/// absolute, in tab order. A file the deny rules hide is not read: it is
/// left out, with its selection.
fn open_files(
    workspace: &MemoryWorkspace,
    options: &HeadlessOptions,
    deny: &DenyRules,
) -> Result<Vec<PathBuf>, SetupError> {
    let mut opened: Vec<PathBuf> = Vec::new();
    let mut open = |path: &Path| -> Result<Option<BufferId>, SetupError> {
        let absolute = std::fs::canonicalize(path)
            .map_err(|error| SetupError(format!("cannot open `{}`: {error}", path.display())))?;
        if let Some(rule) = deny
            .read_denial(&absolute)
            .or_else(|| deny.read_denial(path))
        {
            tracing::warn!(path = %path.display(), rule = %rule, "not opened: the user's deny rules hide it");
            return Ok(None);
        }
        if let Some(index) = opened.iter().position(|p| *p == absolute) {
            return Ok(Some(BufferId(index as u64 + 1)));
        }
        let text = std::fs::read_to_string(&absolute)
            .map_err(|error| SetupError(format!("cannot open `{}`: {error}", path.display())))?;
        let id = BufferId(opened.len() as u64 + 1);
        workspace.open(id, Some(&absolute), language_id(&absolute), &text);
        opened.push(absolute);
        Ok(Some(id))
    };
    let mut last = None;
    for path in &options.open {
        last = open(path)?.or(last);
    }
    if let Some(select) = &options.select {
        if let Some(id) = open(&select.path)? {
            select_in(workspace, id, select)?;
        }
    } else if let Some(id) = last {
        // The last file opened has focus, its cursor at the start.
        workspace.editor.set_active(Some(id));
    }
    Ok(opened)
}

/// Selects `select`'s range (1-based lines, columns in characters, clamped
/// as positions are) in the open buffer `id`.
fn select_in(
    workspace: &MemoryWorkspace,
    id: BufferId,
    select: &SelectionSpec,
) -> Result<(), SetupError> {
    let handle = workspace
        .buffers
        .handle_for(id)
        .expect("the buffer was just opened");
    let text = handle.snapshot().text.clone();
    let position = |(line, column): (usize, usize)| {
        let line0 = line - 1;
        if line0 >= text.len_lines() {
            return Err(SetupError(format!(
                "--select: line {line} is past the end of `{}` ({} lines)",
                select.path.display(),
                text.len_lines()
            )));
        }
        let saturate = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let chars = Position::new(saturate(line0), saturate(column - 1));
        Ok(convert(
            &text,
            chars,
            PositionEncoding::Utf32,
            PositionEncoding::Utf16,
        ))
    };
    workspace.select(id, position(select.start)?, position(select.end)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_specs_parse_cursor_and_range_forms() {
        let cursor: SelectionSpec = "src/a.rs:3:5".parse().unwrap();
        assert_eq!(cursor.path, Path::new("src/a.rs"));
        assert_eq!((cursor.start, cursor.end), ((3, 5), (3, 5)));
        let range: SelectionSpec = "dir:with:colons/a.rs:1:2-3:4".parse().unwrap();
        assert_eq!(range.path, Path::new("dir:with:colons/a.rs"));
        assert_eq!((range.start, range.end), ((1, 2), (3, 4)));
        for bad in [
            "a.rs",
            "a.rs:1",
            "a.rs:0:1",
            ":1:1",
            "a.rs:x:1",
            "a.rs:1:2-3",
        ] {
            assert!(bad.parse::<SelectionSpec>().is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn a_denied_file_is_neither_opened_nor_selected() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::write(ws.join("main.c"), "int main(void) { return 0; }\n").unwrap();
        std::fs::write(ws.join(".env"), "SECRET=1\n").unwrap();
        std::fs::create_dir_all(ws.join(".claude")).unwrap();
        std::fs::write(
            ws.join(".claude/settings.json"),
            r#"{"permissions": {"deny": ["Read(./.env)"]}}"#,
        )
        .unwrap();
        let options = HeadlessOptions {
            workspaces: vec![ws.clone()],
            open: vec![ws.join("main.c"), ws.join(".env")],
            select: Some(
                format!("{}:1:1-1:7", ws.join(".env").display())
                    .parse()
                    .unwrap(),
            ),
            ..HeadlessOptions::default()
        };
        let headless = Headless::new(&options).unwrap();
        let tabs =
            serde_json::to_value(ide_mcp_tools::OpenEditorsState::read(&headless.context)).unwrap();
        let uris: Vec<&str> = tabs["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tab| tab["uri"].as_str().unwrap())
            .collect();
        assert_eq!(uris, [format!("file://{}", ws.join("main.c").display())]);
        assert!(headless.workspace.buffers.handle_for(BufferId(2)).is_none());
        let selection =
            serde_json::to_value(ide_mcp_tools::get_current_selection(&headless.context)).unwrap();
        assert_eq!(selection["success"], false, "{selection}");
        headless.shutdown().await;
    }
}
