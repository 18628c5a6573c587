//! Where the tests find `lsp-echo`, the fake language server of the
//! `ide-mcp-lsp-echo` crate (test-support/lsp-echo).
//!
//! Cargo names a binary to the tests of its own package only
//! (`CARGO_BIN_EXE_<name>`), so the others find it beside themselves: a
//! test runs from `<target>/<profile>/deps/`, the binary is
//! `<target>/<profile>/lsp-echo`. `cargo test --workspace` builds it (it
//! has tests of its own, and Cargo builds a package's binaries for its
//! integration tests); before a single test of another crate,
//! `cargo build -p ide-mcp-lsp-echo` does.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The path of the `lsp-echo` binary beside the running test; panics,
/// saying how to build it, where it is not built.
pub fn lsp_echo() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().expect("the running test's path");
        let mut dir = exe.parent().map(PathBuf::from).unwrap_or_default();
        if dir.file_name().is_some_and(|name| name == "deps") {
            dir.pop();
        }
        let path = dir.join(format!("lsp-echo{}", std::env::consts::EXE_SUFFIX));
        assert!(
            path.is_file(),
            "{} is not built: run `cargo build -p ide-mcp-lsp-echo` first, with the same \
             target directory (`cargo test --workspace` builds it)",
            path.display()
        );
        path.into_os_string()
            .into_string()
            .expect("the target directory's path is UTF-8")
    })
}
