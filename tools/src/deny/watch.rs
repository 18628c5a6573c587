//! [`DenyRules`]: the rules in force, read again when a settings file
//! changes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use tokio::sync::watch;

use super::rules::{DenyRule, RuleSet};
use super::settings::{SettingsRoots, settings_files};

/// How often [`DenyRules::watch`] looks at the settings files: a rule
/// takes effect within about this long of its file being written.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Where the rules are read from.
#[derive(Clone, Debug)]
struct Source {
    roots: SettingsRoots,
    folders: Vec<PathBuf>,
}

/// The user's deny rules in force, shared by everything that lets the
/// editor's content out of the process: one in a host's state, consulted
/// by every tool, resource, prompt and notification.
///
/// Reads are wait-free (an [`ArcSwap`] load). A host makes it with
/// [`watch`](Self::watch), which reads the settings again when one of
/// them is created (with its `.claude/` directory), written or removed;
/// [`none`](Self::none) (the default) denies nothing.
#[derive(Debug)]
pub struct DenyRules {
    current: ArcSwap<RuleSet>,
    source: Option<Source>,
    /// The generation of `current`, one more at each change.
    changed: watch::Sender<u64>,
}

impl Default for DenyRules {
    fn default() -> Self {
        Self::fixed(RuleSet::empty())
    }
}

impl DenyRules {
    /// No rules, ever.
    pub fn none() -> Arc<Self> {
        Arc::default()
    }

    /// These rules, never read again.
    pub fn fixed(rules: RuleSet) -> Self {
        Self {
            current: ArcSwap::from_pointee(rules),
            source: None,
            changed: watch::Sender::new(0),
        }
    }

    /// The rules of `roots`' settings and `folders`' (absolute), read now
    /// and again at each [`reload`](Self::reload); nothing watches them.
    pub fn load(roots: SettingsRoots, folders: Vec<PathBuf>) -> Arc<Self> {
        let rules = RuleSet::read(&roots, &folders);
        Arc::new(Self {
            current: ArcSwap::from_pointee(rules),
            source: Some(Source { roots, folders }),
            changed: watch::Sender::new(0),
        })
    }

    /// Like [`load`](Self::load), and read again within
    /// [`POLL_INTERVAL`] of any settings file changing, by a thread that
    /// ends when the last `Arc` is dropped.
    pub fn watch(roots: SettingsRoots, folders: Vec<PathBuf>) -> Arc<Self> {
        Self::watch_every(roots, folders, POLL_INTERVAL)
    }

    /// [`watch`](Self::watch) looking every `interval`.
    pub fn watch_every(
        roots: SettingsRoots,
        folders: Vec<PathBuf>,
        interval: Duration,
    ) -> Arc<Self> {
        let rules = Self::load(roots, folders);
        let weak = Arc::downgrade(&rules);
        let seen = rules.source.as_ref().map(fingerprint).unwrap_or_default();
        let spawned = std::thread::Builder::new()
            .name("ide-mcp-deny-rules".into())
            .spawn(move || poll(&weak, seen, interval));
        if let Err(error) = spawned {
            tracing::warn!(%error, "cannot watch the settings files: the deny rules are read once");
        }
        rules
    }

    /// The rules in force now.
    pub fn current(&self) -> Arc<RuleSet> {
        self.current.load_full()
    }

    /// Whether `path` (absolute) is hidden from agents now.
    pub fn hides(&self, path: &Path) -> bool {
        let rules = self.current.load();
        !rules.is_empty() && rules.hides(path)
    }

    /// The `Read` rule hiding `path` now, if any.
    pub fn read_denial(&self, path: &Path) -> Option<DenyRule> {
        self.current.load().read_denial(path).cloned()
    }

    /// The `Read` or `Edit` rule denying edits of `path` now, if any.
    pub fn edit_denial(&self, path: &Path) -> Option<DenyRule> {
        self.current.load().edit_denial(path).cloned()
    }

    /// The generation of the rules: one more at each change. Results
    /// cached by the data's generation add it to their key.
    pub fn generation(&self) -> u64 {
        *self.changed.borrow()
    }

    /// A receiver that sees each new [`generation`](Self::generation).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Reads the settings again now; whether the rules changed.
    pub fn reload(&self) -> bool {
        let Some(source) = &self.source else {
            return false;
        };
        let rules = RuleSet::read(&source.roots, &source.folders);
        if rules.same_rules(&self.current.load()) {
            return false;
        }
        tracing::info!(
            rules = ?rules.rules().map(ToString::to_string).collect::<Vec<_>>(),
            "the deny rules changed"
        );
        self.current.store(Arc::new(rules));
        self.changed.send_modify(|generation| *generation += 1);
        true
    }
}

/// Each settings file's modification time and length, `None` when it
/// does not exist: what changes when a file is created, written or
/// removed.
type Fingerprint = Vec<(PathBuf, Option<(SystemTime, u64)>)>;

fn fingerprint(source: &Source) -> Fingerprint {
    settings_files(&source.roots, &source.folders)
        .into_iter()
        .map(|file| {
            let stamp = std::fs::metadata(&file.path)
                .ok()
                .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
            (file.path, stamp)
        })
        .collect()
}

/// Looks at the settings files every `interval` while the rules live,
/// and reads them again when their fingerprint changes.
fn poll(rules: &Weak<DenyRules>, mut seen: Fingerprint, interval: Duration) {
    loop {
        std::thread::sleep(interval);
        let Some(rules) = rules.upgrade() else {
            return;
        };
        let Some(source) = &rules.source else {
            return;
        };
        let now = fingerprint(source);
        if now != seen {
            rules.reload();
            seen = now;
        }
    }
}
