//! One reading of the deny rules: every layer's `Read`/`Edit` entries,
//! each compiled into gitignore matchers under the bases it applies to.

use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::pattern::{Base, split};
use super::settings::{Access, Layer, SettingsFile, SettingsRoots, deny_entries, settings_files};

/// A deny rule as the user wrote it, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DenyRule {
    /// What it denies.
    pub access: Access,
    /// The entry as written: `Read(./.env)`.
    pub rule: Arc<str>,
    /// The layer of the settings file that holds it.
    pub layer: Layer,
    /// The settings file that holds it.
    pub settings: Arc<Path>,
}

impl fmt::Display for DenyRule {
    /// `` `Read(./.env)` in /ws/.claude/settings.json ``.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` in {}", self.rule, self.settings.display())
    }
}

impl DenyRule {
    /// The message refusing `what` (`openDiff refused`, `not asked`) on
    /// `path` (a path the caller gave) because of this rule.
    pub fn refusal(&self, what: &str, path: &str) -> String {
        format!("{what}: {path} is denied by the user's deny rule {self}")
    }
}

/// A rule and its matchers, one per base it applies under.
#[derive(Clone, Debug)]
struct Compiled {
    rule: DenyRule,
    matchers: Vec<Gitignore>,
}

impl Compiled {
    fn matches(&self, path: &Path) -> bool {
        self.matchers.iter().any(|matcher| {
            path.strip_prefix(matcher.path()).is_ok_and(|relative| {
                matcher
                    .matched_path_or_any_parents(relative, false)
                    .is_ignore()
            })
        })
    }
}

/// The deny rules of every settings layer, read once: which files are
/// hidden from agents (a `Read` rule) and which may not be edited (a
/// `Read` or an `Edit` rule). Rules merge across layers; any one that
/// matches denies.
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    rules: Vec<Compiled>,
}

impl RuleSet {
    /// No rules: nothing is denied.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Reads every layer's settings under `roots` for `folders` (absolute
    /// paths). A file that is missing adds nothing; one that cannot be
    /// read or parsed is logged and adds nothing, the others still apply.
    pub fn read(roots: &SettingsRoots, folders: &[PathBuf]) -> Self {
        let mut rules = Vec::new();
        for file in settings_files(roots, folders) {
            let text = match std::fs::read_to_string(&file.path) {
                Ok(text) => text,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                Err(error) => {
                    tracing::warn!(settings = %file.path.display(), %error, "cannot read the deny rules of a settings file");
                    continue;
                }
            };
            match deny_entries(&text) {
                Ok(entries) => {
                    let settings: Arc<Path> = Arc::from(file.path.as_path());
                    rules.extend(entries.into_iter().filter_map(|entry| {
                        let rule = DenyRule {
                            access: entry.access,
                            rule: Arc::from(entry.text),
                            layer: file.layer,
                            settings: Arc::clone(&settings),
                        };
                        compile(rule, entry.pattern.as_deref(), &file, roots, folders)
                    }));
                }
                Err(error) => {
                    tracing::warn!(settings = %file.path.display(), %error, "a settings file is not valid JSON: its deny rules are left out, the other files' still apply");
                }
            }
        }
        Self { rules }
    }

    /// Whether there is no rule at all.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules, in the order of their layers and files.
    pub fn rules(&self) -> impl Iterator<Item = &DenyRule> {
        self.rules.iter().map(|compiled| &compiled.rule)
    }

    /// Whether `path` (absolute) is hidden from agents: a `Read` rule
    /// matches it.
    pub fn hides(&self, path: &Path) -> bool {
        self.read_denial(path).is_some()
    }

    /// The first `Read` rule that matches `path` (absolute).
    pub fn read_denial(&self, path: &Path) -> Option<&DenyRule> {
        self.denial(path, |access| access == Access::Read)
    }

    /// The first `Read` or `Edit` rule that matches `path` (absolute):
    /// an edit of it is refused (the CLI's `Read` rules deny editing too).
    pub fn edit_denial(&self, path: &Path) -> Option<&DenyRule> {
        self.read_denial(path)
            .or_else(|| self.denial(path, |access| access == Access::Edit))
    }

    fn denial(&self, path: &Path, access: impl Fn(Access) -> bool) -> Option<&DenyRule> {
        if self.rules.is_empty() || !path.is_absolute() {
            return None;
        }
        let first = |path: &Path| {
            self.rules
                .iter()
                .find(|compiled| access(compiled.rule.access) && compiled.matches(path))
                .map(|compiled| &compiled.rule)
        };
        let path = normal(path);
        // A link to a denied file is denied: the file it resolves to is
        // matched too (a path that does not exist resolves to nothing).
        first(&path).or_else(|| {
            let real = std::fs::canonicalize(&path).ok()?;
            (real != *path).then(|| first(&real)).flatten()
        })
    }

    /// Whether `other` holds the same rules, in the same order.
    pub fn same_rules(&self, other: &Self) -> bool {
        self.rules().eq(other.rules())
    }
}

/// `rule` compiled under each base its `pattern` applies to; `None` when
/// it applies nowhere (a pattern naming nothing, a base that is missing).
fn compile(
    rule: DenyRule,
    pattern: Option<&str>,
    file: &SettingsFile,
    roots: &SettingsRoots,
    folders: &[PathBuf],
) -> Option<Compiled> {
    // The bare tool name denies every file.
    let (base, line) = split(pattern.unwrap_or("//**"))?;
    let bases: Vec<&Path> = match base {
        Base::FileSystemRoot => vec![Path::new("/")],
        Base::Home => roots.home.as_deref().into_iter().collect(),
        Base::SettingsRoot => match &file.root {
            Some(root) => vec![root.as_path()],
            None => folders.iter().map(PathBuf::as_path).collect(),
        },
        Base::Folder => folders.iter().map(PathBuf::as_path).collect(),
    };
    // Each base also as it resolves, so that a file reached through a
    // link (or a folder that is one) is matched where it really is.
    let mut bases: Vec<PathBuf> = bases.into_iter().map(Path::to_path_buf).collect();
    let resolved: Vec<PathBuf> = bases
        .iter()
        .filter_map(|base| std::fs::canonicalize(base).ok())
        .filter(|real| !bases.contains(real))
        .collect();
    bases.extend(resolved);
    let matchers: Vec<Gitignore> = bases
        .into_iter()
        .filter_map(|base| {
            let mut builder = GitignoreBuilder::new(base);
            if let Err(error) = builder.add_line(Some(file.path.clone()), &line) {
                tracing::warn!(rule = %rule, %error, "a deny rule's pattern is not a valid glob");
                return None;
            }
            builder.build().ok()
        })
        .collect();
    (!matchers.is_empty()).then_some(Compiled { rule, matchers })
}

/// `path` with `.` dropped and `..` applied, lexically.
fn normal(path: &Path) -> std::borrow::Cow<'_, Path> {
    let clean = path
        .components()
        .all(|c| !matches!(c, Component::CurDir | Component::ParentDir));
    if clean {
        return path.into();
    }
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out.into()
}
