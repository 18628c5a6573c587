//! The server the interop tests drive with the official SDK clients: the
//! read tools over an empty editor in one workspace folder, the downstream
//! tools of `tests/fixture-tools`, which reach the registry by annotation
//! alone, and the tools the official conformance suite calls by name.
//!
//! ```text
//! fixture-server stdio WORKSPACE   # MCP on stdin/stdout
//! fixture-server http WORKSPACE    # Streamable HTTP; prints "URL TOKEN" on stdout
//! ```

use std::io::Write as _;

use fixture_tools::FixtureState;
use ide_mcp_runtime::{HttpOptions, Progress, Server, mcp_tool};
use ide_mcp_tools::ReadContext;

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
            .state(ReadContext::builder().workspace_folder(workspace).build())
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
