//! [`hunks`]: the line diff of the editor's text and Claude's proposal.

use std::fmt::Write as _;

use imara_diff::{Algorithm, Diff, InternedInput};

use super::lines::LineCursor;

/// At most this many of a hunk's new lines are shown in its message.
const MESSAGE_MAX_LINES: usize = 20;

/// At most this many characters of a hunk's new lines are shown in its message.
const MESSAGE_MAX_CHARS: usize = 2000;

/// One change between the current text and Claude's proposal, by lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// Zero-based index of the first old line the hunk replaces (for a pure
    /// insertion: the line before which the new lines go; may equal the old
    /// text's line count = at the end).
    pub old_start: u32,
    /// How many old lines it replaces (0 for a pure insertion).
    pub old_len: u32,
    /// The new lines, each with its own line terminator as in the proposal
    /// (the last may lack one).
    pub new_text: String,
    /// How many lines `new_text` holds (0 for a pure deletion).
    pub new_len: u32,
}

impl Hunk {
    /// The diagnostic message naming the change with the proposed lines:
    /// `Claude: replace 2 lines with 3 — ` then the new text, `Claude: insert
    /// 1 line — …`, `Claude: delete 2 lines`.
    ///
    /// The new text is shown as it is, less its last line terminator; past
    /// 20 lines or 2000 characters it is cut (never inside a character),
    /// a line cut short ends with `…`, and `… N more lines` says what was
    /// left out.
    pub fn message(&self) -> String {
        self.message_of("Claude")
    }

    /// [`message`](Self::message), the change named as `agent`'s
    /// (`Gemini: replace …`).
    pub fn message_of(&self, agent: &str) -> String {
        let mut message = match (self.old_len, self.new_len) {
            (old, 0) if old > 0 => return format!("{agent}: delete {}", lines(old)),
            (0, new) => format!("{agent}: insert {} — ", lines(new)),
            (old, new) => format!("{agent}: replace {} with {new} — ", lines(old)),
        };
        push_shortened(&mut message, &self.new_text, self.new_len);
        message
    }
}

/// `1 line`, `2 lines`.
fn lines(n: u32) -> String {
    if n == 1 {
        "1 line".to_owned()
    } else {
        format!("{n} lines")
    }
}

/// Appends `text` (of `line_count` lines) to `out`, shortened past
/// [`MESSAGE_MAX_LINES`] or [`MESSAGE_MAX_CHARS`].
fn push_shortened(out: &mut String, text: &str, line_count: u32) {
    let start = out.len();
    let mut budget = MESSAGE_MAX_CHARS;
    let mut shown = 0_u32;
    let mut cut = false;
    for line in text.split_inclusive('\n').take(MESSAGE_MAX_LINES) {
        if budget == 0 {
            break;
        }
        shown += 1;
        if let Some((end, _)) = line.char_indices().nth(budget) {
            out.push_str(&line[..end]);
            cut = true;
            break;
        }
        budget -= line.chars().count();
        out.push_str(line);
    }
    if cut {
        out.push('…');
    } else {
        let shown_text = &out[start..];
        let kept = shown_text
            .strip_suffix('\n')
            .map_or(shown_text, |rest| rest.strip_suffix('\r').unwrap_or(rest))
            .len();
        out.truncate(start + kept);
    }
    let rest = line_count.saturating_sub(shown);
    if rest > 0 {
        let noun = if rest == 1 { "line" } else { "lines" };
        let _ = write!(out, "\n… {rest} more {noun}");
    }
}

/// The line hunks turning `old` into `new` (a line diff with imara-diff, the
/// crate Helix and gitoxide use; Histogram algorithm), in order, never
/// overlapping, adjacent changes merged into one hunk.
///
/// Lines are split after `\n` (so `\r\n` stays with its line, and a last line
/// without a terminator is a line too); a line differing only in its
/// terminator is a change. Equal texts → no hunks. Between two hunks there
/// is always at least one unchanged line.
pub fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    if old == new {
        return Vec::new();
    }
    let input = InternedInput::new(old, new);
    let mut diff = Diff::compute(Algorithm::Histogram, &input);
    // Slides ambiguous hunks (a repeated line) to where a person would put
    // them, by indentation, as git does.
    diff.postprocess_lines(&input);
    let mut new_lines = LineCursor::new(new);
    diff.hunks()
        .map(|hunk| {
            new_lines.seek(hunk.after.start);
            Hunk {
                old_start: hunk.before.start,
                old_len: hunk.before.len() as u32,
                new_text: new_lines.take_to(hunk.after.end).to_owned(),
                new_len: hunk.after.len() as u32,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(old_start: u32, old_len: u32, new_text: &str, new_len: u32) -> Hunk {
        Hunk {
            old_start,
            old_len,
            new_text: new_text.to_owned(),
            new_len,
        }
    }

    #[test]
    fn a_replacement() {
        assert_eq!(
            hunks("a\nb\nc\nd\n", "a\nB\nC\nX\nd\n"),
            [hunk(1, 2, "B\nC\nX\n", 3)]
        );
        assert_eq!(hunks("a\nb\nc\n", "a\nB\nc\n"), [hunk(1, 1, "B\n", 1)]);
    }

    #[test]
    fn insertions_at_the_start_in_the_middle_and_at_the_end() {
        assert_eq!(hunks("a\nb\n", "new\na\nb\n"), [hunk(0, 0, "new\n", 1)]);
        assert_eq!(hunks("a\nb\n", "a\nx\ny\nb\n"), [hunk(1, 0, "x\ny\n", 2)]);
        assert_eq!(hunks("a\nb\n", "a\nb\nz\n"), [hunk(2, 0, "z\n", 1)]);
    }

    #[test]
    fn deletions() {
        assert_eq!(hunks("a\nb\nc\nd\n", "a\nd\n"), [hunk(1, 2, "", 0)]);
        assert_eq!(hunks("a\nb\n", "b\n"), [hunk(0, 1, "", 0)]);
        assert_eq!(hunks("a\nb\n", "a\n"), [hunk(1, 1, "", 0)]);
    }

    #[test]
    fn separate_changes_are_separate_hunks_in_order() {
        assert_eq!(
            hunks("1\n2\n3\n4\n5\n", "1\nTWO\n3\n5\nsix\n"),
            [
                hunk(1, 1, "TWO\n", 1),
                hunk(3, 1, "", 0),
                hunk(5, 0, "six\n", 1)
            ]
        );
    }

    #[test]
    fn whole_file_and_empty_sides() {
        assert_eq!(hunks("a\nb\n", "x\ny\nz"), [hunk(0, 2, "x\ny\nz", 3)]);
        assert_eq!(hunks("", "x\ny\n"), [hunk(0, 0, "x\ny\n", 2)]);
        assert_eq!(hunks("x\ny\n", ""), [hunk(0, 2, "", 0)]);
        assert_eq!(hunks("", ""), []);
        assert_eq!(hunks("same\r\ntext", "same\r\ntext"), []);
    }

    #[test]
    fn line_terminators_belong_to_their_lines() {
        // CRLF stays with its line, and only the line whose ending changed
        // is a change.
        assert_eq!(
            hunks("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n"),
            [hunk(1, 1, "B\r\n", 1)]
        );
        assert_eq!(
            hunks("a\r\nb\r\nc\r\n", "a\r\nb\nc\r\n"),
            [hunk(1, 1, "b\n", 1)]
        );
        // No final newline, on either side.
        assert_eq!(hunks("a\nb", "a\nb\n"), [hunk(1, 1, "b\n", 1)]);
        assert_eq!(hunks("a\nb\n", "a\nb"), [hunk(1, 1, "b", 1)]);
        assert_eq!(hunks("a\nb", "a\nc"), [hunk(1, 1, "c", 1)]);
        assert_eq!(hunks("a", "x\na"), [hunk(0, 0, "x\n", 1)]);
    }

    #[test]
    fn astral_characters() {
        assert_eq!(
            hunks("let 😀 = 1;\n𝄞\n", "let 😀 = 2;\n𝄞\n"),
            [hunk(0, 1, "let 😀 = 2;\n", 1)]
        );
        assert_eq!(hunks("😀", "😀\n🎉"), [hunk(0, 1, "😀\n🎉", 2)]);
    }

    #[test]
    fn messages_name_the_change() {
        assert_eq!(
            hunk(1, 2, "B\nC\nX\n", 3).message(),
            "Claude: replace 2 lines with 3 — B\nC\nX"
        );
        assert_eq!(
            hunk(1, 1, "B\r\n", 1).message(),
            "Claude: replace 1 line with 1 — B"
        );
        assert_eq!(
            hunk(0, 0, "new", 1).message(),
            "Claude: insert 1 line — new"
        );
        assert_eq!(
            hunk(0, 0, "x\n\n", 2).message(),
            "Claude: insert 2 lines — x\n"
        );
        assert_eq!(hunk(1, 2, "", 0).message(), "Claude: delete 2 lines");
        assert_eq!(hunk(1, 1, "", 0).message(), "Claude: delete 1 line");
        assert_eq!(
            hunk(0, 1, "let 😀 = 2;\n", 1).message(),
            "Claude: replace 1 line with 1 — let 😀 = 2;"
        );
    }

    /// `n` lines `{prefix}0` to `{prefix}{n-1}`, each ended by `\n`.
    fn numbered(prefix: &str, n: usize) -> String {
        (0..n).fold(String::new(), |mut text, i| {
            let _ = writeln!(text, "{prefix}{i}");
            text
        })
    }

    #[test]
    fn long_messages_are_shortened() {
        let many = numbered("line ", 57);
        let message = hunk(0, 0, &many, 57).message();
        let shown = numbered("line ", 20);
        assert_eq!(
            message,
            format!("Claude: insert 57 lines — {shown}… 37 more lines")
        );
        let message = hunk(0, 0, &many[..many.len() - 1], 21).message();
        assert!(message.ends_with("line 19\n… 1 more line"), "{message}");

        // One long line: cut at 2000 characters, never inside one.
        let long = format!("{}\n", "😀".repeat(3000));
        let message = hunk(0, 1, &long, 1).message();
        assert_eq!(
            message,
            format!("Claude: replace 1 line with 1 — {}…", "😀".repeat(2000))
        );
        // Lines that fill the budget exactly: the rest is counted, not cut.
        let full = format!("{}\n{}\nnext\n", "a".repeat(999), "b".repeat(999));
        assert_eq!(
            hunk(0, 0, &full, 3).message(),
            format!(
                "Claude: insert 3 lines — {}\n{}\n… 1 more line",
                "a".repeat(999),
                "b".repeat(999)
            )
        );
        // Exactly the limits: nothing left out.
        let twenty = numbered("", 20);
        assert!(!hunk(0, 0, &twenty, 20).message().contains('…'));
    }
}
