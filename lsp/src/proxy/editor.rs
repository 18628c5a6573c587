//! What the proxy learns about its editor from the `initialize` request:
//! who it is (the process that started the proxy), its workspace and its
//! name. This decides which proxies present one IDE together.

use std::path::PathBuf;

use serde::Deserialize;

/// The editor behind a proxy, as its `initialize` request describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditorInfo {
    /// The editor's process id (`processId`), or the proxy's parent's.
    pub pid: u32,
    /// The workspace folders (`workspaceFolders`, else `rootUri`, else
    /// `rootPath`), as absolute paths.
    pub folders: Vec<PathBuf>,
    /// The editor's name (`clientInfo.name`), e.g. "Neovim".
    pub name: Option<String>,
}

#[derive(Deserialize)]
struct Request {
    method: Option<String>,
    #[serde(default)]
    params: Option<Params>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Params {
    process_id: Option<i64>,
    workspace_folders: Option<Vec<Folder>>,
    root_uri: Option<String>,
    root_path: Option<String>,
    client_info: Option<ClientInfo>,
}

#[derive(Deserialize)]
struct Folder {
    uri: String,
}

#[derive(Deserialize)]
struct ClientInfo {
    name: String,
}

impl EditorInfo {
    /// The editor described by `body` when it is an `initialize` request;
    /// `parent_pid` stands in for a missing `processId`.
    pub fn from_initialize(body: &[u8], parent_pid: u32) -> Option<Self> {
        // Cheap refusal first: every message passes here.
        memchr::memmem::find(body, b"\"initialize\"")?;
        let request: Request = serde_json::from_slice(body).ok()?;
        if request.method.as_deref() != Some("initialize") {
            return None;
        }
        let params = request.params?;
        let pid = params
            .process_id
            .and_then(|pid| u32::try_from(pid).ok())
            .filter(|&pid| pid > 0)
            .unwrap_or(parent_pid);
        let folders = match params.workspace_folders {
            Some(folders) if !folders.is_empty() => {
                folders.iter().filter_map(|f| uri_path(&f.uri)).collect()
            }
            _ => params
                .root_uri
                .as_deref()
                .and_then(uri_path)
                .or_else(|| params.root_path.map(PathBuf::from))
                .into_iter()
                .collect(),
        };
        Some(Self {
            pid,
            folders,
            name: params.client_info.map(|info| info.name),
        })
    }
}

/// The path of a `file://` URI, percent-decoded.
fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let decoded = percent_encoding::percent_decode_str(rest)
        .decode_utf8()
        .ok()?;
    Some(PathBuf::from(decoded.as_ref()))
}

/// Whether `body` is the `exit` notification (checked only on short bodies).
pub(crate) fn is_exit(body: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<&'a str>,
        id: Option<serde::de::IgnoredAny>,
    }
    body.len() < 256
        && memchr::memmem::find(body, b"\"exit\"").is_some()
        && serde_json::from_slice::<Method<'_>>(body)
            .is_ok_and(|message| message.method == Some("exit") && message.id.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neovim_s_initialize_names_the_editor_and_its_workspace() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":4242,"rootUri":"file:///a/work%20space","workspaceFolders":[{"uri":"file:///a/work%20space","name":"w"}],"clientInfo":{"name":"Neovim","version":"0.7.2"},"capabilities":{}}}"#;
        let info = EditorInfo::from_initialize(body, 1).unwrap();
        assert_eq!(
            info,
            EditorInfo {
                pid: 4242,
                folders: vec![PathBuf::from("/a/work space")],
                name: Some("Neovim".into()),
            }
        );
    }

    #[test]
    fn a_missing_process_id_and_folders_fall_back() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootPath":"/r","capabilities":{}}}"#;
        let info = EditorInfo::from_initialize(body, 77).unwrap();
        assert_eq!(info.pid, 77);
        assert_eq!(info.folders, [PathBuf::from("/r")]);
        assert_eq!(info.name, None);
    }

    #[test]
    fn other_messages_are_not_initialize() {
        assert!(
            EditorInfo::from_initialize(br#"{"method":"initialized","params":{}}"#, 1).is_none()
        );
        assert!(EditorInfo::from_initialize(b"{\"initialize\"", 1).is_none());
    }

    #[test]
    fn exit_is_the_notification_only() {
        assert!(is_exit(br#"{"jsonrpc":"2.0","method":"exit"}"#));
        assert!(is_exit(
            br#"{"jsonrpc": "2.0", "method": "exit", "params": null}"#
        ));
        assert!(!is_exit(br#"{"jsonrpc":"2.0","id":3,"method":"exit"}"#));
        assert!(!is_exit(br#"{"jsonrpc":"2.0","method":"shutdown","id":2}"#));
    }
}
