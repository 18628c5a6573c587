//! What the host knows of the common language servers: which files each
//! diagnoses, whether it diagnoses the whole workspace on its own, and the
//! settings it is given through `workspace/configuration`.

use std::path::Path;

use serde_json::{Value, json};

/// What the host knows of one language server, found by its program name.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerKind {
    /// A short name for logs and for diagnostics without a `source`.
    pub name: String,
    /// The file extensions it diagnoses; empty means every file.
    pub extensions: &'static [&'static str],
    /// Whether it diagnoses the whole workspace without `didOpen`
    /// (pyright in `workspace` mode, rust-analyzer's check).
    pub whole_workspace: bool,
    /// What `workspace/configuration` answers, by section.
    pub settings: Value,
}

const PYTHON: &[&str] = &["py", "pyi"];
const C_FAMILY: &[&str] = &[
    "c", "h", "cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "m", "mm",
];
const TYPESCRIPT: &[&str] = &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"];

impl ServerKind {
    /// The kind of the server started by `program` (a path or a name).
    pub fn of(program: &str) -> Self {
        let name = Path::new(program)
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or(program);
        let (short, extensions, whole_workspace, settings) = match name {
            "pyright-langserver" | "basedpyright-langserver" | "pyright" => (
                "pyright",
                PYTHON,
                true,
                // Every file of the project, not only the open ones.
                json!({"python": {"analysis": {"diagnosticMode": "workspace"}},
                       "basedpyright": {"analysis": {"diagnosticMode": "workspace"}}}),
            ),
            "clangd" => ("clangd", C_FAMILY, false, json!({})),
            "rust-analyzer" => (
                "rust-analyzer",
                &["rs"][..],
                true,
                json!({"rust-analyzer": {"checkOnSave": true}}),
            ),
            "typescript-language-server" => ("typescript", TYPESCRIPT, false, json!({})),
            "gopls" => ("gopls", &["go"][..], false, json!({})),
            other => (other, &[][..], false, json!({})),
        };
        Self {
            name: short.to_owned(),
            extensions,
            whole_workspace,
            settings,
        }
    }

    /// Whether this server diagnoses `path`.
    pub fn handles(&self, path: &Path) -> bool {
        self.extensions.is_empty()
            || path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| self.extensions.iter().any(|x| x.eq_ignore_ascii_case(e)))
    }

    /// The answer to one `workspace/configuration` item: the value at the
    /// dotted `section` (`python.analysis`), `null` when unknown.
    pub fn setting(&self, section: Option<&str>) -> Value {
        let Some(section) = section.filter(|s| !s.is_empty()) else {
            return self.settings.clone();
        };
        section
            .split('.')
            .try_fold(&self.settings, |value, key| value.get(key))
            .cloned()
            .unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pyright_is_asked_for_the_whole_workspace() {
        let kind = ServerKind::of("/usr/bin/pyright-langserver");
        assert_eq!(kind.name, "pyright");
        assert!(kind.whole_workspace);
        assert_eq!(
            kind.setting(Some("python.analysis")),
            json!({"diagnosticMode": "workspace"})
        );
        assert_eq!(kind.setting(Some("python.pythonPath")), Value::Null);
        assert!(kind.handles(Path::new("/w/a.py")));
        assert!(!kind.handles(Path::new("/w/a.rs")));
    }

    #[test]
    fn unknown_servers_get_every_file_and_no_settings() {
        let kind = ServerKind::of("my-ls");
        assert_eq!(kind.name, "my-ls");
        assert!(kind.handles(Path::new("/w/anything.xyz")));
        assert!(!kind.whole_workspace);
        assert_eq!(kind.setting(Some("a.b")), Value::Null);
        assert!(ServerKind::of("clangd").handles(Path::new("/w/x.H")));
    }
}
