//! `#[mcp_resource]` and `#[mcp_prompt]` through a transport, in both eras:
//! the lists, reads of fixed resources and of template instances, prompts
//! with and without their optional arguments, and every failure as the
//! JSON-RPC error it must be.

use std::sync::Mutex;

use ide_mcp_runtime::{
    ListedResource, MemoryClient, PromptMessage, PromptResult, ResourceContents, Server,
    mcp_prompt, mcp_resource,
};

/// The files a fixture editor has open: path and text.
struct Files(Mutex<Vec<(String, String)>>);

/// The workspace's problems, as text.
#[mcp_resource(
    uri = "ide://diagnostics",
    mime_type = "text/plain",
    title = "Diagnostics"
)]
fn diagnostics(files: &Files) -> String {
    format!("{} files, no problems", files.0.lock().unwrap().len())
}

/// The logo.
#[mcp_resource(uri = "ide://logo", mime_type = "image/png")]
fn logo() -> Vec<u8> {
    vec![0x89, b'P', b'N', b'G']
}

/// An open file, with its unsaved text.
#[mcp_resource(uri = "file:///{path}", list = open_files, mime_type = "text/plain")]
fn open_file(files: &Files, path: String) -> Option<String> {
    let files = files.0.lock().unwrap();
    files
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, text)| text.clone())
}

fn open_files(files: &Files) -> Vec<ListedResource> {
    let files = files.0.lock().unwrap();
    files
        .iter()
        .map(|(path, _)| {
            ListedResource::new(format!("file:///{path}"), path.rsplit('/').next().unwrap())
                .with_description("saved")
        })
        .collect()
}

/// Two items, read later.
#[mcp_resource(uri = "notes://{day}/both")]
async fn both(day: String) -> Result<Vec<ResourceContents>, String> {
    tokio::task::yield_now().await;
    if day == "never" {
        return Err("there is no such day".into());
    }
    Ok(vec![
        ResourceContents::text(format!("morning of {day}")),
        ResourceContents::text("evening")
            .with_uri(format!("notes://{day}/evening"))
            .with_mime_type("text/markdown"),
    ])
}

/// Panics.
#[mcp_resource(uri = "ide://boom")]
fn boom() -> String {
    panic!("no boom today")
}

/// Fixes the errors in the open files.
#[mcp_prompt(title = "Fix diagnostics")]
fn fix_diagnostics(
    files: &Files,
    #[arg(description = "Only this file")] file: Option<String>,
) -> PromptResult {
    let count = files.0.lock().unwrap().len();
    let scope = file.unwrap_or_else(|| format!("the {count} open files"));
    PromptResult {
        description: Some(format!("Fix {scope}")),
        messages: vec![
            PromptMessage::user(format!("Fix the errors in {scope}.")),
            PromptMessage::resource(
                ResourceContents::text("no problems").with_uri("ide://diagnostics"),
            ),
        ],
    }
}

/// Greets someone.
#[mcp_prompt(name = "greet")]
async fn greeting(name: String, style: Option<String>) -> Result<String, String> {
    tokio::task::yield_now().await;
    match style.as_deref() {
        Some("rude") => Err("not today".into()),
        Some(style) => Ok(format!("Greet {name}, {style}.")),
        None => Ok(format!("Greet {name}.")),
    }
}

fn server() -> Server {
    Server::builder("items", "1")
        .state(Files(Mutex::new(vec![
            ("src/a.rs".into(), "fn a() {}".into()),
            ("src/b c.rs".into(), "unsaved".into()),
        ])))
        .build()
        .unwrap()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

async fn client() -> MemoryClient {
    let mut client = server().connect_memory();
    let init: serde_json::Value = serde_json::from_str(&client.request(INIT).await).unwrap();
    assert_eq!(
        init["result"]["capabilities"],
        serde_json::json!({
            "tools": {"listChanged": false},
            "resources": {"listChanged": true},
            "prompts": {"listChanged": false},
        })
    );
    client
}

fn request(id: u32, method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
}

#[tokio::test]
async fn lists_show_fixed_resources_listed_instances_templates_and_prompts() {
    let mut client = client().await;
    assert_eq!(
        client.request(request(1, "resources/list", "{}")).await,
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"result":{"resources":["#,
            r#"{"uri":"ide://boom","name":"boom","description":"Panics."},"#,
            r#"{"uri":"ide://diagnostics","name":"diagnostics","title":"Diagnostics","description":"The workspace's problems, as text.","mimeType":"text/plain"},"#,
            r#"{"uri":"ide://logo","name":"logo","description":"The logo.","mimeType":"image/png"},"#,
            r#"{"uri":"file:///src/a.rs","name":"a.rs","description":"saved","mimeType":"text/plain"},"#,
            r#"{"uri":"file:///src/b c.rs","name":"b c.rs","description":"saved","mimeType":"text/plain"}"#,
            r#"]}}"#
        )
    );
    assert_eq!(
        client
            .request(request(2, "resources/templates/list", "{}"))
            .await,
        concat!(
            r#"{"jsonrpc":"2.0","id":2,"result":{"resourceTemplates":["#,
            r#"{"uriTemplate":"file:///{path}","name":"open_file","description":"An open file, with its unsaved text.","mimeType":"text/plain"},"#,
            r#"{"uriTemplate":"notes://{day}/both","name":"both","description":"Two items, read later."}"#,
            r#"]}}"#
        )
    );
    assert_eq!(
        client.request(request(3, "prompts/list", "{}")).await,
        concat!(
            r#"{"jsonrpc":"2.0","id":3,"result":{"prompts":["#,
            r#"{"name":"fix_diagnostics","title":"Fix diagnostics","description":"Fixes the errors in the open files.","arguments":[{"name":"file","description":"Only this file","required":false}]},"#,
            r#"{"name":"greet","description":"Greets someone.","arguments":[{"name":"name","required":true},{"name":"style","required":false}]}"#,
            r#"]}}"#
        )
    );
}

#[tokio::test]
async fn reads_answer_contents_for_fixed_uris_and_template_instances() {
    let mut client = client().await;
    let read = |id: u32, uri: &str| request(id, "resources/read", &format!(r#"{{"uri":"{uri}"}}"#));
    assert_eq!(
        client.request(read(1, "ide://diagnostics")).await,
        r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"ide://diagnostics","mimeType":"text/plain","text":"2 files, no problems"}]}}"#
    );
    assert_eq!(
        client.request(read(2, "ide://logo")).await,
        r#"{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"ide://logo","mimeType":"image/png","blob":"iVBORw=="}]}}"#
    );
    // Percent-decoded into the variable; the URI answered as it was asked.
    assert_eq!(
        client.request(read(3, "file:///src/b%20c.rs")).await,
        r#"{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"file:///src/b%20c.rs","mimeType":"text/plain","text":"unsaved"}]}}"#
    );
    assert_eq!(
        client.request(read(4, "notes://monday/both")).await,
        r#"{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"notes://monday/both","text":"morning of monday"},{"uri":"notes://monday/evening","mimeType":"text/markdown","text":"evening"}]}}"#
    );
}

#[tokio::test]
async fn failed_reads_are_json_rpc_errors() {
    let mut client = client().await;
    let read = |id: u32, uri: &str| request(id, "resources/read", &format!(r#"{{"uri":"{uri}"}}"#));
    assert_eq!(
        client.request(read(1, "ide://nothing")).await,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"resource not found: `ide://nothing`","data":{"uri":"ide://nothing"}}}"#
    );
    // The template matches, the function finds nothing: not found as well.
    assert_eq!(
        client.request(read(2, "file:///src/z.rs")).await,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"resource not found: `file:///src/z.rs`"}}"#
    );
    assert_eq!(
        client.request(read(3, "notes://never/both")).await,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"there is no such day"}}"#
    );
    assert_eq!(
        client.request(read(4, "ide://boom")).await,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"resource `ide://boom` panicked: no boom today"}}"#
    );
    assert_eq!(
        client.request(request(5, "resources/read", "{}")).await,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"invalid `resources/read` params: missing field `uri`"}}"#
    );
    assert_eq!(
        client
            .request(r#"{"jsonrpc":"2.0","id":6,"method":"resources/read"}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"invalid `resources/read` params: params are missing"}}"#
    );
    // A template variable that decodes to a control character or to bytes
    // that are not UTF-8 is bad params, never handed to the function; a `%`
    // without two hex digits (a sign is none) is a `%`.
    assert_eq!(
        client.request(read(8, "file:///src/a%01.rs")).await,
        r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"invalid resource URI `file:///src/a%01.rs`: `path` decodes to the control character U+0001"}}"#
    );
    assert_eq!(
        client.request(read(9, r"file:///src/a\u001b.rs")).await,
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"invalid resource URI `file:///src/a\u001b.rs`: `path` decodes to the control character U+001B"}}"#
    );
    assert_eq!(
        client.request(read(10, "file:///src/%FF.rs")).await,
        r#"{"jsonrpc":"2.0","id":10,"error":{"code":-32602,"message":"invalid resource URI `file:///src/%FF.rs`: `path` does not decode to UTF-8"}}"#
    );
    assert_eq!(
        client.request(read(11, "file:///src/a%+1.rs")).await,
        r#"{"jsonrpc":"2.0","id":11,"error":{"code":-32002,"message":"resource not found: `file:///src/a%+1.rs`"}}"#
    );
    // The connection is still served.
    assert!(
        client
            .request(read(7, "ide://logo"))
            .await
            .contains("iVBORw==")
    );
}

#[tokio::test]
async fn prompts_render_with_their_arguments_and_refuse_bad_ones() {
    let mut client = client().await;
    let get = |id: u32, params: &str| request(id, "prompts/get", params);
    assert_eq!(
        client
            .request(get(1, r#"{"name":"fix_diagnostics"}"#))
            .await,
        r#"{"jsonrpc":"2.0","id":1,"result":{"description":"Fix the 2 open files","messages":[{"role":"user","content":{"type":"text","text":"Fix the errors in the 2 open files."}},{"role":"user","content":{"type":"resource","resource":{"uri":"ide://diagnostics","text":"no problems"}}}]}}"#
    );
    assert_eq!(
        client
            .request(get(
                2,
                r#"{"name":"greet","arguments":{"name":"Ada","style":"warmly"}}"#
            ))
            .await,
        r#"{"jsonrpc":"2.0","id":2,"result":{"messages":[{"role":"user","content":{"type":"text","text":"Greet Ada, warmly."}}]}}"#
    );
    assert_eq!(
        client
            .request(get(3, r#"{"name":"greet","arguments":{}}"#))
            .await,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid arguments for prompt `greet`: missing field `name`"}}"#
    );
    assert_eq!(
        client
            .request(get(4, r#"{"name":"greet","arguments":{"name":7}}"#))
            .await,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"invalid arguments for prompt `greet`: `name`: invalid type: integer `7`, expected a string"}}"#
    );
    assert_eq!(
        client
            .request(get(
                5,
                r#"{"name":"greet","arguments":{"name":"Bo","style":"rude"}}"#
            ))
            .await,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"not today"}}"#
    );
    assert_eq!(
        client.request(get(6, r#"{"name":"nope"}"#)).await,
        r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"unknown prompt `nope`"}}"#
    );
    // A sync prompt refuses its arguments in place, as an async one does.
    assert_eq!(
        client
            .request(get(
                7,
                r#"{"name":"fix_diagnostics","arguments":{"file":7}}"#
            ))
            .await,
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"invalid arguments for prompt `fix_diagnostics`: `file`: invalid type: integer `7`, expected a string"}}"#
    );
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

#[tokio::test]
async fn the_stateless_era_needs_no_initialize_and_stamps_results_and_lists() {
    let mut client = server().connect_memory();
    let stateless = |id: u32, method: &str, params: &str| {
        let sep = if params.is_empty() { "" } else { "," };
        request(id, method, &format!("{{{params}{sep}{META}}}"))
    };
    let list: serde_json::Value =
        serde_json::from_str(&client.request(stateless(1, "resources/list", "")).await).unwrap();
    // Read from the editor's state at each request: never cached.
    assert_eq!(list["result"]["resultType"], "complete");
    assert_eq!(list["result"]["ttlMs"], 0);
    assert_eq!(list["result"]["cacheScope"], "private");
    assert_eq!(list["result"]["resources"].as_array().unwrap().len(), 5);
    let prompts: serde_json::Value =
        serde_json::from_str(&client.request(stateless(2, "prompts/list", "")).await).unwrap();
    assert_eq!(prompts["result"]["ttlMs"], 86_400_000);
    assert_eq!(prompts["result"]["cacheScope"], "public");
    assert_eq!(
        client
            .request(stateless(
                3,
                "resources/read",
                r#""uri":"ide://diagnostics""#
            ))
            .await,
        r#"{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"ide://diagnostics","mimeType":"text/plain","text":"2 files, no problems"}],"resultType":"complete"}}"#
    );
    assert_eq!(
        client
            .request(stateless(
                4,
                "prompts/get",
                r#""name":"greet","arguments":{"name":"Ada"}"#
            ))
            .await,
        r#"{"jsonrpc":"2.0","id":4,"result":{"messages":[{"role":"user","content":{"type":"text","text":"Greet Ada."}}],"resultType":"complete"}}"#
    );
    assert_eq!(
        client
            .request(stateless(5, "resources/read", r#""uri":"ide://nothing""#))
            .await,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32002,"message":"resource not found: `ide://nothing`","data":{"uri":"ide://nothing"}}}"#
    );
}

#[tokio::test]
async fn the_handshake_era_refuses_them_before_initialize() {
    let mut client = server().connect_memory();
    assert_eq!(
        client.request(request(1, "prompts/list", "{}")).await,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"`prompts/list` before `initialize`: the session is not initialized yet, send `initialize` first"}}"#
    );
}

#[test]
fn a_server_without_the_states_they_need_does_not_start() {
    let err = Server::builder("items", "1")
        .build()
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        concat!(
            "resource `ide://diagnostics` needs a state of type `items::Files`, but the server was not given one; add it with `ServerBuilder::state`\n",
            "resource `file:///{path}` needs a state of type `items::Files`, but the server was not given one; add it with `ServerBuilder::state`\n",
            "prompt `fix_diagnostics` needs a state of type `items::Files`, but the server was not given one; add it with `ServerBuilder::state`"
        )
    );
}

mod registry_checks {
    use ide_mcp_runtime::prompt::PromptDef;
    use ide_mcp_runtime::result::Outcome;
    use ide_mcp_runtime::tool::{Arguments, CallOutcome};
    use ide_mcp_runtime::{Call, Execution, Registry, ResourceDef, ResultOut, SourceLocation};

    fn shim(_: &Call<'_>, _: Option<Arguments<'_>>, _: &mut ResultOut<'_>) -> CallOutcome {
        Outcome::Written.into()
    }

    const fn at(crate_name: &'static str, line: u32) -> SourceLocation {
        SourceLocation {
            crate_name,
            file: "src/lib.rs",
            line,
        }
    }

    const fn resource(uri: &'static str, location: SourceLocation) -> ResourceDef {
        ResourceDef {
            uri,
            name: "r",
            title: None,
            description: "A resource.",
            mime_type: None,
            list: None,
            states: |_| {},
            execution: Execution::Inline,
            call: shim,
            location,
        }
    }

    const fn prompt(name: &'static str, location: SourceLocation) -> PromptDef {
        PromptDef {
            name,
            title: None,
            description: "A prompt.",
            arguments: || ide_mcp_runtime::schema::Schema::default(),
            states: |_| {},
            execution: Execution::Inline,
            call: shim,
            location,
        }
    }

    static DIAGNOSTICS_A: ResourceDef = resource("ide://diagnostics", at("crate_a", 3));
    static DIAGNOSTICS_B: ResourceDef = resource("ide://diagnostics", at("crate_b", 7));
    static FILES: ResourceDef = resource("file:///{path}", at("crate_a", 9));
    static README: ResourceDef = resource("file:///README.md", at("crate_b", 11));
    static BAD: ResourceDef = resource("x://{a}{b}", at("crate_c", 1));
    static FIX_A: PromptDef = prompt("fix", at("crate_a", 20));
    static FIX_B: PromptDef = prompt("fix", at("crate_b", 30));

    #[test]
    fn duplicates_collisions_and_bad_templates_name_both_places() {
        let err = Registry::from_items(
            [],
            [&DIAGNOSTICS_A, &DIAGNOSTICS_B, &FILES, &README, &BAD],
            [&FIX_A, &FIX_B],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            concat!(
                "two resources have the URI `ide://diagnostics`: one in crate_a (src/lib.rs:3), one in crate_b (src/lib.rs:7); change one's `uri = \"...\"`\n",
                "the resource template `x://{a}{b}` in crate_c (src/lib.rs:1) is unusable: two variables side by side in `x://{a}{b}` cannot be told apart: put literal text between them\n",
                "the resource template `file:///{path}` in crate_a (src/lib.rs:9) matches the URI `file:///README.md` of the resource in crate_b (src/lib.rs:11): a read of it would be ambiguous\n",
                "two prompts are named `fix`: one in crate_a (src/lib.rs:20), one in crate_b (src/lib.rs:30); rename one with `#[mcp_prompt(name = \"...\")]`"
            )
        );
        // Apart, they build.
        assert!(Registry::from_items([], [&DIAGNOSTICS_A, &FILES], [&FIX_A]).is_ok());
    }
}
