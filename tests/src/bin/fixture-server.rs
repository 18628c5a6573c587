//! The server the interop tests drive with the official SDK clients: the
//! read tools over an empty editor in one workspace folder, the downstream
//! tools of `tests/fixture-tools`, which reach the registry by annotation
//! alone, and the tools, resources and prompts the official conformance
//! suite asks for by name.
//!
//! ```text
//! fixture-server stdio WORKSPACE   # MCP on stdin/stdout
//! fixture-server http WORKSPACE    # Streamable HTTP; prints "URL TOKEN" on stdout
//! ```

use std::io::Write as _;

use fixture_tools::FixtureState;
use ide_mcp_runtime::{
    HttpOptions, Progress, PromptMessage, ResourceContents, Server, mcp_prompt, mcp_resource,
    mcp_tool,
};
use ide_mcp_tools::EditorPorts;

ide_mcp_runtime::link!(fixture_tools, ide_mcp_tools);

/// Returns a fixed text (the conformance suite's `tools-call-simple-text`).
#[mcp_tool(name = "test_simple_text", read_only)]
fn simple_text() -> String {
    "This is a simple text response for testing.".to_owned()
}

/// Always fails with a tool error (the conformance suite's `tools-call-error`).
#[mcp_tool(name = "test_error_handling", read_only)]
fn error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".to_owned())
}

/// Reports progress 0, 50 and 100 (of 100), then answers (the conformance
/// suite's `tools-call-with-progress`, and the interop's progress check).
#[mcp_tool(name = "test_tool_with_progress", read_only)]
async fn with_progress(progress: Progress) -> String {
    for step in [0.0, 50.0, 100.0] {
        progress.report(step, Some(100.0), Some("working"));
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    "done".to_owned()
}

/// A fixed text (the conformance suite's `resources-read-text`).
#[mcp_resource(uri = "test://static-text", mime_type = "text/plain")]
fn static_text() -> String {
    "This is the content of the static text resource.".to_owned()
}

/// A fixed blob, a 1x1 PNG (the conformance suite's `resources-read-binary`).
#[mcp_resource(uri = "test://static-binary", mime_type = "image/png")]
fn static_binary() -> Vec<u8> {
    const PNG: [u8; 67] = [
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
        0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00,
        0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49,
        0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    PNG.to_vec()
}

/// Data for one ID (the conformance suite's `resources-templates-read`).
#[mcp_resource(uri = "test://template/{id}/data", mime_type = "application/json")]
fn template_data(id: String) -> String {
    format!(r#"{{"id":"{id}","templateTest":true,"data":"Data for ID: {id}"}}"#)
}

/// A prompt without arguments (the conformance suite's `prompts-get-simple`).
#[mcp_prompt(name = "test_simple_prompt")]
fn simple_prompt() -> String {
    "This is a simple prompt for testing.".to_owned()
}

/// A prompt with two arguments (the conformance suite's `prompts-get-with-args`).
#[mcp_prompt(name = "test_prompt_with_arguments")]
fn prompt_with_arguments(
    #[arg(description = "First test argument")] arg1: String,
    #[arg(description = "Second test argument")] arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// A prompt that embeds a resource (the conformance suite's
/// `prompts-get-embedded-resource`).
#[mcp_prompt(name = "test_prompt_with_embedded_resource")]
fn prompt_with_embedded_resource(
    #[arg(rename = "resourceUri", description = "URI of the resource to embed")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::resource(
            ResourceContents::text("Embedded resource content for testing.")
                .with_uri(resource_uri)
                .with_mime_type("text/plain"),
        ),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(mode), Some(workspace)) = (args.next(), args.next()) else {
        return Err("usage: fixture-server stdio|http WORKSPACE".into());
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let server = Server::builder("fixture-server", env!("CARGO_PKG_VERSION"))
            .state(EditorPorts::builder().workspace_folder(workspace).build())
            .state(FixtureState {
                greeting: "Hello".to_owned(),
            })
            .build()?;
        match mode.as_str() {
            "stdio" => server.serve_stdio().await?,
            "http" => {
                let handle = server.serve_http(HttpOptions::default()).await?;
                let mut stdout = std::io::stdout();
                writeln!(stdout, "{} {}", handle.url(), handle.auth_token())?;
                stdout.flush()?;
                tokio::signal::ctrl_c().await?;
                handle.shutdown().await;
            }
            other => return Err(format!("unknown mode `{other}`: stdio or http").into()),
        }
        Ok(())
    })
}
