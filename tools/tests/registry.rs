//! The IDE tools as the runtime serves them: registered by `#[mcp_tool]`,
//! listed with their schemas, called through their shims.

use std::path::Path;

use ide_mcp_runtime::{Registry, Server, ToolContext};
use ide_mcp_tools::memory::MemoryWorkspace;
use ide_mcp_tools::{BufferId, EditorPorts, LSP_TOOL_NAMES, READ_TOOL_NAMES, TOOL_NAMES};
use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range};
use serde_json::{Value, json};

/// Calls tool `name` through its registered shim, as `tools/call` does.
async fn call(cx: &EditorPorts, name: &str, args: Option<&str>) -> Value {
    let registry = Registry::global().expect("the registry builds");
    let tool = registry
        .get(name)
        .unwrap_or_else(|| panic!("`{name}` is registered"));
    let tcx = ToolContext::new().with(cx.clone());
    let args = args.map(|a| serde_json::value::RawValue::from_string(a.to_owned()).unwrap());
    let bytes = tool.call(&tcx, args.as_deref()).await;
    serde_json::from_slice(&bytes).expect("the result is JSON")
}

/// The text of a successful result, parsed.
async fn call_ok(cx: &EditorPorts, name: &str, args: Option<&str>) -> Value {
    let result = call(cx, name, args).await;
    assert_eq!(result.get("isError"), None, "{name}: {result}");
    let text = result["content"][0]["text"].as_str().expect("text content");
    serde_json::from_str(text).expect("the text is JSON")
}

fn workspace() -> EditorPorts {
    let ws = MemoryWorkspace::new();
    ws.open(
        BufferId(1),
        Some(Path::new("/ws/src/main.rs")),
        "rust",
        "fn main() {\n    foo;\n}\n",
    );
    ws.open(BufferId(2), None, "markdown", "scratch");
    ws.select(BufferId(1), Position::new(1, 4), Position::new(1, 7));
    ws.buffers
        .set_text(BufferId(1), "fn main() {\n    foo;\n}\n\n");
    ws.diagnostics.set(
        Path::new("/ws/src/main.rs"),
        vec![Diagnostic {
            severity: Some(DiagnosticSeverity::ERROR),
            source: Some("rustc".into()),
            code: Some(NumberOrString::String("E0425".into())),
            ..Diagnostic::new_simple(
                Range::new(Position::new(1, 4), Position::new(1, 7)),
                "cannot find value `foo` in this scope".into(),
            )
        }],
    );
    ws.editor_ports().workspace_folder("/ws").build()
}

#[test]
fn exactly_the_ide_tools_are_registered() {
    let registry = Registry::global().expect("the registry builds");
    assert_eq!(registry.names().collect::<Vec<_>>(), TOOL_NAMES);
    for tool in registry.tools() {
        let read_only =
            READ_TOOL_NAMES.contains(&tool.def.name) || LSP_TOOL_NAMES.contains(&tool.def.name);
        assert_eq!(
            tool.def.annotations.read_only_hint,
            read_only.then_some(true),
            "{}",
            tool.def.name
        );
    }
}

#[test]
fn the_server_needs_editor_ports() {
    let err = Server::builder("t", "0").build().unwrap_err().to_string();
    assert!(err.contains("EditorPorts"), "{err}");
    Server::builder("t", "0")
        .state(EditorPorts::empty())
        .build()
        .expect("builds");
}

#[test]
fn tools_list_entries() {
    let list = Registry::global().unwrap().list_result();
    insta::assert_json_snapshot!("tools_list", list["tools"]);
}

#[tokio::test]
async fn every_tool_with_data() {
    let cx = workspace();
    let diagnostics = json!([{"uri": "file:///ws/src/main.rs", "diagnostics": [{
        "message": "cannot find value `foo` in this scope", "severity": "Error",
        "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 7}},
        "source": "rustc", "code": "E0425"}]}]);
    let lib = json!([{"uri": "file:///ws/src/lib.rs", "diagnostics": []}]);
    for (args, expected) in [
        (None, &diagnostics),
        (Some("{}"), &diagnostics),
        (Some(r#"{"uri": "file:///ws/src/main.rs"}"#), &diagnostics),
        (Some(r#"{"uri": "file:///ws/src/lib.rs"}"#), &lib),
    ] {
        assert_eq!(
            call_ok(&cx, "getDiagnostics", args).await,
            *expected,
            "{args:?}"
        );
    }
    assert_eq!(
        call_ok(&cx, "getCurrentSelection", None).await,
        json!({"success": true, "text": "foo", "filePath": "/ws/src/main.rs", "fileUrl": "file:///ws/src/main.rs",
               "selection": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 7}, "isEmpty": false}})
    );
    assert_eq!(
        call_ok(&cx, "getLatestSelection", Some("{}")).await,
        call_ok(&cx, "getCurrentSelection", None).await,
        "the same success object"
    );
    assert_eq!(
        call_ok(&cx, "getOpenEditors", None).await,
        json!({"tabs": [{"uri": "file:///ws/src/main.rs", "isActive": true, "label": "main.rs",
                         "languageId": "rust", "isDirty": true}]})
    );
    assert_eq!(
        call_ok(&cx, "getWorkspaceFolders", None).await,
        json!({"success": true, "folders": [{"name": "ws", "uri": "file:///ws", "path": "/ws"}], "rootPath": "/ws"})
    );
    assert_eq!(
        call_ok(
            &cx,
            "checkDocumentDirty",
            Some(r#"{"filePath": "file:///ws/src/main.rs"}"#)
        )
        .await,
        json!({"success": true, "filePath": "file:///ws/src/main.rs", "isDirty": true, "isUntitled": false})
    );
}

#[tokio::test]
async fn every_tool_without_ports() {
    let cx = EditorPorts::empty();
    assert_eq!(call_ok(&cx, "getDiagnostics", None).await, json!([]));
    assert_eq!(
        call_ok(&cx, "getDiagnostics", Some(r#"{"uri": "/ws/a.rs"}"#)).await,
        json!([{"uri": "/ws/a.rs", "diagnostics": []}])
    );
    assert_eq!(
        call_ok(&cx, "getCurrentSelection", None).await,
        json!({"success": false, "message": "No active editor found"})
    );
    assert_eq!(
        call_ok(&cx, "getLatestSelection", None).await,
        json!({"success": false, "message": "No selection available"})
    );
    assert_eq!(
        call_ok(&cx, "getOpenEditors", None).await,
        json!({"tabs": []})
    );
    assert_eq!(
        call_ok(&cx, "getWorkspaceFolders", None).await,
        json!({"success": true, "folders": [], "rootPath": null})
    );
    assert_eq!(
        call_ok(
            &cx,
            "checkDocumentDirty",
            Some(r#"{"filePath": "/ws/a.rs"}"#)
        )
        .await,
        json!({"success": true, "filePath": "/ws/a.rs", "isDirty": false, "isUntitled": false})
    );
}

#[tokio::test]
async fn check_document_dirty_needs_a_string_file_path() {
    let cx = workspace();
    for args in [
        None,
        Some("{}"),
        Some(r#"{"filePath": 3}"#),
        Some(r#"{"file_path": "/ws/a.rs"}"#),
    ] {
        let result = call(&cx, "checkDocumentDirty", args).await;
        assert_eq!(result["isError"], true, "{args:?}: {result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("`filePath`"), "{args:?}: {text}");
    }
}
