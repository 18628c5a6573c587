//! `getDiagnostics`: compiler and linter errors and warnings, by file.
//!
//! The shape is the `claude` CLI's, not LSP's wire form: severities are the
//! strings `Error`, `Warning`, `Info`, `Hint`; `code` is a string; files are
//! named by `file://` + raw absolute path, or by the `uri` argument echoed.

use std::path::Path;
use std::sync::Arc;

use ide_mcp_runtime::{IntoToolResult, PreparedResult, ResultOut};
use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use crate::cache::ResultCache;
use crate::context::EditorPorts;
use crate::ports::{DiagnosticsQuery, FileDiagnostics};
use crate::uri::{FileUri, LossyPath, PathInput};

/// The CLI's name of an LSP severity. A missing or unknown severity is
/// `"Error"`, as VS Code's LSP client reads it.
pub fn severity_name(severity: Option<DiagnosticSeverity>) -> &'static str {
    Dialect::Claude.severity_name(severity)
}

/// Whose shape a diagnostics result takes: the `claude` CLI's
/// (`getDiagnostics`), or the Copilot CLI's (`get_diagnostics`: severity
/// `Information` instead of `Info`, and each file's `filePath` beside its
/// `uri`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dialect {
    /// `claude`'s.
    #[default]
    Claude,
    /// `copilot`'s.
    Copilot,
}

impl Dialect {
    /// This dialect's name of an LSP severity (`"Error"` when missing or
    /// unknown).
    pub fn severity_name(self, severity: Option<DiagnosticSeverity>) -> &'static str {
        match severity {
            Some(DiagnosticSeverity::WARNING) => "Warning",
            Some(DiagnosticSeverity::INFORMATION) => match self {
                Self::Claude => "Info",
                Self::Copilot => "Information",
            },
            Some(DiagnosticSeverity::HINT) => "Hint",
            _ => "Error",
        }
    }
}

/// One diagnostic in the CLI's shape:
/// `{"message", "severity", "range", "source"?, "code"?}`.
#[derive(Clone, Copy, Debug)]
pub struct WireDiagnostic<'a>(pub &'a Diagnostic);

impl Serialize for WireDiagnostic<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Styled(self.0, Dialect::Claude).serialize(serializer)
    }
}

/// One diagnostic in a dialect's shape.
#[derive(Clone, Copy, Debug)]
struct Styled<'a>(&'a Diagnostic, Dialect);

impl Serialize for Styled<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Code<'a>(&'a NumberOrString);
        impl Serialize for Code<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self.0 {
                    NumberOrString::Number(n) => serializer.collect_str(n),
                    NumberOrString::String(s) => serializer.serialize_str(s),
                }
            }
        }
        let Self(d, dialect) = *self;
        let len = 3 + usize::from(d.source.is_some()) + usize::from(d.code.is_some());
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("message", &d.message)?;
        map.serialize_entry("severity", dialect.severity_name(d.severity))?;
        map.serialize_entry("range", &d.range)?;
        if let Some(source) = &d.source {
            map.serialize_entry("source", source)?;
        }
        if let Some(code) = &d.code {
            map.serialize_entry("code", &Code(code))?;
        }
        map.end()
    }
}

/// A list of diagnostics in a dialect's shape.
#[derive(Clone, Copy, Debug)]
struct WireList<'a>(&'a [Diagnostic], Dialect);

impl Serialize for WireList<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|d| Styled(d, self.1)))
    }
}

/// How a file is named in the result.
#[derive(Clone, Copy, Debug)]
enum FileName<'a> {
    /// The client's `uri`, echoed exactly.
    Echo(&'a str),
    /// `file://` + the raw path.
    Path(&'a Path),
}

/// The `getDiagnostics` result: `[{"uri", "diagnostics": […]}, …]`
/// (`[{"uri", "filePath", "diagnostics"}]` in the Copilot dialect).
#[derive(Clone, Debug)]
pub struct DiagnosticsResult<'a> {
    files: Vec<(FileName<'a>, &'a [Diagnostic])>,
    dialect: Dialect,
}

impl DiagnosticsResult<'_> {
    /// The same result in `dialect`'s shape.
    #[must_use]
    pub fn in_dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }
}

impl Serialize for DiagnosticsResult<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Entry<'a>(FileName<'a>, &'a [Diagnostic], Dialect);
        impl Serialize for Entry<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let copilot = self.2 == Dialect::Copilot;
                let mut map = serializer.serialize_map(Some(2 + usize::from(copilot)))?;
                match self.0 {
                    FileName::Echo(uri) => map.serialize_entry("uri", uri)?,
                    FileName::Path(path) => map.serialize_entry("uri", &FileUri(path))?,
                }
                if copilot {
                    match self.0 {
                        // The path the `uri` names: percent-decoded, when it is
                        // a URI (the last reading).
                        FileName::Echo(uri) => {
                            match PathInput::parse(uri)
                                .and_then(|i| i.candidates().last().map(Path::to_path_buf))
                            {
                                Some(path) => map.serialize_entry("filePath", &LossyPath(&path))?,
                                None => map.serialize_entry("filePath", uri)?,
                            }
                        }
                        FileName::Path(path) => {
                            map.serialize_entry("filePath", &LossyPath(path))?;
                        }
                    }
                }
                map.serialize_entry("diagnostics", &WireList(self.1, self.2))?;
                map.end()
            }
        }
        let mut seq = serializer.serialize_seq(Some(self.files.len()))?;
        for &(name, diagnostics) in &self.files {
            seq.serialize_element(&Entry(name, diagnostics, self.dialect))?;
        }
        seq.end()
    }
}

/// The result for `getDiagnostics {}`: every file with diagnostics, named
/// `file://` + raw path, in the order given; files with none are left out
/// (`[]` when nothing is known anywhere).
pub fn all_diagnostics_result(files: &[FileDiagnostics]) -> DiagnosticsResult<'_> {
    DiagnosticsResult {
        files: files
            .iter()
            .filter(|f| !f.diagnostics.is_empty())
            .map(|f| (FileName::Path(&f.path), &f.diagnostics[..]))
            .collect(),
        dialect: Dialect::Claude,
    }
}

/// `files` without those the deny rules hide.
pub fn shown_diagnostics(
    cx: &EditorPorts,
    mut files: Vec<FileDiagnostics>,
) -> Vec<FileDiagnostics> {
    if !cx.deny_rules().current().is_empty() {
        files.retain(|file| !cx.hides(&file.path));
    }
    files
}

/// The result for `getDiagnostics {"uri": uri}`: one entry naming `uri`
/// exactly as given, with `diagnostics` (an empty list when nothing is known,
/// which is a success: an error would make the CLI stop tracking the file).
pub fn file_diagnostics_result<'a>(
    uri: &'a str,
    diagnostics: &'a [Diagnostic],
) -> DiagnosticsResult<'a> {
    DiagnosticsResult {
        files: vec![(FileName::Echo(uri), diagnostics)],
        dialect: Dialect::Claude,
    }
}

/// What [`get_diagnostics`] returns: bytes cached for the port's generation
/// (the whole list, or the file asked for last), or one file's entry.
#[derive(Debug)]
pub enum DiagnosticsReply {
    /// Every file's entry, or the one file's, serialized once per generation
    /// of the data.
    All(PreparedResult),
    /// One file's entry; `diagnostics` is `None` when nothing is known.
    File {
        /// The `uri` argument, echoed.
        uri: String,
        /// The file's diagnostics.
        diagnostics: Option<Arc<[Diagnostic]>>,
    },
}

impl IntoToolResult for DiagnosticsReply {
    fn write_tool_result(self, out: &mut ResultOut<'_>) {
        match self {
            Self::All(prepared) => prepared.write_tool_result(out),
            Self::File { uri, diagnostics } => {
                let diagnostics = diagnostics.as_deref().unwrap_or(&[]);
                out.json_text(&file_diagnostics_result(&uri, diagnostics));
            }
        }
    }
}

/// Returns the compiler and linter errors and warnings of the workspace, by
/// file: `[{"uri": "file:///abs/a.rs", "diagnostics": [{"message", "severity":
/// "Error"|"Warning"|"Info"|"Hint", "range" (zero-based lines, UTF-16
/// characters), "source", "code"}]}]`. Pass `uri` (a `file://` URI or an
/// absolute path) to get one file's diagnostics only; without it, every file
/// with problems is listed (`[]` when there are none).
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn get_diagnostics(
    cx: &EditorPorts,
    #[arg(description = "File URI or absolute path; omit to list all files")] uri: Option<String>,
) -> DiagnosticsReply {
    let port = cx.diagnostics();
    if let Some(uri) = uri {
        // Answer at once from what is known: the CLI waits only 0.5 s here.
        let Some(port) = port else {
            return DiagnosticsReply::File {
                uri,
                diagnostics: None,
            };
        };
        return DiagnosticsReply::All(file_diagnostics_prepared(cx, port, &uri));
    }
    let Some(port) = port else {
        return DiagnosticsReply::All(PreparedResult::json_text(&all_diagnostics_result(&[])));
    };
    if let Some(settle) = port.settle() {
        settle.await;
    }
    DiagnosticsReply::All(all_diagnostics_prepared(cx, port))
}

/// The serialized `getDiagnostics {}` result, from the cache when the port's
/// generation has not changed since it was built.
pub(crate) fn all_diagnostics_prepared(
    cx: &EditorPorts,
    port: &dyn DiagnosticsQuery,
) -> PreparedResult {
    // The generations are read before the data (see `DiagnosticsQuery`), so
    // the cache never files new data under an old generation's key.
    let generation = (port.generation(), cx.deny_rules().generation());
    cx.caches
        .get::<AllDiagnosticsCache>()
        .0
        .get_or_build(generation, || {
            let files = shown_diagnostics(cx, port.all());
            PreparedResult::json_text(&all_diagnostics_result(&files))
        })
}

/// The serialized `getDiagnostics {"uri": uri}` result, from the cache when
/// the same `uri` was asked for last and the port's generation has not
/// changed since (the CLI asks again and again for the file it edits).
fn file_diagnostics_prepared(
    cx: &EditorPorts,
    port: &dyn DiagnosticsQuery,
    uri: &str,
) -> PreparedResult {
    // Read before the data, as for the whole list.
    let generation = (port.generation(), cx.deny_rules().generation());
    cx.caches.get::<FileDiagnosticsCache>().0.get_or_build_by(
        |(cached, asked)| *cached == generation && asked == uri,
        || (generation, uri.to_owned()),
        || {
            // A hidden file's diagnostics are none, its `uri` echoed.
            let diagnostics = PathInput::parse(uri)
                .filter(|input| !cx.hides_input(input))
                .and_then(|input| input.candidates().find_map(|path| port.for_file(path)));
            PreparedResult::json_text(&file_diagnostics_result(
                uri,
                diagnostics.as_deref().unwrap_or(&[]),
            ))
        },
    )
}

/// The `getDiagnostics {"uri": …}` result last serialized: the generations of
/// the data and of the deny rules, and the `uri` it was built for.
#[derive(Default)]
struct FileDiagnosticsCache(ResultCache<((u64, u64), String)>);

/// The `getDiagnostics` (no `uri`) result last serialized, and the generations
/// of the data and of the deny rules it was built from.
#[derive(Default)]
struct AllDiagnosticsCache(ResultCache<(u64, u64)>);

#[cfg(test)]
#[path = "diagnostics_tests.rs"]
mod tests;
