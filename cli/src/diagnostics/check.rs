//! One `cargo check` run as a child process, its JSON output converted.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use cargo_metadata::{Message, MetadataCommand};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{ChildStderr, Command};

use super::convert::{Converter, DiagnosticsByFile};
use super::progress::ProgressTask;

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
    /// The units cargo checked or found fresh (`compiler-artifact` messages).
    pub units: u64,
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
    run_check_reporting(dir, options, None, None).await
}

/// [`run_check`], reporting to `progress`: each unit cargo finishes (its
/// `compiler-artifact` message) counted against `expected_units` (the
/// previous run's count; estimated from the dependency graph when `None`),
/// and a wait for another cargo's lock on the build directory.
pub async fn run_check_reporting(
    dir: &Path,
    options: &CheckOptions,
    progress: Option<&ProgressTask>,
    expected_units: Option<u64>,
) -> Result<CheckReport, CheckError> {
    let started = Instant::now();
    let metadata = workspace_metadata(dir, options, expected_units.is_none()).await?;
    let workspace_root = PathBuf::from(&metadata.workspace_root);
    let mut output_dirs = vec![PathBuf::from(&metadata.target_directory)];
    output_dirs.extend(metadata.build_directory.as_ref().map(PathBuf::from));
    if let Some(progress) = progress {
        match expected_units {
            Some(units) => progress.count(Some(0), Some(units), false),
            None => progress.count(Some(0), estimate_units(&metadata), true),
        }
    }

    let mut converter = Converter::new(&workspace_root);
    let mut run = check(dir, options, true, &mut converter, progress).await?;
    if !run.status.success()
        && run.units == 0
        && run.finished.is_none()
        && run.stderr.contains(KEEP_GOING)
    {
        // A cargo older than 1.74 does not know the flag.
        run = check(dir, options, false, &mut converter, progress).await?;
    }
    // cargo exits non-zero for code with errors too; only a run that never
    // reached the end of a build is a failed invocation.
    if run.finished.is_none() && !run.status.success() {
        return Err(failed("cargo check", run.status, run.stderr.as_bytes()));
    }
    Ok(CheckReport {
        workspace_root,
        output_dirs,
        files: converter.finish(),
        build_succeeded: run.finished.unwrap_or(run.status.success()),
        units: run.units,
        duration: started.elapsed(),
    })
}

/// The units a first check will build, roughly: one per package in the
/// resolved graph (dependencies of every platform included, build scripts
/// left out), plus each workspace member's extra targets.
fn estimate_units(metadata: &cargo_metadata::Metadata) -> Option<u64> {
    let resolved = metadata.resolve.as_ref()?.nodes.len();
    let extra_targets: usize = metadata
        .workspace_packages()
        .iter()
        .map(|package| package.targets.len().saturating_sub(1))
        .sum();
    Some((resolved + extra_targets) as u64)
}

async fn workspace_metadata(
    dir: &Path,
    options: &CheckOptions,
    with_dependencies: bool,
) -> Result<cargo_metadata::Metadata, CheckError> {
    let mut metadata = MetadataCommand::new();
    metadata.cargo_path(&options.cargo).current_dir(dir);
    if !with_dependencies {
        metadata.no_deps();
    }
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

/// What one `cargo check` process left.
struct CheckRun {
    status: ExitStatus,
    /// `build-finished`'s verdict; `None` when cargo never got there.
    finished: Option<bool>,
    /// `compiler-artifact` messages: units checked (or found fresh).
    units: u64,
    /// The tail of its stderr.
    stderr: String,
}

async fn check(
    dir: &Path,
    options: &CheckOptions,
    keep_going: bool,
    converter: &mut Converter,
    progress: Option<&ProgressTask>,
) -> Result<CheckRun, CheckError> {
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
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|source| CheckError::Spawn {
        program: options.cargo.clone(),
        source,
    })?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let stdout_task = async {
        let mut finished = None;
        let mut units = 0;
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            match serde_json::from_str::<Message>(&line) {
                Ok(Message::CompilerMessage(message)) => {
                    converter.add(&message.message);
                }
                Ok(Message::CompilerArtifact(artifact)) => {
                    units += 1;
                    if let Some(progress) = progress {
                        progress.count(Some(units), None, false);
                        progress.message(format!("checked {}", artifact.target.name));
                    }
                }
                Ok(Message::BuildFinished(build)) => finished = Some(build.success),
                Ok(_) => {}
                Err(error) => tracing::debug!(%error, "a line of cargo's output is not a message"),
            }
        }
        (finished, units)
    };
    // Both pipes at once: cargo blocks when either fills.
    let ((finished, units), stderr) = tokio::join!(stdout_task, read_stderr(stderr, progress));
    let status = child.wait().await;
    let status = status.map_err(|source| CheckError::Spawn {
        program: options.cargo.clone(),
        source,
    })?;
    Ok(CheckRun {
        status,
        finished,
        units,
        stderr,
    })
}

/// What cargo prints when another cargo (the user's own build, an editor's
/// check) holds the build directory.
const LOCK_WAIT: &str = "Blocking waiting for file lock";

/// Reads cargo's stderr to its end, keeping the tail, and reports a wait for
/// the build directory's lock at once: otherwise the check looks hung.
async fn read_stderr(stderr: ChildStderr, progress: Option<&ProgressTask>) -> String {
    let mut tail = String::new();
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if line.contains(LOCK_WAIT) {
            tracing::warn!(
                "cargo check is waiting for another cargo's lock on the build directory \
                 ({}); `--cargo-target-dir` gives the check its own",
                line.trim()
            );
            if let Some(progress) = progress {
                progress.message("waiting for another cargo's build-directory lock");
            }
        }
        tail.push_str(&line);
        tail.push('\n');
        if tail.len() > 2 * MAX_STDERR_IN_ERROR {
            let mut cut = tail.len() - MAX_STDERR_IN_ERROR;
            while !tail.is_char_boundary(cut) {
                cut += 1;
            }
            tail.drain(..cut);
        }
    }
    tail
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
