//! The live LSP tools: `findReferences`, `goToDefinition`,
//! `goToImplementation`, `hover`, `documentSymbols`, `workspaceSymbols`,
//! asked of the editor's own language server for the file's language, on the
//! editor's current text (unsaved edits included), through the
//! [`LanguageServers`] port.
//!
//! Arguments are those of the CLI's own `LSP` tool: `filePath`, and `line`
//! and `character` 1-based, characters counted as Unicode scalar values.
//! Every location comes back the same way, with the text of its line.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use ide_mcp_runtime::CallToolResult;
use serde_json::Value;

use crate::context::ReadContext;
use crate::uri::PathInput;

/// What a live LSP tool asks the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LspFeature {
    /// `textDocument/references`.
    References,
    /// `textDocument/definition`.
    Definition,
    /// `textDocument/implementation`.
    Implementation,
    /// `textDocument/hover`.
    Hover,
    /// `textDocument/documentSymbol`.
    DocumentSymbols,
    /// `workspace/symbol`.
    WorkspaceSymbols,
}

impl LspFeature {
    /// Every feature.
    pub const ALL: [Self; 6] = [
        Self::References,
        Self::Definition,
        Self::Implementation,
        Self::Hover,
        Self::DocumentSymbols,
        Self::WorkspaceSymbols,
    ];

    /// The LSP method.
    pub fn method(self) -> &'static str {
        match self {
            Self::References => "textDocument/references",
            Self::Definition => "textDocument/definition",
            Self::Implementation => "textDocument/implementation",
            Self::Hover => "textDocument/hover",
            Self::DocumentSymbols => "textDocument/documentSymbol",
            Self::WorkspaceSymbols => "workspace/symbol",
        }
    }

    /// The server capability that says the server provides it.
    pub fn capability(self) -> &'static str {
        match self {
            Self::References => "referencesProvider",
            Self::Definition => "definitionProvider",
            Self::Implementation => "implementationProvider",
            Self::Hover => "hoverProvider",
            Self::DocumentSymbols => "documentSymbolProvider",
            Self::WorkspaceSymbols => "workspaceSymbolProvider",
        }
    }

    /// What it is, for messages ("does not provide references").
    pub fn what(self) -> &'static str {
        match self {
            Self::References => "references",
            Self::Definition => "definitions",
            Self::Implementation => "implementations",
            Self::Hover => "hover",
            Self::DocumentSymbols => "document symbols",
            Self::WorkspaceSymbols => "workspace symbols",
        }
    }
}

/// A position as the model counts: 1-based line, 1-based character in
/// Unicode scalar values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CharPosition {
    /// The line, from 1.
    pub line: u32,
    /// The character, from 1.
    pub character: u32,
}

/// One question for a language server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LspQuery {
    /// What is asked.
    pub feature: LspFeature,
    /// The file asked about (none for `workspaceSymbols`).
    pub path: Option<PathBuf>,
    /// Where in it (for the position requests).
    pub position: Option<CharPosition>,
    /// The query of `workspaceSymbols`.
    pub query: Option<String>,
}

/// The future [`LanguageServers::ask`] returns: the tool's JSON answer, or
/// a message for the model.
pub type LspFuture = Pin<Box<dyn Future<Output = Result<Value, String>> + Send>>;

/// The editor's running language servers (the LSP proxy's host).
pub trait LanguageServers: Send + Sync {
    /// Asks `query` of the server for its file's language; the answer is
    /// in the model's positions, each location with its line's text.
    /// Dropping the future cancels the request.
    fn ask(&self, query: LspQuery) -> LspFuture;
}

/// The message of the result when the host has no [`LanguageServers`].
pub const NO_SERVERS: &str =
    "the live LSP tools are not available: this host has no editor's language server";

/// Runs `query` through the context's servers, as a tool result.
async fn run(cx: &ReadContext, query: LspQuery) -> CallToolResult {
    let Some(servers) = cx.servers() else {
        return CallToolResult::error(NO_SERVERS);
    };
    match servers.ask(query).await {
        Ok(answer) => CallToolResult::text(answer.to_string()),
        Err(message) => CallToolResult::error(message),
    }
}

/// A position query from the tool's arguments; `Err` for the model.
fn position_query(
    feature: LspFeature,
    file_path: &str,
    line: u32,
    character: u32,
) -> Result<LspQuery, String> {
    let path = file(file_path)?;
    if line == 0 || character == 0 {
        return Err("`line` and `character` are 1-based".to_owned());
    }
    Ok(LspQuery {
        feature,
        path: Some(path),
        position: Some(CharPosition { line, character }),
        query: None,
    })
}

fn file(file_path: &str) -> Result<PathBuf, String> {
    PathInput::parse(file_path)
        .map(|p| p.path().to_path_buf())
        .ok_or_else(|| format!("`filePath` is not an absolute path or file URI: {file_path:?}"))
}

async fn at_position(
    cx: &ReadContext,
    feature: LspFeature,
    file_path: &str,
    line: u32,
    character: u32,
) -> CallToolResult {
    match position_query(feature, file_path, line, character) {
        Ok(query) => run(cx, query).await,
        Err(message) => CallToolResult::error(message),
    }
}

/// The arguments of the tools that ask about one position of a file.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PositionArgs {
    /// The file's absolute path or `file://` URI
    pub file_path: String,
    /// The line, 1-based
    pub line: u32,
    /// The character in the line, 1-based (Unicode scalar values)
    pub character: u32,
}

impl PositionArgs {
    async fn ask(self, cx: &ReadContext, feature: LspFeature) -> CallToolResult {
        at_position(cx, feature, &self.file_path, self.line, self.character).await
    }
}

/// Finds every reference to the symbol at a position, from the editor's
/// own language server on the editor's current text (unsaved edits
/// included). Answers `[{filePath, line, character, endLine, endCharacter,
/// lineText}]`, 1-based, characters as Unicode scalar values.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn find_references(cx: &ReadContext, #[args] at: PositionArgs) -> CallToolResult {
    at.ask(cx, LspFeature::References).await
}

/// Finds where the symbol at a position is defined, from the editor's own
/// language server on the editor's current text. Answers `[{filePath,
/// line, character, endLine, endCharacter, lineText}]`, 1-based.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn go_to_definition(cx: &ReadContext, #[args] at: PositionArgs) -> CallToolResult {
    at.ask(cx, LspFeature::Definition).await
}

/// Finds the implementations of the symbol at a position (of an interface,
/// a trait, an abstract method), from the editor's own language server.
/// Answers `[{filePath, line, character, endLine, endCharacter,
/// lineText}]`, 1-based.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn go_to_implementation(cx: &ReadContext, #[args] at: PositionArgs) -> CallToolResult {
    at.ask(cx, LspFeature::Implementation).await
}

/// The type and documentation of the symbol at a position, from the
/// editor's own language server. Answers `{contents, range?}` (`contents`
/// as text or Markdown; `null` when the server has nothing to say).
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn hover(cx: &ReadContext, #[args] at: PositionArgs) -> CallToolResult {
    at.ask(cx, LspFeature::Hover).await
}

/// The symbols (functions, classes, variables, …) of a file, as the
/// editor's own language server sees its current text. Answers `[{name,
/// kind, detail?, line, character, endLine, endCharacter, lineText,
/// children?}]`, 1-based.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn document_symbols(
    cx: &ReadContext,
    #[arg(description = "The file's absolute path or `file://` URI")] file_path: String,
) -> CallToolResult {
    match file(&file_path) {
        Ok(path) => {
            let query = LspQuery {
                feature: LspFeature::DocumentSymbols,
                path: Some(path),
                position: None,
                query: None,
            };
            run(cx, query).await
        }
        Err(message) => CallToolResult::error(message),
    }
}

/// Searches the workspace's symbols by name through the editor's own
/// language servers. Answers `[{name, kind, containerName?, filePath,
/// line?, character?, endLine?, endCharacter?, lineText?}]`, 1-based.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn workspace_symbols(
    cx: &ReadContext,
    #[arg(description = "The name, or part of it, to search for")] query: String,
) -> CallToolResult {
    let query = LspQuery {
        feature: LspFeature::WorkspaceSymbols,
        path: None,
        position: None,
        query: Some(query),
    };
    run(cx, query).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based() {
        let query = position_query(LspFeature::Hover, "/a/b.py", 3, 1).unwrap();
        assert_eq!(query.path.as_deref(), Some(std::path::Path::new("/a/b.py")));
        assert_eq!(
            query.position,
            Some(CharPosition {
                line: 3,
                character: 1
            })
        );
        let error = position_query(LspFeature::Hover, "/a/b.py", 0, 1).unwrap_err();
        assert_eq!(error, "`line` and `character` are 1-based");
        let error = position_query(LspFeature::Hover, "b.py", 1, 1).unwrap_err();
        assert!(error.contains("not an absolute path"), "{error}");
    }

    #[tokio::test]
    async fn without_servers_the_tools_say_so() {
        let at = PositionArgs {
            file_path: "/a.py".into(),
            line: 1,
            character: 1,
        };
        let result = find_references(&ReadContext::empty(), at).await;
        assert_eq!(result, CallToolResult::error(NO_SERVERS));
    }
}
