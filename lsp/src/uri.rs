//! Document URIs: LSP's percent-encoded `file://` URIs to paths and back.

use std::path::Path;
use std::sync::Arc;

use ide_mcp_tools::uri::PathInput;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// What a path keeps unencoded in a `file://` URI.
const PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The percent-encoded `file://` URI of `path`, as LSP writes them.
pub(crate) fn encoded_file_uri(path: &Path) -> String {
    format!(
        "file://{}",
        utf8_percent_encode(&path.to_string_lossy(), PATH)
    )
}

/// The file a document URI names: its percent-decoded path (LSP URIs are
/// always encoded); `None` for other schemes (`untitled:`).
pub(crate) fn uri_path(uri: &str) -> Option<Arc<Path>> {
    if !uri
        .get(..5)
        .is_some_and(|s| s.eq_ignore_ascii_case("file:"))
    {
        return None;
    }
    PathInput::parse(uri)?.candidates().last().map(Arc::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_and_paths() {
        assert_eq!(
            uri_path("file:///a/work%20space/x.c").as_deref(),
            Some(Path::new("/a/work space/x.c"))
        );
        assert_eq!(uri_path("untitled:Untitled-1"), None);
        assert_eq!(uri_path("/plain/path"), None);
        let path = Path::new("/a/work space/ü#1%.c");
        assert_eq!(
            encoded_file_uri(path),
            "file:///a/work%20space/%C3%BC%231%25.c"
        );
        assert_eq!(uri_path(&encoded_file_uri(path)).as_deref(), Some(path));
    }
}
