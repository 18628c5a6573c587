//! The rules read from settings files in directories of the tests' own:
//! each path form against its base, the layers merged, a broken layer
//! left out, and changes seen by the watcher.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::*;

/// A home, a configuration directory, a managed directory and two
/// workspace folders, all under one temporary directory.
struct Dirs {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Dirs {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        for dir in ["home/.claude", "managed", "ws/a", "ws/b", "elsewhere"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        Self { _tmp: tmp, root }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn roots(&self) -> SettingsRoots {
        SettingsRoots {
            home: Some(self.path("home")),
            config_dir: Some(self.path("home/.claude")),
            managed_dir: self.path("managed"),
        }
    }

    fn folders(&self) -> Vec<PathBuf> {
        vec![self.path("ws/a"), self.path("ws/b")]
    }

    /// Writes `settings` (relative to the root) denying `rules`.
    fn deny(&self, settings: &str, rules: &[&str]) {
        let json = serde_json::json!({"permissions": {"deny": rules}});
        self.write(settings, &json.to_string());
    }

    fn write(&self, settings: &str, text: &str) {
        let path = self.path(settings);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn read(&self) -> RuleSet {
        RuleSet::read(&self.roots(), &self.folders())
    }

    /// Which of `paths` (relative to the root) the rules hide.
    fn hidden(&self, paths: &[&str]) -> Vec<String> {
        let rules = self.read();
        paths
            .iter()
            .filter(|p| rules.hides(&self.path(p)))
            .map(|p| (*p).to_owned())
            .collect()
    }
}

const PROJECT: &str = "ws/a/.claude/settings.json";

#[test]
fn each_path_form_is_resolved_against_its_base() {
    let dirs = Dirs::new();
    let abs = dirs.path("elsewhere/abs.txt");
    let absolute = format!("Read(/{})", abs.display());
    // (the rule, in the project settings of folder a; hidden; not hidden)
    let table: &[(&str, &[&str], &[&str])] = &[
        (
            &absolute,
            &["elsewhere/abs.txt"],
            &["ws/a/elsewhere/abs.txt"],
        ),
        (
            "Read(~/.aws/**)",
            &["home/.aws/credentials"],
            &["ws/a/.aws/credentials"],
        ),
        (
            "Read(/config/*.pem)",
            &["ws/a/config/k.pem"],
            &["ws/b/config/k.pem", "ws/a/x/config/k.pem"],
        ),
        (
            "Read(./.env)",
            &["ws/a/.env", "ws/a/app/.env", "ws/b/.env"],
            &["elsewhere/.env", "ws/a/.env.example"],
        ),
        (".env", &[], &["ws/a/.env"]),
        (
            "Read(*.key)",
            &["ws/a/k.key", "ws/b/deep/er/k.key"],
            &["home/k.key", "ws/a/k.keys"],
        ),
        (
            "Read(./secrets/**)",
            &["ws/a/secrets/prod/db.txt", "ws/b/secrets/x"],
            &["ws/a/src/secrets.rs"],
        ),
        (
            "Read(./secrets)",
            &["ws/a/secrets/x", "ws/a/deep/secrets/y"],
            &["ws/a/secretsx"],
        ),
        (
            "Read(src/*.rs)",
            &["ws/a/src/main.rs"],
            &["ws/a/src/sub/main.rs", "ws/a/x/src/main.rs"],
        ),
        (
            "Read(src/**/*.rs)",
            &["ws/a/src/main.rs", "ws/a/src/sub/main.rs"],
            &["ws/a/src/main.c"],
        ),
        ("Read", &["ws/a/main.c", "elsewhere/abs.txt"], &[]),
        ("Edit(./.env)", &[], &["ws/a/.env"]),
        ("Bash(cat ./.env)", &[], &["ws/a/.env"]),
    ];
    for &(rule, hidden, shown) in table {
        dirs.deny(PROJECT, &[rule]);
        let all: Vec<&str> = hidden.iter().chain(shown).copied().collect();
        assert_eq!(dirs.hidden(&all), hidden, "{rule}");
    }
}

#[test]
fn a_link_to_a_denied_file_is_denied_and_a_linked_folder_keeps_its_rules() {
    use std::os::unix::fs::symlink;
    let dirs = Dirs::new();
    dirs.deny(PROJECT, &["Read(./.env)", "Read(./secrets/**)"]);
    std::fs::write(dirs.path("ws/a/.env"), "KEY=1").unwrap();
    std::fs::create_dir_all(dirs.path("ws/a/secrets")).unwrap();
    std::fs::write(dirs.path("ws/a/secrets/db.txt"), "pw").unwrap();
    std::fs::write(dirs.path("ws/a/main.c"), "int x;").unwrap();
    // Links inside the folder, to a denied file and to a denied directory;
    // one outside it; and the folder itself reached through a link.
    symlink(dirs.path("ws/a/.env"), dirs.path("ws/a/env.txt")).unwrap();
    symlink(dirs.path("ws/a/secrets"), dirs.path("ws/a/open")).unwrap();
    symlink(dirs.path("ws/a/.env"), dirs.path("elsewhere/env")).unwrap();
    symlink(dirs.path("ws/a/main.c"), dirs.path("ws/a/main-link.c")).unwrap();
    let rules = dirs.read();
    for hidden in ["ws/a/env.txt", "ws/a/open/db.txt", "elsewhere/env"] {
        assert!(rules.hides(&dirs.path(hidden)), "{hidden}");
    }
    for shown in ["ws/a/main-link.c", "ws/a/main.c", "ws/a/missing.txt"] {
        assert!(!rules.hides(&dirs.path(shown)), "{shown}");
    }

    // A workspace folder opened by a link's name: its rules apply to the
    // files under either name.
    let link = dirs.path("elsewhere/ws-link");
    symlink(dirs.path("ws/a"), &link).unwrap();
    let rules = RuleSet::read(&dirs.roots(), std::slice::from_ref(&link));
    assert!(rules.hides(&link.join(".env")));
    assert!(rules.hides(&dirs.path("ws/a/.env")));
    assert!(!rules.hides(&link.join("main.c")));
}

#[test]
fn slash_patterns_of_the_user_are_under_the_config_dir_and_of_managed_under_each_folder() {
    let dirs = Dirs::new();
    dirs.deny("home/.claude/settings.json", &["Read(/notes/**)"]);
    assert_eq!(
        dirs.hidden(&["home/.claude/notes/a.md", "ws/a/notes/a.md"]),
        ["home/.claude/notes/a.md"]
    );
    std::fs::remove_file(dirs.path("home/.claude/settings.json")).unwrap();
    dirs.deny("managed/managed-settings.json", &["Read(/notes/**)"]);
    assert_eq!(
        dirs.hidden(&["ws/a/notes/a.md", "ws/b/notes/a.md", "managed/notes/a.md"]),
        ["ws/a/notes/a.md", "ws/b/notes/a.md"]
    );
}

#[test]
fn every_layer_adds_its_rules_and_a_broken_one_leaves_the_others() {
    let dirs = Dirs::new();
    dirs.deny("managed/managed-settings.json", &["Read(m1)"]);
    dirs.deny("managed/managed-settings.d/10-b.json", &["Read(m3)"]);
    dirs.deny("managed/managed-settings.d/00-a.json", &["Read(m2)"]);
    dirs.write(
        "managed/managed-settings.d/notes.txt",
        r#"{"permissions": {"deny": ["Read(no)"]}}"#,
    );
    dirs.deny("ws/a/.claude/settings.local.json", &["Read(local)"]);
    dirs.deny(PROJECT, &["Read(project)", "Edit(edited)"]);
    dirs.deny("ws/b/.claude/settings.json", &["Read(/b-only)"]);
    dirs.deny("home/.claude/settings.json", &["Read(user)"]);
    let rules = dirs.read();
    let listed: Vec<(Layer, &str)> = rules.rules().map(|r| (r.layer, &*r.rule)).collect();
    assert_eq!(
        listed,
        [
            (Layer::Managed, "Read(m1)"),
            (Layer::Managed, "Read(m2)"),
            (Layer::Managed, "Read(m3)"),
            (Layer::Local, "Read(local)"),
            (Layer::Project, "Read(project)"),
            (Layer::Project, "Edit(edited)"),
            (Layer::Project, "Read(/b-only)"),
            (Layer::User, "Read(user)"),
        ]
    );
    let hidden = [
        "ws/a/m1",
        "ws/a/m2",
        "ws/b/m3",
        "ws/a/local",
        "ws/b/project",
        "ws/b/b-only",
        "ws/a/user",
    ];
    let mut all = hidden.to_vec();
    all.extend(["ws/a/b-only", "ws/a/edited", "ws/a/no"]);
    assert_eq!(dirs.hidden(&all), hidden);

    // The project's file broken: its rules go, the other layers' stay.
    dirs.write(PROJECT, "{\"permissions\": {\"deny\": [\"Read(project)\"");
    assert_eq!(
        dirs.hidden(&["ws/a/m1", "ws/a/local", "ws/a/project", "ws/a/user"]),
        ["ws/a/m1", "ws/a/local", "ws/a/user"]
    );
}

#[test]
fn edits_are_denied_by_read_and_edit_rules_and_reads_by_read_rules_only() {
    let dirs = Dirs::new();
    dirs.deny(PROJECT, &["Edit(./src/**)", "Read(./.env)"]);
    let rules = dirs.read();
    let (env, main) = (dirs.path("ws/a/.env"), dirs.path("ws/a/src/main.c"));
    assert_eq!(
        rules.edit_denial(&env).map(|r| &*r.rule),
        Some("Read(./.env)")
    );
    assert_eq!(
        rules.edit_denial(&main).map(|r| &*r.rule),
        Some("Edit(./src/**)")
    );
    assert!(rules.read_denial(&main).is_none());
    let denial = rules.read_denial(&env).unwrap();
    assert_eq!(
        denial.to_string(),
        format!("`Read(./.env)` in {}", dirs.path(PROJECT).display())
    );
    // Lexically normalized; relative paths name nothing.
    assert!(rules.hides(&dirs.path("ws/a/src/../.env")));
    assert!(!rules.hides(Path::new(".env")));
}

#[test]
fn no_settings_no_rules() {
    let dirs = Dirs::new();
    assert!(dirs.read().is_empty());
    let rules = DenyRules::none();
    assert!(!rules.hides(&dirs.path("ws/a/.env")));
    assert!(!rules.reload());
}

/// Waits, within a generous bound, until `rules` hides `path` or not.
fn until_hidden(rules: &DenyRules, path: &Path, hidden: bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while rules.hides(path) != hidden {
        assert!(
            Instant::now() < deadline,
            "{} never became hidden={hidden}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_watcher_sees_a_settings_file_created_with_its_directory_changed_and_removed() {
    let dirs = Dirs::new();
    let rules = DenyRules::watch_every(dirs.roots(), dirs.folders(), Duration::from_millis(20));
    let mut changes = rules.subscribe();
    let env = dirs.path("ws/a/.env");
    assert!(!rules.hides(&env));
    assert!(!dirs.path("ws/a/.claude").exists());

    dirs.deny(PROJECT, &["Read(./.env)"]);
    until_hidden(&rules, &env, true);
    assert!(changes.has_changed().unwrap());
    changes.mark_unchanged();

    dirs.deny(PROJECT, &["Read(./other)"]);
    until_hidden(&rules, &env, false);
    dirs.deny("home/.claude/settings.json", &["Read(//**/.env)"]);
    until_hidden(&rules, &env, true);
    std::fs::remove_file(dirs.path("home/.claude/settings.json")).unwrap();
    until_hidden(&rules, &env, false);
    assert!(rules.generation() >= 4);
}

#[test]
fn the_watcher_ends_with_the_rules() {
    let dirs = Dirs::new();
    let rules = DenyRules::watch_every(dirs.roots(), dirs.folders(), Duration::from_millis(5));
    let weak = std::sync::Arc::downgrade(&rules);
    drop(rules);
    assert!(weak.upgrade().is_none());
}
