//! The user's deny rules as a client of the tools sees them: with
//! `.claude/settings.json` denying `Read(./.env)`, `Read(./secrets/**)`
//! and `Edit(./locked.c)`, nothing of `.env` or `secrets/` leaves through
//! any tool, resource, prompt or notification; only answers that echo the
//! caller's own path name it; `openDiff` of a denied file is refused
//! before the editor is asked.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ide_mcp_runtime::{MemoryClient, Notifier, Server};
use ide_mcp_tools::deny::{DenyRules, RuleSet, SettingsRoots};
use ide_mcp_tools::memory::MemoryWorkspace;
use ide_mcp_tools::{
    BufferId, DiffFuture, DiffOutcome, DiffReview, EditorPorts, FileOpener, LanguageServers,
    LspFuture, LspQuery, OpenDiffRequest, OpenFileFuture, OpenFileRequest, SelectionPublisher,
};
use lsp_types::{Diagnostic, Position, Range};
use serde_json::{Value, json};

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

const RULES: &[&str] = &["Read(./.env)", "Read(./secrets/**)", "Edit(./locked.c)"];

/// A workspace folder in a temporary directory, its settings roots beside it.
struct Folder {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
}

impl Folder {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        Self {
            _tmp: tmp,
            root,
            ws,
        }
    }

    fn roots(&self) -> SettingsRoots {
        SettingsRoots {
            home: Some(self.root.join("home")),
            config_dir: Some(self.root.join("home/.claude")),
            managed_dir: self.root.join("managed"),
        }
    }

    fn settings(&self) -> PathBuf {
        self.ws.join(".claude/settings.json")
    }

    fn write_rules(&self) {
        std::fs::create_dir_all(self.ws.join(".claude")).unwrap();
        let json = json!({"permissions": {"deny": RULES}});
        std::fs::write(self.settings(), json.to_string()).unwrap();
    }

    fn path(&self, relative: &str) -> String {
        self.ws.join(relative).to_str().unwrap().to_owned()
    }

    fn uri(&self, relative: &str) -> String {
        format!("file://{}", self.path(relative))
    }
}

/// `main.c`, `.env` (with unsaved changes and the selection),
/// `secrets/key.txt` and `locked.c` open, each with a diagnostic.
fn editor(folder: &Folder) -> MemoryWorkspace {
    let ws = MemoryWorkspace::new();
    for (id, name, text) in [
        (1, "main.c", "int main(void) { return 0; }\n"),
        (2, ".env", "API_KEY=s3cret\n"),
        (3, "secrets/key.txt", "hunter2\n"),
        (4, "locked.c", "int locked;\n"),
    ] {
        let path = folder.ws.join(name);
        ws.open(BufferId(id), Some(&path), "c", text);
        let diagnostic = Diagnostic::new_simple(
            Range::new(Position::new(0, 0), Position::new(0, 3)),
            format!("in {name}"),
        );
        ws.diagnostics.set(path.as_path(), vec![diagnostic]);
    }
    ws.buffers.set_text(BufferId(2), "API_KEY=s3cret2\n");
    ws.select(BufferId(2), Position::new(0, 8), Position::new(0, 15));
    ws
}

/// A review that counts the requests it was asked, and rejects each.
#[derive(Default)]
struct CountingReview(AtomicUsize);

impl DiffReview for CountingReview {
    fn open_diff(&self, _: OpenDiffRequest) -> DiffFuture {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(DiffOutcome::Rejected) })
    }

    fn close_tab(&self, _: &str) -> bool {
        false
    }

    fn close_all(&self) -> usize {
        0
    }
}

/// An opener that opens nothing and says so.
struct Opener;

impl FileOpener for Opener {
    fn open_file(&self, _: OpenFileRequest) -> OpenFileFuture {
        Box::pin(async { Ok(()) })
    }
}

/// Servers that answer every question with locations in `main.c`,
/// `.env` and `secrets/key.txt`, and remember the rules they were given.
struct Servers {
    answer: Value,
    hidden: Mutex<Option<Arc<RuleSet>>>,
}

impl LanguageServers for Servers {
    fn ask(&self, _: LspQuery, hidden: Arc<RuleSet>) -> LspFuture {
        *self.hidden.lock().unwrap() = Some(hidden);
        let answer = self.answer.clone();
        Box::pin(async move { Ok(answer) })
    }
}

struct Setup {
    folder: Folder,
    ws: MemoryWorkspace,
    review: Arc<CountingReview>,
    servers: Arc<Servers>,
    cx: EditorPorts,
}

fn setup_with(folder: Folder, rules: Arc<DenyRules>) -> Setup {
    let ws = editor(&folder);
    let review = Arc::new(CountingReview::default());
    let location = |name: &str| json!({"filePath": folder.path(name), "line": 1, "character": 1, "lineText": "x"});
    let servers = Arc::new(Servers {
        answer: json!([location("main.c"), location(".env"), {"name": "f", "filePath": folder.path("main.c"),
            "incoming": [location("secrets/key.txt"), location("main.c")]}]),
        hidden: Mutex::default(),
    });
    let cx = ws
        .editor_ports()
        .review(review.clone())
        .opener(Arc::new(Opener))
        .servers(servers.clone())
        .workspace_folder(&folder.ws)
        .deny_rules(rules)
        .build();
    Setup {
        folder,
        ws,
        review,
        servers,
        cx,
    }
}

/// The folder with its rules written, read once.
fn setup() -> Setup {
    let folder = Folder::new();
    folder.write_rules();
    let rules = DenyRules::load(folder.roots(), vec![folder.ws.clone()]);
    setup_with(folder, rules)
}

async fn client(cx: &EditorPorts) -> MemoryClient {
    let server = Server::builder("t", "1").state(cx.clone()).build().unwrap();
    let mut client = server.connect_memory();
    client.request(INIT).await;
    client
}

/// The whole answer to `method` with `params`.
async fn answer(client: &mut MemoryClient, method: &str, params: Value) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    serde_json::from_str(&client.request(request.to_string()).await).unwrap()
}

/// The result of tool `name` with `arguments`.
async fn call(client: &mut MemoryClient, name: &str, arguments: Value) -> Value {
    let params = json!({"name": name, "arguments": arguments});
    answer(client, "tools/call", params).await["result"].clone()
}

/// The JSON of the first text of tool `name`'s result.
async fn call_json(client: &mut MemoryClient, name: &str, arguments: Value) -> Value {
    let result = call(client, name, arguments).await;
    assert_eq!(result.get("isError"), None, "{name}: {result}");
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

fn error(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

#[tokio::test]
async fn the_selection_in_a_hidden_file_is_no_selection() {
    let s = setup();
    let mut client = client(&s.cx).await;
    assert_eq!(
        call_json(&mut client, "getCurrentSelection", json!({})).await,
        json!({"success": false, "message": "No active editor found"})
    );
    assert_eq!(
        call_json(&mut client, "getLatestSelection", json!({})).await,
        json!({"success": false, "message": "No selection available"})
    );
    s.ws.select(BufferId(1), Position::new(0, 4), Position::new(0, 8));
    assert_eq!(
        call_json(&mut client, "getCurrentSelection", json!({})).await,
        json!({"success": true, "text": "main", "filePath": s.folder.path("main.c"),
               "fileUrl": s.folder.uri("main.c"),
               "selection": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 8}, "isEmpty": false}})
    );
}

#[tokio::test]
async fn open_editors_and_diagnostics_leave_hidden_files_out() {
    let s = setup();
    let mut client = client(&s.cx).await;
    let tab = |name: &str| json!({"uri": s.folder.uri(name), "isActive": false, "label": Path::new(name).file_name().unwrap().to_str().unwrap(), "languageId": "c", "isDirty": false});
    assert_eq!(
        call_json(&mut client, "getOpenEditors", json!({})).await,
        json!({"tabs": [tab("main.c"), tab("locked.c")]})
    );
    let file = |name: &str| json!({"uri": s.folder.uri(name), "diagnostics": [{"message": format!("in {name}"), "severity": "Error", "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}}}]});
    let mut all = call_json(&mut client, "getDiagnostics", json!({})).await;
    all.as_array_mut()
        .unwrap()
        .sort_by_key(|f| f["uri"].as_str().unwrap().to_owned());
    assert_eq!(all, json!([file("locked.c"), file("main.c")]));
    // The caller's own path is echoed; the diagnostics are none.
    for asked in [s.folder.uri(".env"), s.folder.path("secrets/key.txt")] {
        assert_eq!(
            call_json(&mut client, "getDiagnostics", json!({"uri": asked})).await,
            json!([{"uri": asked, "diagnostics": []}])
        );
    }
    assert_eq!(
        call_json(
            &mut client,
            "getDiagnostics",
            json!({"uri": s.folder.uri("main.c")})
        )
        .await,
        json!([file("main.c")])
    );
    // `.env` has unsaved changes: answered as a file that is not open.
    assert_eq!(
        call_json(
            &mut client,
            "checkDocumentDirty",
            json!({"filePath": s.folder.path(".env")})
        )
        .await,
        json!({"success": true, "filePath": s.folder.path(".env"), "isDirty": false, "isUntitled": false})
    );
}

#[tokio::test]
async fn resources_and_the_prompt_carry_nothing_of_hidden_files() {
    let s = setup();
    let mut client = client(&s.cx).await;
    let list = answer(&mut client, "resources/list", json!({})).await;
    let uris: Vec<&str> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    let encoded = |name: &str| ide_mcp_tools::uri::encoded_file_uri(&s.folder.ws.join(name));
    assert_eq!(
        uris,
        [
            "ide://diagnostics",
            &encoded("main.c"),
            &encoded("locked.c")
        ]
    );
    for uri in [
        encoded(".env"),
        s.folder.uri(".env"),
        encoded("secrets/key.txt"),
    ] {
        assert_eq!(
            answer(&mut client, "resources/read", json!({"uri": uri})).await,
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32002, "message": format!("resource not found: `{uri}`")}})
        );
    }
    let read = answer(
        &mut client,
        "resources/read",
        json!({"uri": "ide://diagnostics"}),
    )
    .await;
    let text = read["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(
        !text.contains(".env") && !text.contains("secrets"),
        "{text}"
    );
    assert!(text.contains("main.c"), "{text}");

    let got = answer(
        &mut client,
        "prompts/get",
        json!({"name": "fix_diagnostics"}),
    )
    .await;
    let prompt = got["result"].to_string();
    assert!(
        !prompt.contains(".env") && !prompt.contains("secrets"),
        "{prompt}"
    );
    assert!(prompt.contains("main.c:1:1: Error: in main.c"), "{prompt}");
}

#[tokio::test]
async fn open_diff_of_a_denied_file_is_refused_before_the_editor_is_asked() {
    let s = setup();
    let mut client = client(&s.cx).await;
    let settings = s.folder.settings();
    let diff = |path: &str| json!({"old_file_path": path, "new_file_path": path, "new_file_contents": "x\n", "tab_name": "t"});
    for (path, rule) in [
        (s.folder.path(".env"), "Read(./.env)"),
        (s.folder.uri("secrets/key.txt"), "Read(./secrets/**)"),
        (s.folder.path("locked.c"), "Edit(./locked.c)"),
    ] {
        assert_eq!(
            call(&mut client, "openDiff", diff(&path)).await,
            error(&format!(
                "openDiff refused: {path} is denied by the user's deny rule `{rule}` in {}",
                settings.display()
            ))
        );
    }
    assert_eq!(s.review.0.load(Ordering::SeqCst), 0);
    let answered = call(&mut client, "openDiff", diff(&s.folder.path("main.c"))).await;
    assert_eq!(answered["content"][0]["text"], "DIFF_REJECTED");
    assert_eq!(s.review.0.load(Ordering::SeqCst), 1);

    assert_eq!(
        call(
            &mut client,
            "openFile",
            json!({"filePath": s.folder.path(".env")})
        )
        .await,
        error(&format!(
            "openFile refused: {} is denied by the user's deny rule `Read(./.env)` in {}",
            s.folder.path(".env"),
            settings.display()
        ))
    );
}

#[tokio::test]
async fn live_lsp_answers_leave_hidden_files_out_and_say_how_many() {
    let s = setup();
    let mut client = client(&s.cx).await;
    let at = |path: String| json!({"filePath": path, "line": 1, "character": 1});
    let location = |name: &str| json!({"filePath": s.folder.path(name), "line": 1, "character": 1, "lineText": "x"});
    let result = call(&mut client, "findReferences", at(s.folder.path("main.c"))).await;
    let first: Value =
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        first,
        json!([location("main.c"), {"name": "f", "filePath": s.folder.path("main.c"), "incoming": [location("main.c")]}])
    );
    assert_eq!(
        result["content"][1],
        json!({"type": "text", "text": "2 results in files the user's deny rules hide were left out"})
    );
    let given = s.servers.hidden.lock().unwrap().take().unwrap();
    assert!(given.hides(&s.folder.ws.join(".env")));

    // A question about a hidden file is not asked.
    assert_eq!(
        call(&mut client, "hover", at(s.folder.path("secrets/key.txt"))).await,
        error(&format!(
            "not asked: {} is denied by the user's deny rule `Read(./secrets/**)` in {}",
            s.folder.path("secrets/key.txt"),
            s.folder.settings().display()
        ))
    );
    assert!(s.servers.hidden.lock().unwrap().is_none());
}

/// The methods of what `client` received until now.
fn received(
    client: &mut tokio::sync::mpsc::Receiver<ide_mcp_runtime::notify::NotificationBytes>,
) -> Vec<Value> {
    std::iter::from_fn(|| client.try_recv().ok())
        .map(|bytes| serde_json::from_slice(&bytes).unwrap())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn no_notification_names_a_hidden_file() {
    let s = setup();
    let notifier = Notifier::new();
    let mut client = notifier.subscribe();
    let publisher = SelectionPublisher::spawn(notifier.clone(), s.cx.clone());
    // The selection in `.env`: nothing sent, nothing kept for later clients.
    publisher.selection_changed();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(received(&mut client), Vec::<Value>::new());
    assert!(notifier.latest().is_empty());
    assert_eq!(
        publisher.at_mentioned(&s.folder.ws.join(".env"), Some(0), Some(1)),
        0
    );
    assert_eq!(
        publisher.at_mentioned(&s.folder.ws.join("secrets/key.txt"), None, None),
        0
    );
    assert_eq!(received(&mut client), Vec::<Value>::new());

    // In `main.c`: sent.
    s.ws.select(BufferId(1), Position::new(0, 0), Position::new(0, 3));
    publisher.selection_changed();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let sent = received(&mut client);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["method"], "selection_changed");
    assert_eq!(sent[0]["params"]["text"], "int");
    assert_eq!(
        publisher.at_mentioned(&s.folder.ws.join("main.c"), Some(0), Some(0)),
        1
    );
    assert_eq!(
        received(&mut client)[0],
        json!({"jsonrpc": "2.0", "method": "at_mentioned", "params": {"filePath": s.folder.path("main.c"), "lineStart": 0, "lineEnd": 0}})
    );
}

/// Waits, within a generous bound, until `open` is what `getOpenEditors`
/// says of `.env`.
async fn until_env_listed(client: &mut MemoryClient, env: &str, listed: bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let tabs = call_json(client, "getOpenEditors", json!({}))
            .await
            .to_string();
        if tabs.contains(env) == listed {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "`.env` listed is never {listed}: {tabs}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_rule_written_after_start_takes_effect_and_removed_no_longer() {
    let folder = Folder::new();
    let rules = DenyRules::watch_every(
        folder.roots(),
        vec![folder.ws.clone()],
        Duration::from_millis(50),
    );
    let s = setup_with(folder, rules);
    let mut client = client(&s.cx).await;
    let env = s.folder.uri(".env");
    until_env_listed(&mut client, &env, true).await;
    assert!(!s.folder.ws.join(".claude").exists());

    s.folder.write_rules();
    until_env_listed(&mut client, &env, false).await;
    assert_eq!(
        call_json(&mut client, "getDiagnostics", json!({"uri": env})).await,
        json!([{"uri": env, "diagnostics": []}])
    );

    std::fs::remove_file(s.folder.settings()).unwrap();
    until_env_listed(&mut client, &env, true).await;
    assert_eq!(
        call_json(&mut client, "getCurrentSelection", json!({})).await["text"],
        "s3cret2"
    );
}
