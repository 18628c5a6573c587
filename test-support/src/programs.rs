//! Whether a program the tests drive (an editor, a language server, the
//! `claude` CLI) is installed.

/// Whether `program` is a file in one of `PATH`'s directories.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}
