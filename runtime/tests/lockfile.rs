//! The IDE lockfile: contents, permissions, removal, stale cleanup. (Removal
//! at SIGTERM is tested on a child process in `tests/tests/faults.rs`.)

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use ide_mcp_runtime::WsOptions;
use ide_mcp_runtime::lockfile::LockfileContent;

fn options(dir: &Path) -> WsOptions {
    WsOptions {
        config_dir: Some(dir.to_owned()),
        workspace_folders: vec!["/abs/project".to_owned()],
        ide_name: "Fixture IDE".to_owned(),
        ..WsOptions::default()
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn lockfile_contents_modes_and_removal() {
    let dir = tempfile::tempdir().unwrap();
    let handle = common::server()
        .serve_ws(options(dir.path()))
        .await
        .unwrap();
    let path = handle.lockfile_path().unwrap().to_owned();
    assert_eq!(
        path,
        dir.path()
            .join("ide")
            .join(format!("{}.lock", handle.port()))
    );
    let expected = format!(
        r#"{{"pid":{},"workspaceFolders":["/abs/project"],"ideName":"Fixture IDE","transport":"ws","runningInWindows":false,"authToken":"{}","ideMcp":{{"pidNamespace":"{}"}}}}"#,
        std::process::id(),
        handle.auth_token(),
        pid_namespace(),
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    assert_eq!(mode(&dir.path().join("ide")), 0o700);
    assert_eq!(mode(&path), 0o600);
    // Only the lockfile is left in the directory: no temporary file.
    assert_eq!(
        std::fs::read_dir(dir.path().join("ide")).unwrap().count(),
        1
    );
    handle.shutdown().await;
    assert!(!path.exists());

    let handle = common::server()
        .serve_ws(options(dir.path()))
        .await
        .unwrap();
    let path = handle.lockfile_path().unwrap().to_owned();
    drop(handle);
    assert!(!path.exists(), "dropping the handle removes the lockfile");

    let handle = common::server()
        .serve_ws(WsOptions {
            write_lockfile: false,
            ..options(dir.path())
        })
        .await
        .unwrap();
    assert!(handle.lockfile_path().is_none());
}

#[tokio::test]
async fn an_existing_open_directory_is_tightened() {
    let dir = tempfile::tempdir().unwrap();
    let ide = dir.path().join("ide");
    std::fs::create_dir(&ide).unwrap();
    std::fs::set_permissions(&ide, std::fs::Permissions::from_mode(0o755)).unwrap();
    let _handle = common::server()
        .serve_ws(options(dir.path()))
        .await
        .unwrap();
    assert_eq!(mode(&ide), 0o700);
}

/// This process's PID namespace, as the lockfile's mark records it.
fn pid_namespace() -> String {
    std::fs::read_link("/proc/self/ns/pid")
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The pid of a process that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[tokio::test]
async fn only_our_own_lockfiles_of_gone_processes_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let ide = dir.path().join("ide");
    std::fs::create_dir(&ide).unwrap();
    let content = |pid: u32, mark: Option<&str>| {
        let mut value = serde_json::to_value(LockfileContent {
            pid,
            workspace_folders: vec![],
            ide_name: "other".into(),
            transport: "ws".into(),
            running_in_windows: false,
            auth_token: "t".into(),
        })
        .unwrap();
        if let Some(namespace) = mark {
            value["ideMcp"] = serde_json::json!({ "pidNamespace": namespace });
        }
        value.to_string()
    };
    let here = pid_namespace();
    let dead = dead_pid();
    let live = std::os::unix::process::parent_id();
    let files = [
        // Ours, its process gone: the only one removed.
        ("1.lock", content(dead, Some(&here)), false),
        // Ours, alive.
        ("2.lock", content(live, Some(&here)), true),
        // Another IDE's, its pid gone (or in a namespace we cannot see).
        ("3.lock", content(dead, None), true),
        // Ours from another PID namespace (a container): its pid means
        // nothing here.
        ("4.lock", content(dead, Some("pid:[1]")), true),
        // Ours, with a pid no `kill` can check.
        ("5.lock", content(4_000_000_000, Some(&here)), true),
        ("6.lock", "not json".to_owned(), true),
        ("notes.txt", content(dead, Some(&here)), true),
    ];
    for (name, text, _) in &files {
        std::fs::write(ide.join(name), text).unwrap();
    }
    let handle = common::server()
        .serve_ws(options(dir.path()))
        .await
        .unwrap();
    for (name, _, kept) in &files {
        assert_eq!(ide.join(name).exists(), *kept, "{name}");
    }
    assert!(handle.lockfile_path().unwrap().exists());
}
