//! The baselines the benchmarks compare with: a hand-written `match`
//! dispatcher doing the same serde work as the registry path, and the plain
//! structs `serde_json::to_writer` serializes.

use std::borrow::Cow;

use futures_util::FutureExt as _;
use ide_mcp_runtime::IntoToolResult as _;
use ide_mcp_runtime::ResultOut;
use ide_mcp_tools::{EditorPorts, OpenEditorsState};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// What a careful hand-written server does for a `tools/call` of one of the
/// five tools: parse the request and the arguments with serde, `match` on the
/// name, call the same tool function, write the response.
pub fn dispatch(cx: &EditorPorts, message: &[u8], out: &mut Vec<u8>) {
    #[derive(Deserialize)]
    struct Request<'a> {
        #[serde(borrow)]
        id: &'a RawValue,
        #[serde(borrow)]
        method: Cow<'a, str>,
        #[serde(borrow)]
        params: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Call<'a> {
        #[serde(borrow)]
        name: Cow<'a, str>,
        #[serde(borrow)]
        arguments: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct UriArgs {
        uri: Option<String>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct PathArgs {
        file_path: String,
    }
    let request: Request = serde_json::from_slice(message).expect("valid request");
    assert_eq!(request.method, "tools/call");
    let call: Call =
        serde_json::from_str(request.params.expect("params").get()).expect("call params");
    let args = call.arguments.map_or("{}", RawValue::get);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(request.id.get().as_bytes());
    out.extend_from_slice(br#","result":"#);
    match &*call.name {
        "getCurrentSelection" => {
            ResultOut::new(out).json_text(&ide_mcp_tools::get_current_selection(cx));
        }
        "getOpenEditors" => {
            ide_mcp_tools::get_open_editors(cx).write_tool_result(&mut ResultOut::new(out));
        }
        "getWorkspaceFolders" => {
            ide_mcp_tools::get_workspace_folders(cx).write_tool_result(&mut ResultOut::new(out));
        }
        "getDiagnostics" => {
            let args: UriArgs = serde_json::from_str(args).expect("args");
            ide_mcp_tools::get_diagnostics(cx, args.uri)
                .now_or_never()
                .expect("no check running")
                .write_tool_result(&mut ResultOut::new(out));
        }
        "checkDocumentDirty" => {
            let args: PathArgs = serde_json::from_str(args).expect("args");
            ResultOut::new(out).json_text(&ide_mcp_tools::check_document_dirty(cx, args.file_path));
        }
        other => panic!("unknown tool {other}"),
    }
    out.push(b'}');
}

/// One tab of `getOpenEditors` as a plain struct, its strings built.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlainTab {
    uri: String,
    is_active: bool,
    label: String,
    language_id: String,
    is_dirty: bool,
}

/// `{"tabs": [...]}` as plain structs.
#[derive(Serialize)]
pub struct PlainTabs {
    tabs: Vec<PlainTab>,
}

/// The same tabs as `state`, as plain structs.
pub fn plain_tabs(state: &OpenEditorsState) -> PlainTabs {
    let value = serde_json::to_value(state).expect("tabs serialize");
    let tabs = value["tabs"]
        .as_array()
        .expect("tabs")
        .iter()
        .map(|t| PlainTab {
            uri: t["uri"].as_str().expect("uri").to_owned(),
            is_active: t["isActive"].as_bool().expect("isActive"),
            label: t["label"].as_str().expect("label").to_owned(),
            language_id: t["languageId"].as_str().expect("languageId").to_owned(),
            is_dirty: t["isDirty"].as_bool().expect("isDirty"),
        })
        .collect();
    PlainTabs { tabs }
}
