//! The live LSP tools: `findReferences`, `goToDefinition`,
//! `goToImplementation`, `hover`, `documentSymbols`, `workspaceSymbols`,
//! `callHierarchy`, `renamePreview` and `quickFixes`, asked of the IDE's
//! language server for the file's language, on the IDE's current text,
//! through the [`LanguageServers`](crate::ports::LanguageServers) port: behind the LSP proxy, the
//! editor's own server on the editor's text (unsaved edits included); in
//! `ide-mcp serve --lsp`, the servers the host runs, on the disk's text.
//! `renamePreview` and `quickFixes` show edits as diffs and apply nothing.
//!
//! Arguments are those of the CLI's own `LSP` tool: `filePath`, and `line`
//! and `character` 1-based, characters counted as Unicode scalar values.
//! Every location comes back the same way, with the text of its line.

use std::path::{Path, PathBuf};

use ide_mcp_runtime::{CallToolResult, Content};
use serde_json::Value;

use crate::context::EditorPorts;
use crate::deny::RuleSet;
use crate::ports::{CallDirection, CharPosition, LspFeature, LspQuery};
use crate::uri::PathInput;

/// The message of the result when the host has no [`LanguageServers`](crate::ports::LanguageServers).
pub const NO_SERVERS: &str =
    "the live LSP tools are not available: this host has no language server";

/// Runs `query` through the context's servers, as a tool result: refused
/// for a file the deny rules hide; the answer without what it names in
/// hidden files, and a second text saying how many were left out.
async fn run(cx: &EditorPorts, query: Result<LspQuery, String>) -> CallToolResult {
    let query = match query {
        Ok(query) => query,
        Err(message) => return CallToolResult::error(message),
    };
    if let Some(path) = query.path()
        && let Some(rule) = cx.deny_rules().read_denial(path)
    {
        return CallToolResult::error(rule.refusal("not asked", &path.to_string_lossy()));
    }
    let Some(servers) = cx.servers() else {
        return CallToolResult::error(NO_SERVERS);
    };
    let rules = cx.deny_rules().current();
    match servers.ask(query, rules.clone()).await {
        Ok(answer) => live_result(answer, &rules),
        Err(message) => CallToolResult::error(message),
    }
}

/// The tool result of `answer`: its JSON text, less what `rules` hide,
/// then, when something was left out, how many.
pub fn live_result(mut answer: Value, rules: &RuleSet) -> CallToolResult {
    let left_out = leave_out_hidden(&mut answer, rules);
    let mut result = CallToolResult::text(answer.to_string());
    if left_out > 0 {
        result.content.push(Content::Text(left_out_note(left_out)));
    }
    result
}

/// What the model reads when results were left out.
fn left_out_note(count: usize) -> String {
    let results = if count == 1 { "result" } else { "results" };
    format!("{count} {results} in files the user's deny rules hide were left out")
}

/// Removes from `answer` every entry of a list (at any depth) whose
/// `filePath` or `newFilePath` the rules hide; how many were removed.
pub fn leave_out_hidden(answer: &mut Value, rules: &RuleSet) -> usize {
    if rules.is_empty() {
        return 0;
    }
    let names_hidden = |item: &Value| {
        ["filePath", "newFilePath"].into_iter().any(|key| {
            item.get(key)
                .and_then(Value::as_str)
                .is_some_and(|path| rules.hides(Path::new(path)))
        })
    };
    match answer {
        Value::Array(items) => {
            let before = items.len();
            items.retain(|item| !names_hidden(item));
            let removed = before - items.len();
            removed
                + items
                    .iter_mut()
                    .map(|item| leave_out_hidden(item, rules))
                    .sum::<usize>()
        }
        Value::Object(members) => members
            .values_mut()
            .map(|member| leave_out_hidden(member, rules))
            .sum(),
        _ => 0,
    }
}

fn file(file_path: &str) -> Result<PathBuf, String> {
    PathInput::parse(file_path)
        .map(|p| p.path().to_path_buf())
        .ok_or_else(|| format!("`filePath` is not an absolute path or file URI: {file_path:?}"))
}

/// The model's position from 1-based `line` and `character`.
fn position(line: u32, character: u32) -> Result<CharPosition, String> {
    match (line, character) {
        (0, _) => Err("`line` is 1-based: the first line is 1".to_owned()),
        (_, 0) => Err("`character` is 1-based: the first character is 1".to_owned()),
        _ => Ok(CharPosition { line, character }),
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
    fn query(&self, feature: LspFeature) -> Result<LspQuery, String> {
        Ok(LspQuery::At {
            feature,
            path: file(&self.file_path)?,
            at: position(self.line, self.character)?,
        })
    }

    async fn ask(self, cx: &EditorPorts, feature: LspFeature) -> CallToolResult {
        run(cx, self.query(feature)).await
    }
}

/// The arguments of `findReferences`: a position, or a symbol's name.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReferencesArgs {
    /// The file's absolute path or `file://` URI
    pub file_path: String,
    /// The line, 1-based (with `character`; or give `symbol` instead)
    pub line: Option<u32>,
    /// The character in the line, 1-based, Unicode scalar values (with `line`)
    pub character: Option<u32>,
    /// The symbol's name in the file instead of a position: `greet`, or qualified as `Greeter.greet` or `ns::add`
    pub symbol: Option<String>,
}

impl ReferencesArgs {
    /// Exactly one of a position and a name; `Err` names the field.
    fn query(&self) -> Result<LspQuery, String> {
        let path = file(&self.file_path)?;
        match (self.line, self.character, &self.symbol) {
            (None, None, Some(symbol)) if symbol.trim().is_empty() => {
                Err("`symbol` is empty: give the symbol's name".to_owned())
            }
            (None, None, Some(symbol)) => Ok(LspQuery::ReferencesOf {
                path,
                symbol: symbol.trim().to_owned(),
            }),
            (Some(line), Some(character), None) => Ok(LspQuery::At {
                feature: LspFeature::References,
                path,
                at: position(line, character)?,
            }),
            (None, None, None) => {
                Err("give `line` and `character`, or `symbol` (neither was given)".to_owned())
            }
            (_, _, Some(_)) => Err(
                "give either `symbol` or `line` and `character`, not both: `symbol` names the symbol without a position"
                    .to_owned(),
            ),
            (Some(_), None, None) => Err("`character` is missing (with `line`)".to_owned()),
            (None, Some(_), None) => Err("`line` is missing (with `character`)".to_owned()),
        }
    }
}

/// Finds every reference to a symbol, from the IDE's language server on
/// the IDE's current text (an editor's unsaved edits included): the
/// symbol at `line` and `character`, or the one of the file named `symbol`
/// (`greet`, `Greeter.greet`; a name several symbols share is an error
/// listing them, unless they have the same references). Answers
/// `[{filePath, line, character, endLine, endCharacter, lineText}]`,
/// 1-based, characters as Unicode scalar values.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn find_references(cx: &EditorPorts, #[args] args: ReferencesArgs) -> CallToolResult {
    run(cx, args.query()).await
}

/// Finds where the symbol at a position is defined, from the IDE's
/// language server on the IDE's current text. Answers `[{filePath,
/// line, character, endLine, endCharacter, lineText}]`, 1-based.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn go_to_definition(cx: &EditorPorts, #[args] at: PositionArgs) -> CallToolResult {
    at.ask(cx, LspFeature::Definition).await
}

/// Finds the implementations of the symbol at a position (of an interface,
/// a trait, an abstract method), from the IDE's language server.
/// Answers `[{filePath, line, character, endLine, endCharacter,
/// lineText}]`, 1-based.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn go_to_implementation(cx: &EditorPorts, #[args] at: PositionArgs) -> CallToolResult {
    at.ask(cx, LspFeature::Implementation).await
}

/// The type and documentation of the symbol at a position, from the
/// IDE's language server. Answers `{contents, range?}` (`contents`
/// as text or Markdown; `null` when the server has nothing to say).
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn hover(cx: &EditorPorts, #[args] at: PositionArgs) -> CallToolResult {
    at.ask(cx, LspFeature::Hover).await
}

/// The symbols (functions, classes, variables, …) of a file, as the
/// IDE's language server sees its current text. Answers `[{name,
/// kind, detail?, line, character, endLine, endCharacter, lineText,
/// children?}]`, 1-based.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn document_symbols(
    cx: &EditorPorts,
    #[arg(description = "The file's absolute path or `file://` URI")] file_path: String,
) -> CallToolResult {
    let query = file(&file_path).map(|path| LspQuery::DocumentSymbols { path });
    run(cx, query).await
}

/// Searches the workspace's symbols by name through the IDE's language
/// servers. Answers `[{name, kind, containerName?, filePath,
/// line?, character?, endLine?, endCharacter?, lineText?}]`, 1-based.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn workspace_symbols(
    cx: &EditorPorts,
    #[arg(description = "The name, or part of it, to search for")] query: String,
) -> CallToolResult {
    run(cx, Ok(LspQuery::WorkspaceSymbols { query })).await
}

/// The arguments of `callHierarchy`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallHierarchyArgs {
    /// The file's absolute path or `file://` URI
    pub file_path: String,
    /// The line of the function (its name, or a call of it), 1-based
    pub line: u32,
    /// The character in the line, 1-based (Unicode scalar values)
    pub character: u32,
    /// `incoming`: the functions that call it; `outgoing`: the functions it calls
    #[schemars(schema_with = "direction_schema")]
    pub direction: CallDirection,
}

/// `direction`'s schema: a plain `enum` of strings, which every client
/// takes (the derived one is a `oneOf` of documented constants).
fn direction_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "enum": ["incoming", "outgoing"]})
}

/// The calls into (`incoming`) or out of (`outgoing`) the function at a
/// position, from the IDE's language server on the IDE's current text.
/// Answers `[{name, kind, detail?, filePath, line,
/// character, endLine, endCharacter, lineText, incoming|outgoing: [{name,
/// kind, detail?, filePath, line, …, lineText, callSites: [{filePath,
/// line, character, endLine, endCharacter, lineText}]}]}]`, 1-based: the
/// function, then each caller (or callee) with where the calls are
/// (`[]` when there is no function at the position).
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn call_hierarchy(cx: &EditorPorts, #[args] args: CallHierarchyArgs) -> CallToolResult {
    run(cx, args.query()).await
}

impl CallHierarchyArgs {
    fn query(&self) -> Result<LspQuery, String> {
        Ok(LspQuery::Calls {
            path: file(&self.file_path)?,
            at: position(self.line, self.character)?,
            direction: self.direction,
        })
    }
}

/// The arguments of `renamePreview`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenameArgs {
    /// The file's absolute path or `file://` URI
    pub file_path: String,
    /// The line of the symbol to rename, 1-based
    pub line: u32,
    /// The character in the line, 1-based (Unicode scalar values)
    pub character: u32,
    /// The symbol's new name
    pub new_name: String,
}

/// What renaming the symbol at a position would change, as the IDE's
/// language server computes it on the IDE's current text; nothing is
/// applied. Answers `{changes: [...]}` in order: `{filePath, diff}`, one
/// unified diff per file against its current text (an editor's, else the
/// disk's; `git apply` or `patch -p1` applies it in the
/// workspace folder), and file operations `{operation: "create" |
/// "rename" | "delete", filePath, newFilePath?}`. A symbol the server
/// will not rename is an error saying why.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn rename_preview(cx: &EditorPorts, #[args] args: RenameArgs) -> CallToolResult {
    run(cx, args.query()).await
}

impl RenameArgs {
    fn query(&self) -> Result<LspQuery, String> {
        if self.new_name.trim().is_empty() {
            return Err("`newName` is empty: give the new name".to_owned());
        }
        Ok(LspQuery::Rename {
            path: file(&self.file_path)?,
            at: position(self.line, self.character)?,
            new_name: self.new_name.clone(),
        })
    }
}

/// The arguments of `quickFixes`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuickFixesArgs {
    /// The file's absolute path or `file://` URI
    pub file_path: String,
    /// The line whose diagnostics to fix, 1-based
    pub line: u32,
}

/// The language server's quick fixes for the diagnostics on a line (as the
/// server published them), each with its edit as diffs;
/// nothing is applied. Answers `{diagnostics: [{message, severity, source?,
/// code?, line, character, endLine, endCharacter}], fixes: [{title, kind?,
/// isPreferred?, changes: [{filePath, diff} | {operation, …}], command?,
/// note?, error?}]}`: a fix that runs a command of the server has
/// `command` and a `note` saying that part cannot be previewed; `error`
/// says why its edit could not be shown.
#[ide_mcp_runtime::mcp_tool(read_only)]
pub async fn quick_fixes(cx: &EditorPorts, #[args] args: QuickFixesArgs) -> CallToolResult {
    run(cx, args.query()).await
}

impl QuickFixesArgs {
    fn query(&self) -> Result<LspQuery, String> {
        let path = file(&self.file_path)?;
        position(self.line, 1)?;
        Ok(LspQuery::QuickFixes {
            path,
            line: self.line,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn references(
        line: Option<u32>,
        character: Option<u32>,
        symbol: Option<&str>,
    ) -> Result<LspQuery, String> {
        ReferencesArgs {
            file_path: "/a/b.py".into(),
            line,
            character,
            symbol: symbol.map(str::to_owned),
        }
        .query()
    }

    #[test]
    fn positions_are_one_based() {
        let at = PositionArgs {
            file_path: "/a/b.py".into(),
            line: 3,
            character: 1,
        };
        assert_eq!(
            at.query(LspFeature::Hover),
            Ok(LspQuery::At {
                feature: LspFeature::Hover,
                path: PathBuf::from("/a/b.py"),
                at: CharPosition {
                    line: 3,
                    character: 1
                },
            })
        );
        assert_eq!(
            position(0, 1).unwrap_err(),
            "`line` is 1-based: the first line is 1"
        );
        assert_eq!(
            position(1, 0).unwrap_err(),
            "`character` is 1-based: the first character is 1"
        );
        let error = file("b.py").unwrap_err();
        assert!(error.contains("not an absolute path"), "{error}");
    }

    #[test]
    fn references_take_a_position_or_a_name_and_say_which_field_is_wrong() {
        assert_eq!(
            references(None, None, Some(" Greeter.greet ")),
            Ok(LspQuery::ReferencesOf {
                path: PathBuf::from("/a/b.py"),
                symbol: "Greeter.greet".into()
            })
        );
        assert!(matches!(
            references(Some(2), Some(3), None),
            Ok(LspQuery::At {
                feature: LspFeature::References,
                ..
            })
        ));
        for (line, character, symbol, message) in [
            (
                None,
                None,
                None,
                "give `line` and `character`, or `symbol` (neither was given)",
            ),
            (Some(1), None, None, "`character` is missing (with `line`)"),
            (None, Some(1), None, "`line` is missing (with `character`)"),
            (
                None,
                None,
                Some(""),
                "`symbol` is empty: give the symbol's name",
            ),
        ] {
            assert_eq!(references(line, character, symbol).unwrap_err(), message);
        }
        let both = references(Some(1), Some(1), Some("f")).unwrap_err();
        assert!(both.starts_with("give either `symbol` or `line` and `character`, not both"));
        assert!(references(Some(1), None, Some("f")).is_err());
    }

    #[tokio::test]
    async fn without_servers_the_tools_say_so() {
        let at = PositionArgs {
            file_path: "/a.py".into(),
            line: 1,
            character: 1,
        };
        let result = hover(&EditorPorts::empty(), at).await;
        assert_eq!(result, CallToolResult::error(NO_SERVERS));
    }
}
