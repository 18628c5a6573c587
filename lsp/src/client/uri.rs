//! `file://` URIs as language servers write them: percent-encoded.

use std::path::Path;
use std::sync::Arc;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// Bytes kept as they are in a path: RFC 3986's unreserved set and `/`.
const PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The `file://` URI of an absolute path, percent-encoded.
pub(crate) fn uri_of_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    format!("file://{}", utf8_percent_encode(&text, PATH))
}

/// The path a `file://` URI names, decoded; `None` for other schemes.
pub(crate) fn path_of_uri(uri: &str) -> Option<Arc<Path>> {
    let rest = uri
        .get(..7)
        .filter(|scheme| scheme.eq_ignore_ascii_case("file://"))
        .map(|_| &uri[7..])?;
    // `file://localhost/a` names `/a` too.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes: Vec<u8> = percent_decode_str(rest).collect();
    Some(Arc::from(path_of_bytes(bytes).as_path()))
}

/// A decoded path: any bytes on Unix, where paths are bytes; UTF-8
/// elsewhere (an invalid sequence replaced), where paths are text.
fn path_of_bytes(bytes: Vec<u8>) -> std::path::PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt as _;
        std::ffi::OsString::from_vec(bytes).into()
    }
    #[cfg(not(unix))]
    {
        String::from_utf8_lossy(&bytes).into_owned().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_encoded_uris() {
        let path = Path::new("/w/a b/ü#1%.py");
        let uri = uri_of_path(path);
        assert_eq!(uri, "file:///w/a%20b/%C3%BC%231%25.py");
        assert_eq!(&*path_of_uri(&uri).unwrap(), path);
        assert_eq!(&*path_of_uri("FILE:///x").unwrap(), Path::new("/x"));
        assert_eq!(
            &*path_of_uri("file://localhost/x").unwrap(),
            Path::new("/x")
        );
        assert!(path_of_uri("untitled:Untitled-1").is_none());
    }
}
