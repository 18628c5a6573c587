//! Starting a host as a process of its own, detached from the proxy that
//! starts it.

use std::fmt;
use std::io;
use std::process::{Command, Stdio};
use std::sync::Arc;

use super::options::HostOptions;

/// Makes the command that runs a host with given options (the binary
/// knows its own command line: `ide-mcp host ...`).
#[derive(Clone)]
pub struct Launcher(Arc<dyn Fn(&HostOptions) -> Command + Send + Sync>);

impl fmt::Debug for Launcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Launcher")
    }
}

impl Launcher {
    /// A launcher running the command `command` makes.
    pub fn new(command: impl Fn(&HostOptions) -> Command + Send + Sync + 'static) -> Self {
        Self(Arc::new(command))
    }

    /// Starts a host: in a process group of its own (an editor that kills
    /// its server's group, as eglot does, leaves the host alone), with no
    /// standard streams (it logs to `options.log`) and `/` as its working
    /// directory; returns its pid. It is waited for on a thread of its own,
    /// so that it never lingers as a zombie while this process lives.
    pub fn launch(&self, options: &HostOptions) -> io::Result<u32> {
        let mut command = (self.0)(options);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .current_dir("/");
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn()?;
        let pid = child.id();
        std::thread::Builder::new()
            .name("lsp-proxy-host-reaper".into())
            .spawn(move || child.wait())?;
        Ok(pid)
    }
}
