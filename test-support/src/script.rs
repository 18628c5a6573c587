//! Executable scripts the tests write (a fake `cargo`, a wrapper on `PATH`)
//! and then run at once.
//!
//! Writing such a file from the test process races with every `fork` in
//! its other threads: a child forked while the file is open for writing
//! holds that descriptor until it execs (`O_CLOEXEC` closes it only then),
//! and executing the file meanwhile fails with `ETXTBSY` ("Text file
//! busy"). Renaming a file written in-process does not help: the rename
//! keeps the inode, and with it the stray writer. So the file is written
//! by a child process of its own (`sh`, whose redirection opens it), and
//! the test process never opens it for writing at all.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Writes `text` to `path` as an executable (mode 0755) file, replacing
/// what was there, such that running it at once cannot fail with
/// `ETXTBSY`: no process holds it open for writing once this returns.
///
/// # Panics
///
/// When `sh` cannot be run or fails to write the file.
pub fn write_script(path: &Path, text: &str) {
    // A new inode each time: a file being replaced may be running now.
    let _ = std::fs::remove_file(path);
    let mut writer = Command::new("sh")
        .args(["-c", r#"cat > "$1" && chmod 755 "$1""#, "sh"])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let mut stdin = writer.stdin.take().expect("piped");
    stdin
        .write_all(text.as_bytes())
        .expect("sh reads the script");
    drop(stdin);
    let status = writer.wait().expect("sh ends");
    assert!(status.success(), "writing {}: {status}", path.display());
}

#[cfg(test)]
mod tests {
    use super::write_script;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_script_runs_at_once_while_other_threads_fork() {
        let dir = std::env::temp_dir().join(format!("ide-mcp-script-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Other threads forking all along, as a test binary's do.
        let forkers: Vec<_> = (0..2)
            .map(|_| {
                let stop = std::sync::Arc::clone(&stop);
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        let _ = std::process::Command::new("true").status();
                    }
                })
            })
            .collect();
        for round in 0..100 {
            let script = dir.join(format!("s{}", round % 3));
            write_script(&script, &format!("#!/bin/sh\necho {round}\n"));
            let mode = std::fs::metadata(&script).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o755);
            let out = std::process::Command::new(&script).output().unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("{round}\n"));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for forker in forkers {
            forker.join().unwrap();
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
