//! One `cargo check` run as a child process, its JSON output converted.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use cargo_metadata::{Message, MetadataCommand};
use tokio::process::Command;

use super::convert::{Converter, DiagnosticsByFile};

/// How much of cargo's stderr a failure report keeps (its tail).
const MAX_STDERR_IN_ERROR: usize = 4096;

/// How cargo is run.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The cargo program; `cargo` (the rustup proxy, which honours the
    /// checked workspace's `rust-toolchain.toml`) unless told otherwise.
    pub cargo: OsString,
    /// `CARGO_TARGET_DIR` for the check; `None` keeps cargo's own choice.
    pub target_dir: Option<PathBuf>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self {
            cargo: OsString::from("cargo"),
            target_dir: None,
        }
    }
}

/// The result of one complete check.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// The cargo workspace root that relative span paths were resolved against.
    pub workspace_root: PathBuf,
    /// Directories cargo writes to (target and build directories), which a
    /// file watcher should ignore.
    pub output_dirs: Vec<PathBuf>,
    /// The diagnostics, by absolute file path.
    pub files: DiagnosticsByFile,
    /// Whether the build succeeded (false when the code has errors).
    pub build_succeeded: bool,
    /// How long cargo ran.
    pub duration: Duration,
}

impl CheckReport {
    /// The number of diagnostics over all files.
    pub fn count(&self) -> usize {
        self.files.values().map(Vec::len).sum()
    }
}

/// A cargo invocation that produced no diagnostics: cargo missing, a broken
/// manifest, an unreadable workspace.
#[derive(Debug)]
pub enum CheckError {
    /// cargo could not be started.
    Spawn {
        /// The program that was started.
        program: OsString,
        /// Why it failed.
        source: std::io::Error,
    },
    /// cargo ran and failed before building anything.
    Failed {
        /// `cargo metadata` or `cargo check`.
        step: &'static str,
        /// Its exit status.
        status: ExitStatus,
        /// The tail of its stderr.
        stderr: String,
    },
    /// `cargo metadata` printed something that is not metadata.
    Metadata(String),
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Spawn { program, source } => {
                write!(f, "cannot run `{}`: {source}", program.to_string_lossy())
            }
            Self::Failed {
                step,
                status,
                stderr,
            } => write!(f, "`{step}` failed ({status}):\n{}", stderr.trim_end()),
            Self::Metadata(message) => write!(f, "cannot read `cargo metadata` output: {message}"),
        }
    }
}

impl std::error::Error for CheckError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Spawn { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Runs `cargo check --workspace --all-targets --message-format=json
/// --keep-going` in `dir` and converts its compiler messages.
///
/// Code with errors is a successful check (its diagnostics are the point);
/// an error means cargo could not check at all.
pub async fn run_check(dir: &Path, options: &CheckOptions) -> Result<CheckReport, CheckError> {
    let started = Instant::now();
    let metadata = workspace_metadata(dir, options).await?;
    let workspace_root = PathBuf::from(metadata.workspace_root);
    let mut output_dirs = vec![PathBuf::from(metadata.target_directory)];
    output_dirs.extend(metadata.build_directory.map(PathBuf::from));

    let mut output = check(dir, options, true).await?;
    if !output.status.success()
        && output.stdout.is_empty()
        && String::from_utf8_lossy(&output.stderr).contains(KEEP_GOING)
    {
        // A cargo older than 1.74 does not know the flag.
        output = check(dir, options, false).await?;
    }

    let mut converter = Converter::new(&workspace_root);
    let mut finished = None;
    for message in Message::parse_stream(output.stdout.as_slice()) {
        match message {
            Ok(Message::CompilerMessage(message)) => {
                converter.add(&message.message);
            }
            Ok(Message::BuildFinished(build)) => finished = Some(build.success),
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(%error, "cannot read cargo's output");
                break;
            }
        }
    }
    // cargo exits non-zero for code with errors too; only a run that never
    // reached the end of a build is a failed invocation.
    if finished.is_none() && !output.status.success() {
        return Err(failed("cargo check", output.status, &output.stderr));
    }
    Ok(CheckReport {
        workspace_root,
        output_dirs,
        files: converter.finish(),
        build_succeeded: finished.unwrap_or(output.status.success()),
        duration: started.elapsed(),
    })
}

async fn workspace_metadata(
    dir: &Path,
    options: &CheckOptions,
) -> Result<cargo_metadata::Metadata, CheckError> {
    let mut metadata = MetadataCommand::new();
    metadata
        .cargo_path(&options.cargo)
        .current_dir(dir)
        .no_deps();
    if let Some(target_dir) = &options.target_dir {
        metadata.env("CARGO_TARGET_DIR", target_dir);
    }
    let mut command = Command::from(metadata.cargo_command());
    command.kill_on_drop(true);
    let output = output(command, &options.cargo).await?;
    if !output.status.success() {
        return Err(failed("cargo metadata", output.status, &output.stderr));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    MetadataCommand::parse(stdout.as_ref()).map_err(|error| CheckError::Metadata(error.to_string()))
}

/// Without it cargo stops starting crates after the first one fails, so a
/// crate's warnings would come and go with the build order.
const KEEP_GOING: &str = "--keep-going";

async fn check(
    dir: &Path,
    options: &CheckOptions,
    keep_going: bool,
) -> Result<std::process::Output, CheckError> {
    let mut command = cargo(options, dir);
    command.args([
        "check",
        "--workspace",
        "--all-targets",
        "--message-format=json",
    ]);
    if keep_going {
        command.arg(KEEP_GOING);
    }
    output(command, &options.cargo).await
}

fn cargo(options: &CheckOptions, dir: &Path) -> Command {
    let mut command = Command::new(&options.cargo);
    command.current_dir(dir).kill_on_drop(true);
    if let Some(target_dir) = &options.target_dir {
        command.env("CARGO_TARGET_DIR", target_dir);
    }
    command
}

async fn output(
    mut command: Command,
    program: &OsString,
) -> Result<std::process::Output, CheckError> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let spawn_error = |source| CheckError::Spawn {
        program: program.clone(),
        source,
    };
    let child = command.spawn().map_err(spawn_error)?;
    child.wait_with_output().await.map_err(spawn_error)
}

fn failed(step: &'static str, status: ExitStatus, stderr: &[u8]) -> CheckError {
    let stderr = String::from_utf8_lossy(stderr);
    let mut tail_start = stderr.len().saturating_sub(MAX_STDERR_IN_ERROR);
    while !stderr.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    CheckError::Failed {
        step,
        status,
        stderr: stderr[tail_start..].to_owned(),
    }
}
