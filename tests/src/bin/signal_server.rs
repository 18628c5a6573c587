//! The server the process tests of `tests/faults.rs` start as a child: the
//! five read tools over an empty workspace plus `hang` and `slow`, on the IDE
//! WebSocket with its lockfile in the configuration directory given as the
//! only argument, until SIGINT or SIGTERM (or SIGKILL).
//!
//! A binary rather than a test function that re-runs the test executable:
//! such a function returns at once without its environment and counts as a
//! passing test.

use std::path::PathBuf;
use std::process::ExitCode;

use ide_mcp_runtime::{Server, WsOptions};
use ide_mcp_tools::EditorPorts;

ide_mcp_runtime::link!(ide_mcp_tools);

#[path = "../slow_tools.rs"]
mod slow_tools;

#[tokio::main]
async fn main() -> ExitCode {
    let Some(config_dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: signal_server CONFIG_DIR");
        return ExitCode::from(2);
    };
    let server = Server::builder("signal-server", "0")
        .state(EditorPorts::empty())
        .build()
        .expect("the tools' states are given");
    let options = WsOptions {
        config_dir: Some(config_dir),
        workspace_folders: vec!["/ws".to_owned()],
        ..WsOptions::default()
    };
    // Installed before the lockfile appears: the tests signal as soon as
    // they see it.
    let signal = ide_mcp_runtime::shutdown_signal();
    let handle = server.serve_ws(options).await.expect("serving");
    match handle.shutdown_after(signal).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("signal_server: {err}");
            ExitCode::FAILURE
        }
    }
}
