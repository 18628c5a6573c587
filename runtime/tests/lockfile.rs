//! The IDE lockfile: contents, permissions, removal, stale cleanup.

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::time::Duration;

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
        r#"{{"pid":{},"workspaceFolders":["/abs/project"],"ideName":"Fixture IDE","transport":"ws","runningInWindows":false,"authToken":"{}"}}"#,
        std::process::id(),
        handle.auth_token()
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

#[tokio::test]
async fn stale_lockfiles_are_removed_and_live_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let ide = dir.path().join("ide");
    std::fs::create_dir(&ide).unwrap();
    let content = |pid| {
        serde_json::to_string(&LockfileContent {
            pid,
            workspace_folders: vec![],
            ide_name: "other".into(),
            transport: "ws".into(),
            running_in_windows: false,
            auth_token: "t".into(),
        })
        .unwrap()
    };
    // A dead pid (above any pid_max), a live one (this process's parent), and files that are not ours to judge.
    std::fs::write(ide.join("1.lock"), content(4_000_000_000)).unwrap();
    let live = std::os::unix::process::parent_id();
    std::fs::write(ide.join("2.lock"), content(live)).unwrap();
    std::fs::write(ide.join("3.lock"), "not json").unwrap();
    std::fs::write(ide.join("notes.txt"), content(4_000_000_000)).unwrap();
    let handle = common::server()
        .serve_ws(options(dir.path()))
        .await
        .unwrap();
    assert!(!ide.join("1.lock").exists());
    assert!(ide.join("2.lock").exists());
    assert!(ide.join("3.lock").exists());
    assert!(ide.join("notes.txt").exists());
    assert!(handle.lockfile_path().unwrap().exists());
}

/// Run as a child process by `sigterm_removes_the_lockfile`: serves until a signal.
#[tokio::test]
async fn sigterm_child() {
    let Some(dir) = std::env::var_os("IDE_MCP_SIGTERM_CHILD") else {
        return;
    };
    let handle = common::server()
        .serve_ws(options(Path::new(&dir)))
        .await
        .unwrap();
    handle.run_until_signal().await.unwrap();
}

#[tokio::test]
async fn sigterm_removes_the_lockfile() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "sigterm_child", "--test-threads=1", "--quiet"])
        .env("IDE_MCP_SIGTERM_CHILD", dir.path())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let ide = dir.path().join("ide");
    let lockfile = async {
        loop {
            if let Some(entry) = std::fs::read_dir(&ide).ok().and_then(|mut d| {
                d.find(|e| {
                    e.as_ref()
                        .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "lock"))
                })
            }) {
                return entry.unwrap().path();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let path = tokio::time::timeout(Duration::from_secs(20), lockfile)
        .await
        .expect("the child writes its lockfile");
    let content: LockfileContent =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(content.pid, child.id().unwrap());
    let status = std::process::Command::new("kill")
        .args(["-TERM", &content.pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(exit.success(), "{exit:?}");
    assert!(!path.exists());
}
