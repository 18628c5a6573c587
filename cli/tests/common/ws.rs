//! The IDE WebSocket client of the CLI's tests: the shared `McpClient` of
//! `ide-mcp-test-support`, connected and initialized as the CLI does.

pub(crate) use ide_mcp_test_support::McpClient as WsClient;
#[allow(unused_imports, reason = "each test binary uses a part of it")]
pub(crate) use ide_mcp_test_support::upgrade_request as ws_request;

use super::{ANSWER, initialize_params};

/// Connects with `token` and runs the MCP handshake.
pub(crate) async fn connect(port: u16, token: &str) -> WsClient {
    let mut client = WsClient::new(ide_mcp_test_support::connect(port, token).await);
    client.answer_within = ANSWER;
    client.request("initialize", initialize_params()).await;
    client.notify("notifications/initialized").await;
    client
}
