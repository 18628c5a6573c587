//! The user's deny rules, read as the `claude` CLI reads them, so that a
//! file the user denied to Claude never leaves the process: not its path,
//! not its text, through no tool, resource, prompt or notification.
//!
//! The rules are the `Read(…)` and `Edit(…)` entries of `permissions.deny`
//! in every settings layer ([`Layer`]): the managed settings
//! (`managed-settings.json` and `managed-settings.d/*.json`), each
//! workspace folder's `.claude/settings.local.json` and
//! `.claude/settings.json`, and the user's `settings.json` in the CLI's
//! configuration directory. Lists merge: a rule in any layer applies. A
//! file that is not valid JSON is logged and left out; the others apply.
//!
//! Patterns are the CLI's, with gitignore's matching (through the
//! `ignore` crate):
//!
//! | pattern | relative to |
//! |---|---|
//! | `//abs/path` | the file system's root |
//! | `~/path` | the home directory |
//! | `/path` | the project (each folder for its own settings; each workspace folder for managed settings, as the CLI reads them) or, in the user's settings, the configuration directory |
//! | `./path`, `path` | each workspace folder, never the process's working directory |
//!
//! A pattern without a slash matches at any depth (`Read(.env)`,
//! `Read(./.env)`); `*`, `**` glob; a pattern naming a directory covers
//! what is below it. A bare `Read` denies every file.
//!
//! A `Read` rule hides a file ([`RuleSet::hides`]); an `Edit` rule only
//! refuses edits of it ([`RuleSet::edit_denial`], which a `Read` rule
//! refuses too). A path is matched as given (lexically normalized) and,
//! when it is or passes through a symbolic link, as it resolves: a link to
//! a denied file is denied, and a folder that is a link has its rules
//! under both names.
//!
//! A host holds one [`DenyRules`], made with [`DenyRules::watch`]: the
//! rules in force, read again within [`POLL_INTERVAL`] of a settings file
//! being created, written or removed, and hands it to the tools in the
//! [`EditorPorts`](crate::EditorPorts).
//!
//! ```
//! use std::path::{Path, PathBuf};
//! use ide_mcp_tools::deny::{DenyRules, SettingsRoots};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let ws = dir.path().join("ws");
//! std::fs::create_dir_all(ws.join(".claude")).unwrap();
//! std::fs::write(
//!     ws.join(".claude/settings.json"),
//!     r#"{"permissions": {"deny": ["Read(./.env)", "Read(./secrets/**)"]}}"#,
//! )
//! .unwrap();
//! let roots = SettingsRoots {
//!     home: None,
//!     config_dir: None,
//!     managed_dir: dir.path().join("managed"),
//! };
//! let rules = DenyRules::load(roots, vec![ws.clone()]);
//! assert!(rules.hides(&ws.join(".env")));
//! assert!(rules.hides(&ws.join("app/.env")));
//! assert!(rules.hides(&ws.join("secrets/prod/key.pem")));
//! assert!(!rules.hides(&ws.join("main.c")));
//! ```

mod pattern;
mod rules;
mod settings;
mod watch;

pub use rules::{DenyRule, RuleSet};
pub use settings::{Access, Layer, SettingsRoots};
pub use watch::{DenyRules, POLL_INTERVAL};

#[cfg(test)]
mod tests;
