//! The settings layers the `claude` CLI reads its permission rules from,
//! and the `Read(…)`/`Edit(…)` entries of their `permissions.deny` lists.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Where the settings layers live; injectable, so that tests use
/// directories of their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsRoots {
    /// The home directory (`~/x` patterns); `None` when there is none.
    pub home: Option<PathBuf>,
    /// The CLI's configuration directory, holding the user's
    /// `settings.json` (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub config_dir: Option<PathBuf>,
    /// The directory of the managed settings (`managed-settings.json` and
    /// `managed-settings.d/*.json`): `/etc/claude-code` on Linux.
    pub managed_dir: PathBuf,
}

impl SettingsRoots {
    /// The roots as the CLI finds them in this process's environment.
    pub fn from_env() -> Self {
        let home = std::env::home_dir();
        let config_dir = std::env::var_os("CLAUDE_CONFIG_DIR")
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|home| home.join(".claude")));
        Self {
            home,
            config_dir,
            managed_dir: PathBuf::from(MANAGED_DIR),
        }
    }

    /// The same roots with `config_dir` as the configuration directory
    /// (a host that was given the one its agents use).
    #[must_use]
    pub fn with_config_dir(mut self, config_dir: impl Into<PathBuf>) -> Self {
        self.config_dir = Some(config_dir.into());
        self
    }
}

/// The managed settings' directory on this system.
const MANAGED_DIR: &str = if cfg!(target_os = "macos") {
    "/Library/Application Support/ClaudeCode"
} else if cfg!(windows) {
    "C:\\Program Files\\ClaudeCode"
} else {
    "/etc/claude-code"
};

/// A settings layer, in the CLI's order of precedence. Deny lists merge
/// across layers: a rule in any of them applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// `managed-settings.json` and `managed-settings.d/*.json`.
    Managed,
    /// A workspace folder's `.claude/settings.local.json`.
    Local,
    /// A workspace folder's `.claude/settings.json`.
    Project,
    /// The user's `settings.json` in the configuration directory.
    User,
}

/// One settings file that may hold rules, and the root its `/x`
/// patterns are relative to (`None`: each workspace folder).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SettingsFile {
    pub(crate) layer: Layer,
    pub(crate) path: PathBuf,
    pub(crate) root: Option<PathBuf>,
}

/// Every settings file of every layer, in precedence order, whether it
/// exists or not (a file that does not exist now may be created later);
/// `managed-settings.d`'s `*.json` files as they are now, by name.
pub(crate) fn settings_files(roots: &SettingsRoots, folders: &[PathBuf]) -> Vec<SettingsFile> {
    let file = |layer, path: PathBuf, root: Option<&Path>| SettingsFile {
        layer,
        path,
        root: root.map(Path::to_path_buf),
    };
    // Managed `/x` patterns are relative to the project, as the CLI
    // reads them: here each workspace folder.
    let mut files = vec![file(
        Layer::Managed,
        roots.managed_dir.join("managed-settings.json"),
        None,
    )];
    files.extend(
        drop_ins(&roots.managed_dir.join("managed-settings.d"))
            .into_iter()
            .map(|path| file(Layer::Managed, path, None)),
    );
    for folder in folders {
        let dir = folder.join(".claude");
        files.push(file(
            Layer::Local,
            dir.join("settings.local.json"),
            Some(folder),
        ));
        files.push(file(
            Layer::Project,
            dir.join("settings.json"),
            Some(folder),
        ));
    }
    if let Some(config_dir) = &roots.config_dir {
        files.push(file(
            Layer::User,
            config_dir.join("settings.json"),
            Some(config_dir),
        ));
    }
    files
}

/// The `*.json` files of `dir`, sorted by name; none when it cannot be read.
fn drop_ins(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

/// What a rule denies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// `Read(…)`: reading the file (and, in the CLI, editing it too).
    Read,
    /// `Edit(…)`: editing the file.
    Edit,
}

/// One `Read(…)` or `Edit(…)` entry of a deny list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) access: Access,
    /// The pattern between the parentheses; `None` for the bare tool name
    /// (`"Read"`), which denies every file.
    pub(crate) pattern: Option<String>,
    /// The entry as written (trimmed).
    pub(crate) text: String,
}

#[derive(Deserialize)]
struct Settings {
    #[serde(default)]
    permissions: Option<Permissions>,
}

#[derive(Deserialize)]
struct Permissions {
    #[serde(default)]
    deny: Option<Vec<serde_json::Value>>,
}

/// The `Read` and `Edit` entries of `json`'s `permissions.deny`, in order;
/// other tools' entries are left out, and so are entries that are not
/// strings. `Err` says why `json` is not a settings object.
pub(crate) fn deny_entries(json: &str) -> Result<Vec<Entry>, String> {
    let settings: Settings = serde_json::from_str(json).map_err(|error| error.to_string())?;
    let deny = settings
        .permissions
        .and_then(|p| p.deny)
        .unwrap_or_default();
    Ok(deny
        .iter()
        .filter_map(serde_json::Value::as_str)
        .filter_map(entry)
        .collect())
}

/// `Read(pattern)`, `Edit(pattern)`, `Read` or `Edit`.
fn entry(text: &str) -> Option<Entry> {
    let text = text.trim();
    let (tool, pattern) = match text.split_once('(') {
        Some((tool, rest)) => (tool, Some(rest.strip_suffix(')')?.trim().to_owned())),
        None => (text, None),
    };
    let access = match tool.trim() {
        "Read" => Access::Read,
        "Edit" => Access::Edit,
        _ => return None,
    };
    Some(Entry {
        access,
        pattern,
        text: text.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(access: Access, pattern: Option<&str>, text: &str) -> Entry {
        Entry {
            access,
            pattern: pattern.map(str::to_owned),
            text: text.to_owned(),
        }
    }

    #[test]
    fn read_and_edit_entries_are_taken_and_the_rest_left() {
        let json = r#"{"permissions": {"allow": ["Read(./a)"], "deny": [
            "Read(./.env)", " Edit(src/**) ", "Bash(rm -rf *)", "WebFetch", 7,
            "Read", "Read(./a", "Read(  ./b  )"
        ]}, "model": "x"}"#;
        assert_eq!(
            deny_entries(json).unwrap(),
            [
                entry(Access::Read, Some("./.env"), "Read(./.env)"),
                entry(Access::Edit, Some("src/**"), "Edit(src/**)"),
                entry(Access::Read, None, "Read"),
                entry(Access::Read, Some("./b"), "Read(  ./b  )"),
            ]
        );
    }

    #[test]
    fn settings_without_rules_have_none_and_bad_json_says_why() {
        for json in [
            "{}",
            r#"{"permissions": {}}"#,
            r#"{"permissions": {"deny": []}}"#,
        ] {
            assert_eq!(deny_entries(json), Ok(Vec::new()), "{json}");
        }
        assert!(deny_entries("{\"permissions\": ").is_err());
        assert!(deny_entries(r#"{"permissions": {"deny": "Read(x)"}}"#).is_err());
    }

    #[test]
    fn every_layer_has_its_files_in_precedence_order() {
        let roots = SettingsRoots {
            home: Some("/h".into()),
            config_dir: Some("/h/.claude".into()),
            managed_dir: "/nonexistent/managed".into(),
        };
        let files = settings_files(&roots, &["/w/a".into(), "/w/b".into()]);
        let listed: Vec<_> = files
            .iter()
            .map(|f| (f.layer, f.path.to_str().unwrap(), f.root.as_deref()))
            .collect();
        assert_eq!(
            listed,
            [
                (
                    Layer::Managed,
                    "/nonexistent/managed/managed-settings.json",
                    None
                ),
                (
                    Layer::Local,
                    "/w/a/.claude/settings.local.json",
                    Some(Path::new("/w/a"))
                ),
                (
                    Layer::Project,
                    "/w/a/.claude/settings.json",
                    Some(Path::new("/w/a"))
                ),
                (
                    Layer::Local,
                    "/w/b/.claude/settings.local.json",
                    Some(Path::new("/w/b"))
                ),
                (
                    Layer::Project,
                    "/w/b/.claude/settings.json",
                    Some(Path::new("/w/b"))
                ),
                (
                    Layer::User,
                    "/h/.claude/settings.json",
                    Some(Path::new("/h/.claude"))
                ),
            ]
        );
    }
}
