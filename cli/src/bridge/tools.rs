//! What the bridge lists: the IDE's tools less those the `claude` CLI
//! already has from its own IDE connection; with no IDE yet, those it saw
//! last for the workspace, or the ide-mcp IDE's own.

use std::sync::Arc;

use ide_mcp_runtime::Registry;
use serde::Deserialize;
use serde_json::value::RawValue;

/// Tools the CLI shows the model itself, from its IDE connection
/// (`mcp__ide__getDiagnostics`, …): listed by the bridge too, the model
/// would see each twice (PROTOCOL.md, "What the CLI does with the tools").
pub const SHOWN_BY_THE_CLI: &[&str] = &["getDiagnostics", "executeCode"];

/// Tools the CLI calls on its own, for itself (diff review, opening a
/// file): not for the model, which would open diffs no one asked for.
pub const CALLED_BY_THE_CLI: &[&str] = &["openDiff", "close_tab", "closeAllDiffTabs", "openFile"];

/// The tools the bridge lists before it has seen an IDE for the workspace,
/// as the README documents them: an ide-mcp IDE's (lsp-proxy's host, with
/// the live LSP tools) less those [`left_out`]; [`first_time_names`]
/// (`false`) as the binary's tools give it.
pub const FIRST_TIME_NAMES: &[&str] = &[
    "callHierarchy",
    "checkDocumentDirty",
    "documentSymbols",
    "findReferences",
    "getCurrentSelection",
    "getLatestSelection",
    "getOpenEditors",
    "getWorkspaceFolders",
    "goToDefinition",
    "goToImplementation",
    "hover",
    "quickFixes",
    "renamePreview",
    "workspaceSymbols",
];

/// Whether the bridge leaves `name` out of its list (without `--all`).
pub fn left_out(name: &str) -> bool {
    SHOWN_BY_THE_CLI.contains(&name) || CALLED_BY_THE_CLI.contains(&name)
}

/// The entries of a `tools/list` result, each kept as the IDE wrote it;
/// `None` when it is not one.
pub fn entries(result: &str) -> Option<Vec<Box<RawValue>>> {
    #[derive(Deserialize)]
    struct List {
        tools: Vec<Box<RawValue>>,
    }
    let list: List = serde_json::from_str(result).ok()?;
    list.tools
        .iter()
        .all(|entry| name(entry).is_some())
        .then_some(list.tools)
}

/// A tool entry's `name`.
fn name(entry: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    struct Named {
        name: String,
    }
    serde_json::from_str::<Named>(entry.get())
        .ok()
        .map(|named| named.name)
}

/// The `tools/list` result the bridge serves from the IDE's `entries`:
/// all of them with `all`, else those not [`left_out`]; each entry's bytes
/// as the IDE wrote them.
pub fn served(entries: &[Box<RawValue>], all: bool) -> Arc<[u8]> {
    let mut out = br#"{"tools":["#.to_vec();
    let kept = entries
        .iter()
        .filter(|entry| all || name(entry).is_none_or(|name| !left_out(&name)));
    for (i, entry) in kept.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(entry.get().as_bytes());
    }
    out.extend_from_slice(b"]}");
    out.into()
}

/// The tools of ide-mcp's own IDE hosts, as this binary registers them
/// (`ide_mcp_tools::TOOL_NAMES`): what the bridge lists before it has ever
/// seen an IDE for the workspace (less those [`left_out`], without `--all`).
pub fn first_time() -> Vec<Box<RawValue>> {
    let tools = ide_mcp_runtime::tools()
        .iter()
        .filter(|tool| tool.face.is_none() && ide_mcp_tools::TOOL_NAMES.contains(&tool.name));
    let registry = Registry::from_tools(tools).expect("the IDE tools form a valid registry");
    let list = std::str::from_utf8(registry.list_result_bytes()).expect("JSON is UTF-8");
    entries(list).expect("the registry's list is a tool list")
}

/// The names [`first_time`] serves.
pub fn first_time_names(all: bool) -> Vec<&'static str> {
    ide_mcp_tools::TOOL_NAMES
        .iter()
        .copied()
        .filter(|name| all || !left_out(name))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn names(list: &[u8]) -> Vec<String> {
        crate::test_util::tool_names(&serde_json::from_slice(list).unwrap())
    }

    #[test]
    fn the_cli_s_own_tools_are_left_out_unless_all() {
        let list = json!({"tools": [
            {"name": "getDiagnostics"}, {"name": "executeCode"}, {"name": "openDiff"},
            {"name": "close_tab"}, {"name": "closeAllDiffTabs"}, {"name": "openFile"},
            {"name": "getOpenEditors", "description": "x"}, {"name": "findReferences"},
        ]});
        let entries = entries(&list.to_string()).unwrap();
        assert_eq!(
            names(&served(&entries, false)),
            ["getOpenEditors", "findReferences"]
        );
        assert_eq!(names(&served(&entries, true)).len(), 8);
        assert_eq!(&*served(&[], false), br#"{"tools":[]}"#);
    }

    #[test]
    fn entries_are_kept_byte_for_byte() {
        let list = r#"{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"n":{"type":"number","default":1.50}}}}],"nextCursor":null}"#;
        let entries = entries(list).unwrap();
        assert_eq!(
            &*served(&entries, false),
            br#"{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"n":{"type":"number","default":1.50}}}}]}"#
        );
        assert!(super::entries(r#"{"tools":[{"title":"no name"}]}"#).is_none());
        assert!(super::entries("[]").is_none());
    }

    #[test]
    fn the_first_time_set_is_the_ide_tools_less_the_cli_s() {
        // The binary's tools: linked here through the crate.
        use ide_mcp_tools as _;
        let served = served(&first_time(), false);
        assert_eq!(names(&served), first_time_names(false));
        assert_eq!(first_time_names(false), FIRST_TIME_NAMES);
        assert_eq!(first_time_names(true), ide_mcp_tools::TOOL_NAMES);
        // As the README documents them.
        let documented = first_time_names(false)
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let readme = include_str!("../../../README.md");
        assert!(
            readme.contains(&format!("\n  {documented}.\n")),
            "{documented}"
        );
        for name in SHOWN_BY_THE_CLI.iter().chain(CALLED_BY_THE_CLI) {
            assert!(readme.contains(&format!("`{name}`")), "{name}");
        }
        assert_eq!(
            names(&super::served(&first_time(), true)),
            first_time_names(true)
        );
    }
}
