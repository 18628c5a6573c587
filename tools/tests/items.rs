//! The editor's resources and the `fix_diagnostics` prompt as a client sees
//! them: open documents with their unsaved text, `ide://diagnostics`, and
//! the prompt with the diagnostics embedded; empty, never an error, when a
//! port is missing.

use std::path::Path;

use ide_mcp_runtime::{MemoryClient, Server};
use ide_mcp_tools::BufferId;
use ide_mcp_tools::EditorPorts;
use ide_mcp_tools::memory::MemoryWorkspace;
use lsp_types::{Diagnostic, DiagnosticSeverity, Position, Range};
use serde_json::{Value, json};

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn workspace() -> EditorPorts {
    let ws = MemoryWorkspace::new();
    ws.open(
        BufferId(1),
        Some(Path::new("/ws/src/main.rs")),
        "rust",
        "fn main() {}\n",
    );
    ws.open(
        BufferId(2),
        Some(Path::new("/ws/notes café.md")),
        "markdown",
        "# notes\n",
    );
    ws.open(BufferId(3), None, "markdown", "scratch");
    ws.buffers.set_text(BufferId(1), "fn main() { foo; }\n");
    let diagnostic = |line, severity, message: &str| Diagnostic {
        severity: Some(severity),
        source: Some("rustc".into()),
        ..Diagnostic::new_simple(
            Range::new(Position::new(line, 12), Position::new(line, 15)),
            message.into(),
        )
    };
    ws.diagnostics.set(
        Path::new("/ws/src/main.rs"),
        vec![
            diagnostic(
                0,
                DiagnosticSeverity::ERROR,
                "cannot find value `foo`\nin this scope",
            ),
            diagnostic(0, DiagnosticSeverity::WARNING, "unused"),
        ],
    );
    ws.editor_ports().workspace_folder("/ws").build()
}

async fn client(cx: EditorPorts) -> MemoryClient {
    let server = Server::builder("t", "1").state(cx).build().unwrap();
    let mut client = server.connect_memory();
    client.request(INIT).await;
    client
}

async fn result(client: &mut MemoryClient, method: &str, params: Value) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let answer: Value = serde_json::from_str(&client.request(request.to_string()).await).unwrap();
    answer
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("{method}: {answer}"))
}

#[tokio::test]
async fn open_documents_are_listed_and_read_with_their_unsaved_text() {
    let mut client = client(workspace()).await;
    let list = result(&mut client, "resources/list", json!({})).await;
    assert_eq!(
        list,
        json!({"resources": [
            {"uri": "ide://diagnostics", "name": "diagnostics", "title": "Diagnostics",
             "description": "Every diagnostic the editor knows now, by file, as `getDiagnostics`\nanswers it: `[{\"uri\", \"diagnostics\": […]}, …]`.",
             "mimeType": "application/json"},
            {"uri": "file:///ws/src/main.rs", "name": "main.rs",
             "description": "/ws/src/main.rs open in the editor (rust), with unsaved changes",
             "mimeType": "text/plain"},
            {"uri": "file:///ws/notes%20caf%C3%A9.md", "name": "notes café.md",
             "description": "/ws/notes café.md open in the editor (markdown), saved",
             "mimeType": "text/plain"},
        ]})
    );
    let templates = result(&mut client, "resources/templates/list", json!({})).await;
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "file:///{path}"
    );
    assert_eq!(templates["resourceTemplates"][0]["name"], "document");

    let read = result(
        &mut client,
        "resources/read",
        json!({"uri": "file:///ws/src/main.rs"}),
    )
    .await;
    assert_eq!(
        read,
        json!({"contents": [{"uri": "file:///ws/src/main.rs", "mimeType": "text/plain", "text": "fn main() { foo; }\n"}]})
    );
    // As listed, percent-encoded.
    let read = result(
        &mut client,
        "resources/read",
        json!({"uri": "file:///ws/notes%20caf%C3%A9.md"}),
    )
    .await;
    assert_eq!(read["contents"][0]["text"], "# notes\n");

    // A file that is not open is not a resource.
    let request = json!({"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {"uri": "file:///ws/other.rs"}});
    assert_eq!(
        client.request(request.to_string()).await,
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32002,"message":"resource not found: `file:///ws/other.rs`"}}"#
    );
}

#[tokio::test]
async fn diagnostics_resource_is_the_get_diagnostics_answer() {
    let mut client = client(workspace()).await;
    let read = result(
        &mut client,
        "resources/read",
        json!({"uri": "ide://diagnostics"}),
    )
    .await;
    let text = read["contents"][0]["text"].as_str().unwrap();
    let diagnostics: Value = serde_json::from_str(text).unwrap();
    assert_eq!(diagnostics[0]["uri"], "file:///ws/src/main.rs");
    assert_eq!(diagnostics[0]["diagnostics"][0]["severity"], "Error");
    assert_eq!(diagnostics[0]["diagnostics"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn fix_diagnostics_embeds_the_errors_and_warnings_when_asked() {
    let mut client = client(workspace()).await;
    let list = result(&mut client, "prompts/list", json!({})).await;
    assert_eq!(
        list,
        json!({"prompts": [{
            "name": "fix_diagnostics",
            "title": "Fix the errors in the open files",
            "description": "Fixes the errors the editor reports in the open files, with the current\ndiagnostics embedded in the prompt.",
            "arguments": [
                {"name": "file", "description": "Only this file (an absolute path or a `file://` URI)", "required": false},
                {"name": "warnings", "description": "Also fix warnings (`yes`), not only errors", "required": false},
            ],
        }]})
    );
    let got = result(
        &mut client,
        "prompts/get",
        json!({"name": "fix_diagnostics"}),
    )
    .await;
    assert_eq!(got["description"], "Fix the errors in the open files");
    assert_eq!(
        got["messages"][0],
        json!({"role": "user", "content": {"type": "text", "text":
            "Fix the errors the editor reports in the open files. Read each file before you edit it, fix the cause rather than the symptom, and keep unrelated code as it is.\n\n/ws/src/main.rs:1:13: Error: cannot find value `foo` in this scope (rustc)\n"}})
    );
    assert_eq!(got["messages"][1]["content"]["type"], "resource");
    assert_eq!(
        got["messages"][1]["content"]["resource"]["uri"],
        "ide://diagnostics"
    );

    let got = result(
        &mut client,
        "prompts/get",
        json!({"name": "fix_diagnostics", "arguments": {"file": "file:///ws/src/main.rs", "warnings": "yes"}}),
    )
    .await;
    let text = got["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "Fix the errors and warnings the editor reports in `file:///ws/src/main.rs`."
        ),
        "{text}"
    );
    assert!(
        text.ends_with("/ws/src/main.rs:1:13: Warning: unused (rustc)\n"),
        "{text}"
    );

    let got = result(
        &mut client,
        "prompts/get",
        json!({"name": "fix_diagnostics", "arguments": {"file": "/ws/notes café.md"}}),
    )
    .await;
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "The editor reports no errors in `/ws/notes café.md` right now. Check that the code builds, and fix what does not."
    );
}

#[tokio::test]
async fn without_ports_everything_is_empty_never_an_error() {
    let mut client = client(EditorPorts::empty()).await;
    let list = result(&mut client, "resources/list", json!({})).await;
    assert_eq!(list["resources"].as_array().unwrap().len(), 1, "{list}");
    let read = result(
        &mut client,
        "resources/read",
        json!({"uri": "ide://diagnostics"}),
    )
    .await;
    assert_eq!(read["contents"][0]["text"], "[]");
    let got = result(
        &mut client,
        "prompts/get",
        json!({"name": "fix_diagnostics"}),
    )
    .await;
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "The editor reports no errors in the open files right now. Check that the code builds, and fix what does not."
    );
}
