//! A deny rule's path pattern, split as the `claude` CLI splits it: the
//! base it is relative to and the gitignore line matched under that base.
//!
//! | pattern | base | gitignore line |
//! |---|---|---|
//! | `//abs/x` | the file system's root | `/abs/x` |
//! | `~/x` | the home directory | `/x` |
//! | `/x` | the settings' own root ([`Base::SettingsRoot`]) | `/x` |
//! | `./x`, `x` | each workspace folder | `x` |
//!
//! The line keeps gitignore's meaning: a leading `/` anchors it at its
//! base; without a slash (a trailing one aside) it matches at any depth;
//! `*`, `**`, `?`, `[…]` glob; a pattern naming a directory covers what is
//! below it. Repeated slashes count as one, as the CLI reads them.

/// What a pattern is relative to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    /// `//abs`: the file system's root.
    FileSystemRoot,
    /// `~/x`: the user's home directory.
    Home,
    /// `/x`: the root of the settings that hold the rule (a project's
    /// folder for its own settings and for managed settings, the
    /// configuration directory for the user's).
    SettingsRoot,
    /// `./x` and bare `x`: each workspace folder (the CLI's working
    /// directory), never the process's.
    Folder,
}

/// The base of `pattern` and the gitignore line matched under it; `None`
/// for a pattern that names nothing (empty, or a negation, which a deny
/// list does not take).
pub(crate) fn split(pattern: &str) -> Option<(Base, String)> {
    let (base, line) = if let Some(rest) = pattern.strip_prefix("//") {
        (Base::FileSystemRoot, format!("/{rest}"))
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        (Base::Home, format!("/{rest}"))
    } else if pattern.starts_with('/') {
        (Base::SettingsRoot, pattern.to_owned())
    } else if let Some(rest) = pattern.strip_prefix("./") {
        (Base::Folder, rest.to_owned())
    } else {
        (Base::Folder, pattern.to_owned())
    };
    let line = collapse_slashes(&line);
    let names_something = !line.trim_matches('/').is_empty() && !line.starts_with('!');
    names_something.then_some((base, line))
}

/// `line` with each run of `/` made one.
fn collapse_slashes(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if !(c == '/' && out.ends_with('/')) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form_has_its_base() {
        for (pattern, base, line) in [
            ("//etc/secret", Base::FileSystemRoot, "/etc/secret"),
            ("//home/u/.aws/**", Base::FileSystemRoot, "/home/u/.aws/**"),
            ("~/.ssh/**", Base::Home, "/.ssh/**"),
            ("~/x", Base::Home, "/x"),
            ("/config/*.pem", Base::SettingsRoot, "/config/*.pem"),
            ("./.env", Base::Folder, ".env"),
            ("./secrets/**", Base::Folder, "secrets/**"),
            (".env", Base::Folder, ".env"),
            ("*.key", Base::Folder, "*.key"),
            ("src//a.rs", Base::Folder, "src/a.rs"),
            ("secrets/", Base::Folder, "secrets/"),
        ] {
            assert_eq!(split(pattern), Some((base, line.to_owned())), "{pattern}");
        }
    }

    #[test]
    fn empty_and_negated_patterns_name_nothing() {
        for pattern in ["", "./", "//", "~/", "/", "!secret", "./!x"] {
            assert_eq!(split(pattern), None, "{pattern}");
        }
    }
}
