//! The language server as a child process: spawned with pipes the pumps
//! read and write with blocking calls, waited for and killed asynchronously.

use std::ffi::OsString;
use std::io::{self, PipeReader, PipeWriter};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::process::{Child, Command};

/// How long the server may take to exit after `exit` or the editor's end
/// before it is killed.
pub const EXIT_GRACE: Duration = Duration::from_secs(3);

/// A spawned language server and the two ends of its standard streams.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    /// The process, for waiting and killing.
    pub(crate) child: Child,
    /// Its standard input: what the editor sends goes here.
    pub(crate) stdin: PipeWriter,
    /// Its standard output: what goes to the editor comes from here.
    pub(crate) stdout: PipeReader,
}

impl ServerProcess {
    /// Spawns `program` with `args`; its stderr is the proxy's own (the
    /// editor shows it as the server's).
    pub(crate) fn spawn(program: &OsString, args: &[OsString]) -> io::Result<Self> {
        // Plain blocking pipes (close-on-exec on our side): the pumps use
        // blocking reads and writes on dedicated threads, which is the
        // shortest path for a message, while tokio only waits for the exit.
        let (stdin_read, stdin) = io::pipe()?;
        let (stdout, stdout_write) = io::pipe()?;
        enlarge_pipe(&stdin);
        enlarge_pipe(&stdout);
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::from(stdin_read))
            .stdout(Stdio::from(stdout_write))
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| {
                io::Error::new(
                    error.kind(),
                    format!(
                        "cannot start the language server `{}`: {error}",
                        program.to_string_lossy()
                    ),
                )
            })?;
        Ok(Self {
            child,
            stdin,
            stdout,
        })
    }
}

/// The capacity asked for each pipe the proxy reads or writes: 1 MiB,
/// Linux's default ceiling for unprivileged processes
/// (`/proc/sys/fs/pipe-max-size`), instead of 64 KiB. A large message then
/// crosses each pipe in 16 times fewer rounds of write, wake-up and read.
#[cfg(target_os = "linux")]
const PIPE_CAPACITY: usize = 1024 * 1024;

/// Asks for a larger capacity of the pipe `fd` (see [`PIPE_CAPACITY`]);
/// anything else (a file, a socket, a pipe the system keeps small) is left
/// as it is.
pub(crate) fn enlarge_pipe(fd: impl std::os::fd::AsFd) {
    #[cfg(target_os = "linux")]
    if let Err(error) = rustix::pipe::fcntl_setpipe_size(fd, PIPE_CAPACITY) {
        tracing::debug!(%error, "pipe capacity left as it is");
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// Waits for `child` at most `grace`, then kills it; returns its status.
pub(crate) async fn wait_or_kill(child: &mut Child, grace: Duration) -> io::Result<ExitStatus> {
    if let Ok(status) = tokio::time::timeout(grace, child.wait()).await {
        return status;
    }
    tracing::warn!(
        grace_ms = grace.as_millis() as u64,
        "the language server did not exit in time; killing it"
    );
    child.kill().await?;
    child.wait().await
}

/// The proxy's exit code for the server's status: its code, or 128 plus the
/// signal that ended it, as a shell reports it.
pub fn exit_code(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(1),
        (None, Some(signal)) => u8::try_from(128 + signal).unwrap_or(255),
        (None, None) => 1,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt as _;

    use super::*;

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(exit_code(ExitStatus::from_raw(0)), 0);
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), 3);
        // Killed by SIGKILL (9): 137.
        assert_eq!(exit_code(ExitStatus::from_raw(9)), 137);
    }

    #[tokio::test]
    async fn a_server_that_ignores_its_end_is_killed() {
        let mut server =
            ServerProcess::spawn(&"sleep".into(), &["30".into()]).expect("spawn sleep");
        let status = wait_or_kill(&mut server.child, Duration::from_millis(50))
            .await
            .unwrap();
        assert_eq!(exit_code(status), 137);
    }

    #[test]
    fn a_missing_server_is_a_clear_error() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = runtime.enter();
        let error = ServerProcess::spawn(&"no-such-language-server-x".into(), &[]).unwrap_err();
        assert!(
            error.to_string().contains("no-such-language-server-x"),
            "{error}"
        );
    }
}
