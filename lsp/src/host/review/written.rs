//! Writes made without a review (the CLI's auto mode, accept-edits mode, a
//! `Write`), shown after the fact: once the editor's buffer shows the new
//! text, each changed hunk (a maximal run of changed lines, from the
//! buffer's text before the write to the new text) is marked in it, to
//! keep or to revert.
//!
//! A [`Written`] knows the text the buffer must show once the host's own
//! edits have landed (the reload's, a revert's): a buffer showing it is the
//! host's doing; one still showing the text before is an edit on its way;
//! anything else is the user typing, which dismisses every marker. A revert
//! restores the hunk's old lines in the buffer only; the file on disk is
//! never touched (the user saves if they want it).

use std::path::PathBuf;

use ide_mcp_tools::Agent;
use ide_mcp_tools::review::hunks;

use crate::observer::overlay::{HunkView, ReviewView, ViewKind};

/// At most this many characters of a change's old lines are quoted in its
/// message.
const QUOTED_MAX_CHARS: usize = 200;

/// One write's changes still marked in a buffer.
#[derive(Debug)]
pub(super) struct Written {
    /// The id its commands carry (shared with the reviews' ids).
    pub(super) diff: u64,
    /// The file.
    pub(super) path: PathBuf,
    /// The buffer's text once the host's edits have landed.
    text: String,
    /// The text the buffer showed before the host's edit on its way; `None`
    /// once the buffer shows `text`.
    before: Option<String>,
    /// Whether the buffer has shown `text` since the write.
    landed: bool,
    /// The changes not kept or reverted yet, in order.
    changes: Vec<Change>,
}

/// One changed hunk, by whole lines of the buffer's text.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Change {
    /// Its index among the write's changes (stable while it is marked).
    index: usize,
    /// Its first line in the new text (zero-based).
    start: u32,
    /// How many lines of the new text it holds (0: lines were deleted
    /// before `start`).
    len: u32,
    /// The lines it replaced, each with its own line terminator.
    old: String,
    /// The marker's message.
    message: String,
}

/// What a buffer's text says of a write's markers.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Seen {
    /// The buffer shows the host's edits: the markers are shown.
    Landed,
    /// The buffer still shows the text before the host's edit.
    OnItsWay,
    /// The user changed the buffer: the markers go.
    Typed,
}

impl Written {
    /// The changes from `before` (the buffer's text) to `after` (the new
    /// disk text); `None` when there are none. The buffer still shows
    /// `before`.
    pub(super) fn new(diff: u64, path: PathBuf, before: String, after: String) -> Option<Self> {
        let mut shift: i64 = 0;
        let changes: Vec<Change> = hunks(&before, &after)
            .into_iter()
            .enumerate()
            .map(|(index, hunk)| {
                let start = u32::try_from(i64::from(hunk.old_start) + shift).unwrap_or(0);
                shift += i64::from(hunk.new_len) - i64::from(hunk.old_len);
                let old = lines(&before, hunk.old_start, hunk.old_len).to_owned();
                let message = message(hunk.old_len, hunk.new_len, &old);
                Change {
                    index,
                    start,
                    len: hunk.new_len,
                    old,
                    message,
                }
            })
            .collect();
        (!changes.is_empty()).then_some(Self {
            diff,
            path,
            text: after,
            before: Some(before),
            landed: false,
            changes,
        })
    }

    /// What the buffer's `current` text says.
    pub(super) fn seen(&mut self, current: &str) -> Seen {
        if current == self.text {
            self.before = None;
            self.landed = true;
            Seen::Landed
        } else if self.before.as_deref() == Some(current) {
            Seen::OnItsWay
        } else {
            Seen::Typed
        }
    }

    /// Whether every change is kept or reverted.
    pub(super) fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The markers, once the buffer shows the write.
    pub(super) fn view(&self) -> Option<ReviewView> {
        (self.landed && !self.changes.is_empty()).then(|| ReviewView {
            kind: ViewKind::Written,
            agent: Agent::Claude,
            path: self.path.clone(),
            diff: self.diff,
            rev: 0,
            hunks: self
                .changes
                .iter()
                .map(|change| HunkView {
                    index: change.index,
                    start_line: change.start,
                    old_len: change.len,
                    message: change.message.clone(),
                })
                .collect(),
        })
    }

    /// Keeps change `index` (every change: `None`): its marker goes.
    pub(super) fn keep(&mut self, index: Option<usize>) {
        self.changes.retain(|c| index.is_some_and(|i| c.index != i));
    }

    /// Reverts change `index` (every change: `None`) in the text; returns
    /// the text the buffer must now show, or `None` when there is no such
    /// change. The buffer still shows the text before.
    pub(super) fn revert(&mut self, index: Option<usize>) -> Option<String> {
        let reverted: Vec<Change> = self
            .changes
            .iter()
            .filter(|c| index.is_none_or(|i| c.index == i))
            .cloned()
            .collect();
        if reverted.is_empty() {
            return None;
        }
        let mut text = self.text.clone();
        // From the last, so that the earlier lines stay where they are.
        for change in reverted.iter().rev() {
            let at = line_offset(&text, change.start);
            let end = at + lines(&text[at..], 0, change.len).len();
            text.replace_range(at..end, &change.old);
        }
        self.changes.retain(|c| !reverted.contains(c));
        for change in &mut self.changes {
            let shift: i64 = reverted
                .iter()
                .filter(|r| r.start < change.start)
                .map(|r| line_count(&r.old) - i64::from(r.len))
                .sum();
            change.start = u32::try_from(i64::from(change.start) + shift).unwrap_or(0);
        }
        self.before = Some(std::mem::replace(&mut self.text, text.clone()));
        Some(text)
    }
}

/// The `len` lines of `text` from line `start`, with their terminators.
fn lines(text: &str, start: u32, len: u32) -> &str {
    let from = line_offset(text, start);
    let to = line_offset(&text[from..], len) + from;
    &text[from..to]
}

/// The byte offset where line `line` of `text` starts (the end when it has
/// fewer lines).
fn line_offset(text: &str, line: u32) -> usize {
    if line == 0 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line as usize - 1)
        .map_or(text.len(), |(at, _)| at + 1)
}

/// How many lines `text` holds (a last line without a terminator counts).
fn line_count(text: &str) -> i64 {
    i64::try_from(text.split_inclusive('\n').count()).unwrap_or(i64::MAX)
}

/// A marker's message: what changed, and the old lines it replaced.
fn message(old_len: u32, new_len: u32, old: &str) -> String {
    let n = |k: u32| {
        if k == 1 {
            "1 line".to_owned()
        } else {
            format!("{k} lines")
        }
    };
    let what = match (old_len, new_len) {
        (0, new) => return format!("Claude inserted {}", n(new)),
        (old, 0) => format!("Claude deleted {}", n(old)),
        (old, new) => format!("Claude replaced {} with {new}", n(old)),
    };
    let quoted = old.trim_end_matches(['\n', '\r']);
    match quoted.char_indices().nth(QUOTED_MAX_CHARS) {
        Some((cut, _)) => format!("{what} — was: {}…", &quoted[..cut]),
        None => format!("{what} — was: {quoted}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(before: &str, after: &str) -> Written {
        Written::new(1, "/w/a.c".into(), before.to_owned(), after.to_owned()).unwrap()
    }

    fn marked(w: &Written) -> Vec<(u32, u32, String)> {
        w.view()
            .unwrap()
            .hunks
            .into_iter()
            .map(|h| (h.start_line, h.old_len, h.message))
            .collect()
    }

    #[test]
    fn each_hunk_is_marked_on_the_new_text_s_lines() {
        let mut w = written("a\nb\nc\nd\ne\n", "a\nB\nB2\nc\ne\nf\n");
        assert_eq!(w.view(), None, "nothing shown before the buffer shows it");
        assert_eq!(w.seen("a\nb\nc\nd\ne\n"), Seen::OnItsWay);
        assert_eq!(w.seen("a\nB\nB2\nc\ne\nf\n"), Seen::Landed);
        assert_eq!(
            marked(&w),
            [
                (1, 2, "Claude replaced 1 line with 2 — was: b".to_owned()),
                (4, 0, "Claude deleted 1 line — was: d".to_owned()),
                (5, 1, "Claude inserted 1 line".to_owned()),
            ]
        );
        assert_eq!(w.seen("a\nB!\nB2\nc\ne\nf\n"), Seen::Typed);
    }

    #[test]
    fn a_revert_restores_the_old_lines_and_moves_the_others() {
        let before = "a\nb\nc\nd\ne\n";
        let after = "a\nB\nB2\nc\ne\nf\n";
        let mut w = written(before, after);
        w.seen(after);
        assert_eq!(w.revert(Some(0)).as_deref(), Some("a\nb\nc\ne\nf\n"));
        assert_eq!(w.seen(after), Seen::OnItsWay, "the revert on its way");
        assert_eq!(w.seen("a\nb\nc\ne\nf\n"), Seen::Landed);
        assert_eq!(
            marked(&w)
                .into_iter()
                .map(|(s, l, _)| (s, l))
                .collect::<Vec<_>>(),
            [(3, 0), (4, 1)]
        );
        assert_eq!(w.revert(Some(2)).as_deref(), Some("a\nb\nc\ne\n"));
        assert_eq!(w.revert(Some(1)).as_deref(), Some(before));
        assert!(w.is_empty());
        assert_eq!(w.revert(Some(1)), None);
    }

    #[test]
    fn revert_all_and_keep() {
        let mut w = written("x\ny\nz", "X\ny\nZ");
        w.seen("X\ny\nZ");
        w.keep(Some(0));
        assert_eq!(marked(&w).len(), 1);
        assert_eq!(w.revert(None).as_deref(), Some("X\ny\nz"));
        assert!(w.is_empty());
        let mut w = written("x\ny\nz", "X\ny\nZ");
        w.keep(None);
        assert!(w.is_empty());
        let mut w = written("1\n2\n3\n", "one\n2\nthree\n");
        assert_eq!(w.revert(None).as_deref(), Some("1\n2\n3\n"));
    }

    #[test]
    fn last_lines_without_a_terminator() {
        for (before, after) in [
            ("a\nb", "a\nB"),
            ("a\nb\n", "a\nb\nc"),
            ("a", "a\nb"),
            ("a\nb\nc", "a"),
            ("", "new\n"),
            ("old\n", ""),
        ] {
            let mut w = written(before, after);
            w.seen(after);
            assert_eq!(
                w.revert(None).as_deref(),
                Some(before),
                "{before:?} -> {after:?}"
            );
        }
    }

    #[test]
    fn long_old_lines_are_cut_in_the_message() {
        let old = "é".repeat(300) + "\n";
        let w = written(&old, "new\n");
        let message = &w.changes[0].message;
        assert!(message.starts_with("Claude replaced 1 line with 1 — was: éé"));
        assert!(message.ends_with('…'));
        assert_eq!(message.chars().filter(|&c| c == 'é').count(), 200);
    }
}
