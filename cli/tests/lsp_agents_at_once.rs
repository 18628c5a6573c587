//! Every agent's face of one host at once: a real Neovim (clangd through
//! `ide-mcp lsp-proxy`), and connected to its host together Claude Code's
//! IDE WebSocket (which opencode speaks too), Gemini CLI's IDE companion
//! (Streamable HTTP) and Copilot CLI's IDE connection (HTTP over a Unix
//! socket), each found through its own discovery file, as its CLI finds
//! it. The selection made in Neovim reaches all three, the same; a new one
//! replaces it in all three. Each CLI's own test (`claude_*.rs`,
//! `gemini_cli.rs`, `copilot_cli.rs`, `opencode_cli.rs`) drives the real
//! CLI; this one holds the three protocols side by side.
//!
//! Needs `nvim` and `clangd` (`tests/lsp/install.sh` installs them).

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::claude::Deadline;
use common::lsp::Place;
use common::neovim::Neovim;
use ide_mcp_test_support::http::{Events, Req, post};
use serde_json::{Value, json};

const MAIN_C: &str = "#include <stdio.h>\n\nint add(int a, int b) {\n  return a + b;\n}\n\nint main(void) {\n  int value = add(1, 2);\n  return value;\n}\n";

/// What Gemini CLI and Copilot CLI send first.
const GEMINI_INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gemini-cli-mcp-client","version":"0.61.0"}}}"#;
const COPILOT_INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"copilot-cli","version":"1.0.102"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The whole test.
const TOTAL: Duration = Duration::from_mins(3);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_gemini_and_copilot_see_one_neovim_at_once() {
    if !common::present("nvim", common::installed("nvim"))
        || !common::present("clangd", common::installed("clangd"))
    {
        return;
    }
    let deadline = Deadline(Instant::now() + TOTAL);
    let place = Place::new();
    let main_c = place.workspace.join("main.c");
    std::fs::write(&main_c, MAIN_C).unwrap();
    let nvim = Neovim::start(&place, &place.workspace, "nvim", 0);
    nvim.command(&format!("edit {}", main_c.display()));
    nvim.wait_lua("#vim.lsp.buf_get_clients(0) == 1", deadline.left());
    nvim.select_word("main.c", "3G0w", deadline.left());
    deadline.wait(
        "the three agents' discovery files",
        || {
            place.lockfiles().len() == 1
                && place.gemini_files().len() == 1
                && place.copilot_files().len() == 1
        },
        String::new,
    );

    // Claude Code's face: the lockfile's port and token.
    let (lockfile, content) = place.lockfiles().remove(0);
    let port = common::lockfile_port(&lockfile);
    let token = content["authToken"].as_str().unwrap().to_owned();
    let mut claude = common::ws::connect(port, &token).await;
    // Gemini CLI's face: the discovery file's port and bearer token.
    let discovery: Value = read_json(
        &place
            .tmp()
            .join("gemini/ide")
            .join(&place.gemini_files()[0]),
    );
    let gemini = Gemini::open(&discovery).await;
    // Copilot CLI's face: the lockfile's socket and header.
    let copilot_lock: Value = read_json(
        &place
            .copilot_home()
            .join("ide")
            .join(&place.copilot_files()[0]),
    );
    let copilot = Copilot::open(&copilot_lock).await;
    let mut gemini_events = gemini.events().await;

    // The selection, the same through each.
    let selected = |text: &str| {
        let claude_sees = json!({"text": text, "filePath": main_c});
        (claude_sees, text.to_owned())
    };
    let (expected, text) = selected("add");
    let current = claude.call("getCurrentSelection", json!({})).await;
    assert_eq!(
        json!({"text": current["text"], "filePath": current["filePath"]}),
        expected,
        "{current}"
    );
    assert_eq!(gemini_selection(&mut gemini_events, &main_c).await, text);
    let of_copilot = copilot.selection().await;
    assert_eq!(
        (&of_copilot["text"], &of_copilot["filePath"]),
        (&json!(text), &json!(main_c)),
        "{of_copilot}"
    );
    assert_eq!(of_copilot["selection"], current["selection"]);

    // A new selection replaces it in all three.
    nvim.select_word("main.c", "8G0ww", deadline.left());
    let (expected, text) = selected("value");
    deadline.wait(
        "Copilot's and Claude's faces see the new selection",
        || {
            futures_block(copilot.selection())["text"] == json!(text)
                && futures_block(claude_selection(port, token.clone()))["text"] == json!(text)
        },
        || {
            format!(
                "Copilot's: {}\nClaude's: {}",
                futures_block(copilot.selection()),
                futures_block(claude_selection(port, token.clone()))
            )
        },
    );
    assert_eq!(gemini_selection(&mut gemini_events, &main_c).await, text);
    let current = claude.call("getCurrentSelection", json!({})).await;
    assert_eq!(
        json!({"text": current["text"], "filePath": current["filePath"]}),
        expected
    );
    assert_eq!(copilot.selection().await["selection"], current["selection"]);
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Runs `future` to its end from a synchronous check (on its own runtime
/// thread: the test's runtime is busy waiting in it).
fn futures_block<F: std::future::Future + Send + 'static>(future: F) -> F::Output
where
    F::Output: Send + 'static,
{
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    })
    .join()
    .unwrap()
}

/// `getCurrentSelection` on a connection of its own.
async fn claude_selection(port: u16, token: String) -> Value {
    let mut client = common::ws::connect(port, &token).await;
    client.call("getCurrentSelection", json!({})).await
}

/// The latest `selectedText` of the active file in Gemini's context
/// updates: the updates are read until one names `file` active with a
/// selection (the first is sent when the stream opens, each change after).
async fn gemini_selection(events: &mut Events, file: &Path) -> String {
    loop {
        let update = events.next_json().await;
        let files = &update["params"]["workspaceState"]["openFiles"];
        if let Some(active) = files
            .as_array()
            .and_then(|files| files.iter().find(|f| f["isActive"] == true))
            && active["path"] == json!(file)
            && let Some(text) = active["selectedText"].as_str()
        {
            return text.to_owned();
        }
    }
}

/// A session on Gemini's face.
struct Gemini {
    addr: SocketAddr,
    token: String,
    session: String,
}

impl Gemini {
    async fn open(discovery: &Value) -> Self {
        let port = u16::try_from(discovery["port"].as_u64().unwrap()).unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let token = discovery["authToken"].as_str().unwrap().to_owned();
        let answer = post(&token, GEMINI_INITIALIZE).send(addr).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        let session = answer.header("mcp-session-id").unwrap().to_owned();
        let initialized = post(&token, INITIALIZED)
            .header("Mcp-Session-Id", &session)
            .header("MCP-Protocol-Version", "2025-06-18")
            .send(addr)
            .await;
        assert_eq!(initialized.status, 202);
        Self {
            addr,
            token,
            session,
        }
    }

    /// The session's event stream, where the context updates come.
    async fn events(&self) -> Events {
        let stream = Req::new("GET")
            .header("Authorization", &format!("Bearer {}", self.token))
            .header("Accept", "text/event-stream")
            .header("Mcp-Session-Id", &self.session)
            .header("MCP-Protocol-Version", "2025-06-18");
        let events = Events::open(stream, self.addr).await;
        assert_eq!(events.status, 200);
        events
    }
}

/// A session on Copilot's face.
#[derive(Clone)]
struct Copilot {
    socket: PathBuf,
    auth: String,
    session: String,
}

impl Copilot {
    async fn open(lockfile: &Value) -> Self {
        let socket = PathBuf::from(lockfile["socketPath"].as_str().unwrap());
        let auth = lockfile["headers"]["Authorization"]
            .as_str()
            .unwrap()
            .to_owned();
        let answer = post("", COPILOT_INITIALIZE)
            .set("Authorization", &auth)
            .send_unix(&socket)
            .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        let session = answer.header("mcp-session-id").unwrap().to_owned();
        let initialized = post("", INITIALIZED)
            .set("Authorization", &auth)
            .header("Mcp-Session-Id", &session)
            .send_unix(&socket)
            .await;
        assert_eq!(initialized.status, 202);
        Self {
            socket,
            auth,
            session,
        }
    }

    /// `get_selection`'s answer.
    fn selection(&self) -> impl std::future::Future<Output = Value> + Send + 'static {
        let this = self.clone();
        async move {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "get_selection", "arguments": {}}});
            let answer = post("", body.to_string())
                .set("Authorization", &this.auth)
                .header("Mcp-Session-Id", &this.session)
                .send_unix(&this.socket)
                .await;
            assert_eq!(answer.status, 200, "{}", answer.body);
            let result = answer.json()["result"].clone();
            let text = result["content"][0]["text"]
                .as_str()
                .unwrap_or_else(|| panic!("{result}"));
            serde_json::from_str(text).unwrap()
        }
    }
}
