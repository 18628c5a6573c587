//! Paths and `file://` URIs, as the `claude` CLI writes and reads them.
//!
//! **Output.** The CLI builds URIs as the literal `"file://" + absolute path`,
//! with no percent-encoding, and compares strings; so do we: [`FileUri`]
//! writes `file:///abs/a b#1.rs` for the path `/abs/a b#1.rs`.
//!
//! **Input.** Clients send raw URIs (the CLI), percent-encoded URIs (most other
//! clients) or plain absolute paths. [`PathInput::parse`] accepts all three:
//!
//! | input | reading(s), in the order tried |
//! |---|---|
//! | `/abs/a.rs` (absolute path) | the path as is, never percent-decoded |
//! | `file:///abs/a%20b.rs` | `/abs/a%20b.rs` (raw reading), then `/abs/a b.rs` (decoded) |
//! | `file:///abs/a b.rs` | `/abs/a b.rs` |
//! | `file://localhost/abs/a.rs`, `file:/abs/a.rs` | `/abs/a.rs` |
//! | `file://host/share/a.rs` (another host) | none |
//! | `""`, `a.rs`, `./a.rs` (relative), `untitled:1`, other schemes | none |
//!
//! - A raw `file://` path may contain `%` literally, so the raw reading is
//!   tried first and the decoded one second; a lookup uses the first that names
//!   something. Invalid percent sequences (`%zz`, a trailing `%`) stay literal.
//! - `#` and `?` are part of the path, never a fragment or query (the CLI does
//!   not encode them).
//! - Each reading is normalized lexically: `.` dropped, `..` removes the
//!   previous component (never above the root), repeated `/` collapsed.
//!   Symlinks are not resolved (no file system access).
//! - A reading containing NUL names no file and is dropped.
//! - The scheme `file` is matched case-insensitively; the result never panics.
//!
//! **Language servers** write and read percent-encoded URIs only:
//! [`encoded_file_uri`] and [`encoded_uri_path`] are that form, for the
//! LSP side of the house.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::{Serialize, Serializer};

/// The CLI's form of a file URI: `file://` + the raw absolute path.
///
/// Writes without allocating, through [`Display`](fmt::Display) and
/// [`Serialize`]. A path that is not valid UTF-8 is written lossily (JSON text
/// cannot carry it).
#[derive(Clone, Copy, Debug)]
pub struct FileUri<'a>(pub &'a Path);

impl fmt::Display for FileUri<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("file://")?;
        if cfg!(windows) {
            // `file:///C:/dir/a.rs`: a slash before the drive, forward slashes.
            let text = self.0.to_string_lossy();
            if !text.starts_with('/') {
                f.write_str("/")?;
            }
            return f.write_str(&text.replace('\\', "/"));
        }
        match self.0.to_str() {
            Some(text) => f.write_str(text),
            None => fmt::Display::fmt(&self.0.display(), f),
        }
    }
}

impl Serialize for FileUri<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.to_str() {
            Some(path) if !cfg!(windows) => Utf8FileUri(path).serialize(serializer),
            _ => serializer.collect_str(self),
        }
    }
}

/// [`FileUri`] of a Unix path already checked to be UTF-8 (its text), for a
/// caller that needs the text for more than the URI and checks once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Utf8FileUri<'a>(pub(crate) &'a str);

impl Serialize for Utf8FileUri<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("file://{}", self.0))
    }
}

/// A path serialized as a string, lossily when it is not valid UTF-8.
///
/// (`Path`'s own `Serialize` fails on such paths, which would turn a whole
/// result into an error.)
#[derive(Clone, Copy, Debug)]
pub struct LossyPath<'a>(pub &'a Path);

impl Serialize for LossyPath<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.to_str() {
            Some(text) => serializer.serialize_str(text),
            None => serializer.collect_str(&self.0.display()),
        }
    }
}

/// `file://` + `path`, as an owned string.
pub fn file_uri(path: &Path) -> String {
    FileUri(path).to_string()
}

/// What a path keeps unencoded in an LSP `file://` URI: RFC 3986's
/// unreserved characters and `/`.
const LSP_PATH: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The percent-encoded `file://` URI of `path`, as language servers write
/// them (the CLI's form is [`FileUri`]).
pub fn encoded_file_uri(path: &Path) -> String {
    format!(
        "file://{}",
        percent_encoding::utf8_percent_encode(&path.to_string_lossy(), LSP_PATH)
    )
}

/// The file an LSP document URI names: its percent-decoded path (LSP URIs
/// are always encoded), normalized as [`PathInput`] does; `None` for plain
/// paths and other schemes (`untitled:`).
pub fn encoded_uri_path(uri: &str) -> Option<std::sync::Arc<Path>> {
    if !uri
        .get(..5)
        .is_some_and(|s| s.eq_ignore_ascii_case("file:"))
    {
        return None;
    }
    PathInput::parse(uri)?
        .candidates()
        .last()
        .map(std::sync::Arc::from)
}

/// The absolute path(s) a client's `uri` or `filePath` argument may name; see
/// the [module documentation](self) for the rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathInput {
    first: PathBuf,
    second: Option<PathBuf>,
}

impl PathInput {
    /// Reads a raw or percent-encoded `file://` URI or an absolute path;
    /// `None` when the input names no local absolute path.
    pub fn parse(input: &str) -> Option<Self> {
        let rest = match strip_file_scheme(input) {
            // A plain path: taken as is.
            Scheme::NotFile => return Self::from_readings(clean(Path::new(input)), None),
            Scheme::NoLocalPath => return None,
            Scheme::Path(rest) => rest,
        };
        let raw = clean(Path::new(rest));
        let decoded_bytes: Vec<u8> = percent_encoding::percent_decode_str(rest).collect();
        let decoded = if decoded_bytes == rest.as_bytes() {
            None
        } else {
            clean(&path_from_bytes(&decoded_bytes))
        };
        Self::from_readings(raw, decoded)
    }

    fn from_readings(first: Option<PathBuf>, second: Option<PathBuf>) -> Option<Self> {
        match (first, second) {
            (Some(first), second) => {
                let second = second.filter(|s| *s != first);
                Some(Self { first, second })
            }
            (None, Some(second)) => Some(Self {
                first: second,
                second: None,
            }),
            (None, None) => None,
        }
    }

    /// The readings, in the order a lookup should try them (one or two).
    pub fn candidates(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.first.as_path()).chain(self.second.as_deref())
    }

    /// The first reading.
    pub fn path(&self) -> &Path {
        &self.first
    }
}

/// What an input's scheme says about it.
enum Scheme<'a> {
    /// Not a `file:` URI.
    NotFile,
    /// A `file:` URI naming no local path (another host, no path).
    NoLocalPath,
    /// A `file:` URI; its path part, still encoded.
    Path(&'a str),
}

fn strip_file_scheme(input: &str) -> Scheme<'_> {
    let Some(scheme) = input.get(..5) else {
        return Scheme::NotFile;
    };
    if !scheme.eq_ignore_ascii_case("file:") {
        return Scheme::NotFile;
    }
    let rest = &input[5..];
    let Some(after) = rest.strip_prefix("//") else {
        // `file:/abs`: no authority.
        return if rest.starts_with('/') {
            Scheme::Path(rest)
        } else {
            Scheme::NoLocalPath
        };
    };
    let slash = after.find('/').unwrap_or(after.len());
    let (host, path) = after.split_at(slash);
    if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) || path.is_empty() {
        return Scheme::NoLocalPath;
    }
    Scheme::Path(windows_drive(path))
}

/// `/C:/dir` → `C:/dir` on Windows; unchanged elsewhere.
fn windows_drive(path: &str) -> &str {
    if cfg!(windows) {
        let bytes = path.as_bytes();
        if bytes.len() >= 3
            && bytes[0] == b'/'
            && bytes[1].is_ascii_alphabetic()
            && bytes[2] == b':'
        {
            return &path[1..];
        }
    }
    path
}

#[cfg(unix)]
fn path_from_bytes(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

/// Lexical normalization of an absolute path; `None` for relative paths and
/// paths containing NUL.
fn clean(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() || path.as_os_str().as_encoded_bytes().contains(&0) {
        return None;
    }
    // Most paths are clean already: taken as they are.
    #[cfg(unix)]
    if is_clean(path.as_os_str().as_encoded_bytes()) {
        return Some(path.to_path_buf());
    }
    Some(clean_components(path))
}

/// An absolute path rebuilt from its components, `.` dropped and `..`
/// applied.
fn clean_components(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => out.push(component),
            Component::CurDir => {}
            Component::ParentDir => {
                // `pop` refuses to remove the root: `/..` is `/`.
                out.pop();
            }
        }
    }
    out
}

/// Whether an absolute Unix path is what [`clean`] makes of it: no empty,
/// `.` or `..` component, and no separator at the end (`/` alone aside).
#[cfg(unix)]
pub(crate) fn is_clean(bytes: &[u8]) -> bool {
    let Some(rest) = bytes.strip_prefix(b"/") else {
        return false;
    };
    rest.is_empty()
        || rest
            .split(|b| *b == b'/')
            .all(|part| !matches!(part, b"" | b"." | b".."))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lsp_uris_are_percent_encoded_both_ways() {
        let path = Path::new("/w/a b/ü#1%.py");
        let uri = encoded_file_uri(path);
        assert_eq!(uri, "file:///w/a%20b/%C3%BC%231%25.py");
        assert_eq!(encoded_uri_path(&uri).as_deref(), Some(path));
        assert_eq!(
            encoded_uri_path("file:///a/work%20space/x.c").as_deref(),
            Some(Path::new("/a/work space/x.c"))
        );
        assert_eq!(
            encoded_uri_path("FILE:///x").as_deref(),
            Some(Path::new("/x"))
        );
        assert_eq!(
            encoded_uri_path("file://localhost/x").as_deref(),
            Some(Path::new("/x"))
        );
        assert_eq!(encoded_uri_path("untitled:Untitled-1"), None);
        assert_eq!(encoded_uri_path("/plain/path"), None);
    }

    fn readings(input: &str) -> Vec<String> {
        PathInput::parse(input)
            .map(|p| {
                p.candidates()
                    .map(|c| c.to_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn uris_are_file_plus_the_raw_path() {
        assert_eq!(
            file_uri(Path::new("/abs/a b#1%.rs")),
            "file:///abs/a b#1%.rs"
        );
        assert_eq!(file_uri(Path::new("/ünï/😀.rs")), "file:///ünï/😀.rs");
        assert_eq!(
            serde_json::to_string(&FileUri(Path::new("/a\"b"))).unwrap(),
            r#""file:///a\"b""#
        );
    }

    #[test]
    fn inputs_are_read_as_documented() {
        assert_eq!(readings("/abs/a.rs"), ["/abs/a.rs"]);
        assert_eq!(readings("/abs/a%20b.rs"), ["/abs/a%20b.rs"]);
        assert_eq!(readings("file:///abs/a b.rs"), ["/abs/a b.rs"]);
        assert_eq!(
            readings("file:///abs/a%20b.rs"),
            ["/abs/a%20b.rs", "/abs/a b.rs"]
        );
        assert_eq!(
            readings("FILE:///abs/%C3%BC.rs"),
            ["/abs/%C3%BC.rs", "/abs/ü.rs"]
        );
        assert_eq!(readings("file:///abs/a#b?c.rs"), ["/abs/a#b?c.rs"]);
        assert_eq!(readings("file:///abs/100%zz%"), ["/abs/100%zz%"]);
        assert_eq!(readings("file://localhost/abs/a.rs"), ["/abs/a.rs"]);
        assert_eq!(readings("file:/abs/a.rs"), ["/abs/a.rs"]);
        assert_eq!(readings("file:///abs/./x/../a.rs"), ["/abs/a.rs"]);
        assert_eq!(readings("/../../a.rs"), ["/a.rs"]);
        assert_eq!(readings("file:////abs//a.rs"), ["/abs/a.rs"]);
        assert_eq!(readings("file:///a%2e%2e/b"), ["/a%2e%2e/b", "/a../b"]);
        assert_eq!(readings("file:///a/%2e%2e/b"), ["/a/%2e%2e/b", "/b"]);
    }

    #[test]
    fn inputs_naming_no_local_path() {
        for input in [
            "",
            "a.rs",
            "./a.rs",
            "../a.rs",
            "untitled:Untitled-1",
            "file:",
            "file://",
            "file://host/share/a.rs",
            "file:relative",
            "/a\0b",
            "fil",
            "ü",
        ] {
            assert_eq!(readings(input), Vec::<String>::new(), "{input:?}");
        }
        // Only the NUL-free reading survives.
        assert_eq!(readings("file:///a\0%20"), Vec::<String>::new());
        assert_eq!(readings("file:///a%00"), ["/a%00"]);
    }

    fn segment() -> impl Strategy<Value = String> {
        proptest::string::string_regex("[a-z0-9 #%?ü😀é.\\-]{1,8}").unwrap()
    }

    fn abs_path() -> impl Strategy<Value = String> {
        proptest::collection::vec(segment(), 1..5).prop_map(|segs| format!("/{}", segs.join("/")))
    }

    proptest! {
        #[test]
        fn raw_uris_read_back_as_their_path(path in abs_path()) {
            let uri = file_uri(Path::new(&path));
            let input = PathInput::parse(&uri).unwrap();
            prop_assert_eq!(input.path(), clean(Path::new(&path)).unwrap());
        }

        #[test]
        fn encoded_uris_read_back_as_their_path(path in abs_path()) {
            const SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC.remove(b'/');
            let uri = format!("file://{}", percent_encoding::utf8_percent_encode(&path, SET));
            let input = PathInput::parse(&uri).unwrap();
            let expected = clean(Path::new(&path)).unwrap();
            prop_assert!(input.candidates().any(|c| c == expected), "{uri} → {input:?}");
        }

        #[test]
        fn plain_absolute_paths_are_never_decoded(path in abs_path()) {
            let input = PathInput::parse(&path).unwrap();
            prop_assert_eq!(input.candidates().count(), 1);
            prop_assert_eq!(input.path(), clean(Path::new(&path)).unwrap());
        }

        /// Paths taken as they are would be rebuilt byte for byte the same.
        #[test]
        fn clean_paths_are_taken_as_they_are(
            parts in proptest::collection::vec(prop_oneof![segment(), Just(String::new()), Just(".".to_owned()), Just("..".to_owned())], 0..5),
            trailing in any::<bool>(),
        ) {
            let text = format!("/{}{}", parts.join("/"), if trailing { "/" } else { "" });
            let path = Path::new(&text);
            let (taken, rebuilt) = (clean(path).unwrap(), clean_components(path));
            prop_assert_eq!(taken.as_os_str(), rebuilt.as_os_str(), "{}", text);
        }

        #[test]
        fn any_input_parses_without_panic(input in ".{0,40}") {
            if let Some(parsed) = PathInput::parse(&input) {
                for c in parsed.candidates() {
                    prop_assert!(c.is_absolute());
                    prop_assert!(!c.as_os_str().as_encoded_bytes().contains(&0));
                }
            }
            let with_scheme = format!("file://{input}");
            let _ = PathInput::parse(&with_scheme);
        }
    }
}
