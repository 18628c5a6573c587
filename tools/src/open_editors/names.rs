//! A tab's names, derived from its buffer's path: the `file://` URI and the
//! label (the file name). The path is checked to be UTF-8 once per tab, and
//! the result serves both names.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use serde::{Serialize, Serializer};

use crate::uri::{FileUri, Utf8FileUri};

/// A tab's `uri`: `file://` + the buffer's raw path, as it is written.
#[derive(Clone, Copy, Debug)]
pub enum TabUri<'a> {
    /// The whole URI, made before.
    Kept(&'a str),
    /// `file://` + this path, already checked to be UTF-8 (Unix).
    Utf8Path(&'a str),
    /// `file://` + this path (any other: Windows, or not UTF-8).
    Path(&'a Path),
}

impl fmt::Display for TabUri<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Kept(uri) => f.write_str(uri),
            Self::Utf8Path(path) => write!(f, "file://{path}"),
            Self::Path(path) => fmt::Display::fmt(&FileUri(path), f),
        }
    }
}

impl Serialize for TabUri<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Self::Kept(uri) => serializer.serialize_str(uri),
            Self::Utf8Path(path) => Utf8FileUri(path).serialize(serializer),
            Self::Path(path) => FileUri(path).serialize(serializer),
        }
    }
}

/// The `uri` and the label of the tab of `path`, with one UTF-8 check.
pub(crate) fn derive(path: &Path) -> (TabUri<'_>, Cow<'_, str>) {
    match path.to_str() {
        Some(text) if cfg!(unix) => (
            TabUri::Utf8Path(text),
            last_segment(text).map_or_else(|| parsed_label(path), Cow::Borrowed),
        ),
        _ => (TabUri::Path(path), parsed_label(path)),
    }
}

/// The label of a tab: the file name (the whole path for `/` and paths
/// ending in `..`), lossily when it is not UTF-8.
pub fn label(path: &Path) -> Cow<'_, str> {
    derive(path).1
}

/// A UTF-8 Unix path's last segment, when it is a plain name: what
/// `Path::file_name` gives, without its component parse (most of what
/// deriving a label costs, BENCHMARKS.md § 3).
fn last_segment(text: &str) -> Option<&str> {
    let slash = text.bytes().rposition(|byte| byte == b'/')?;
    let name = &text[slash + 1..];
    (!matches!(name, "" | "." | "..")).then_some(name)
}

/// The label by `Path::file_name`, for the paths [`last_segment`] leaves.
fn parsed_label(path: &Path) -> Cow<'_, str> {
    path.file_name()
        .map_or_else(|| path.to_string_lossy(), |name| name.to_string_lossy())
}
