//! [`unified_diff`]: a text change as a unified diff that `patch` and
//! `git apply` take.

use std::fmt::Write as _;

use imara_diff::{Algorithm, Diff, InternedInput};

/// Unchanged lines shown around each change, as `diff -u` shows them.
pub const CONTEXT_LINES: u32 = 3;

/// The unified diff turning `old` into `new`, with the headers `--- {old_name}`
/// and `+++ {new_name}`; empty when the texts are equal.
///
/// Lines as [`hunks`](super::hunks) splits them (imara-diff's Histogram
/// line diff, slid as git slides it); [`CONTEXT_LINES`] of context, changes
/// closer than twice that in one hunk; a line without a final newline is
/// followed by `\ No newline at end of file`; a side with no lines in a
/// hunk is counted as `diff` counts it (`-0,0` for an empty file, `-N,0`
/// after line `N`).
///
/// ```
/// use ide_mcp_tools::review::unified_diff;
///
/// let diff = unified_diff("a\nb\nc\n", "a\nB\nc\n", "a/f.py", "b/f.py");
/// assert_eq!(diff, "--- a/f.py\n+++ b/f.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
/// ```
pub fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    let input = InternedInput::new(old, new);
    let mut diff = Diff::compute(Algorithm::Histogram, &input);
    diff.postprocess_lines(&input);
    let line = |token| input.interner[token];
    let (before, after) = (&input.before, &input.after);
    let hunks: Vec<imara_diff::Hunk> = diff.hunks().collect();
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    let mut first = 0;
    while first < hunks.len() {
        // The changes that share one hunk: their gaps fit twice the context.
        let mut last = first;
        while last + 1 < hunks.len()
            && hunks[last + 1].before.start - hunks[last].before.end <= 2 * CONTEXT_LINES
        {
            last += 1;
        }
        let lead = hunks[first].before.start.min(CONTEXT_LINES);
        let trail = (before.len() as u32 - hunks[last].before.end).min(CONTEXT_LINES);
        let old_start = hunks[first].before.start - lead;
        let new_start = hunks[first].after.start - lead;
        let old_len = hunks[last].before.end + trail - old_start;
        let new_len = hunks[last].after.end + trail - new_start;
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            span(old_start, old_len),
            span(new_start, new_len)
        );
        let mut at = old_start;
        for hunk in &hunks[first..=last] {
            for &token in &before[at as usize..hunk.before.start as usize] {
                push_line(&mut out, ' ', line(token));
            }
            for &token in &before[hunk.before.start as usize..hunk.before.end as usize] {
                push_line(&mut out, '-', line(token));
            }
            for &token in &after[hunk.after.start as usize..hunk.after.end as usize] {
                push_line(&mut out, '+', line(token));
            }
            at = hunk.before.end;
        }
        for &token in &before[at as usize..(at + trail) as usize] {
            push_line(&mut out, ' ', line(token));
        }
        first = last + 1;
    }
    out
}

/// A hunk header's `start,len` (1-based; `diff` omits `,1`, and names the
/// line before an empty side).
fn span(start: u32, len: u32) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

fn push_line(out: &mut String, mark: char, line: &str) {
    out.push(mark);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}

#[cfg(test)]
mod tests {
    use super::unified_diff;

    fn diff(old: &str, new: &str) -> String {
        unified_diff(old, new, "a/f", "b/f")
            .strip_prefix("--- a/f\n+++ b/f\n")
            .unwrap()
            .to_owned()
    }

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(unified_diff("a\n", "a\n", "a/f", "b/f"), "");
    }

    #[test]
    fn context_is_three_lines_and_close_changes_share_a_hunk() {
        let numbers = |changed: &[(u32, &str)]| -> String {
            (1..=20)
                .map(|n| match changed.iter().find(|(at, _)| *at == n) {
                    Some((_, word)) => format!("{word}\n"),
                    None => format!("{n}\n"),
                })
                .collect()
        };
        let old = numbers(&[]);
        let new = numbers(&[(2, "two"), (9, "nine")]);
        assert_eq!(
            diff(&old, &new),
            "@@ -1,12 +1,12 @@\n 1\n-2\n+two\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+nine\n 10\n 11\n 12\n"
        );
        let far = numbers(&[(2, "two"), (19, "nineteen")]);
        assert_eq!(
            diff(&old, &far),
            "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -16,5 +16,5 @@\n 16\n 17\n 18\n-19\n+nineteen\n 20\n"
        );
    }

    #[test]
    fn empty_sides_and_missing_newlines() {
        assert_eq!(diff("", "x\ny\n"), "@@ -0,0 +1,2 @@\n+x\n+y\n");
        assert_eq!(diff("x\n", ""), "@@ -1 +0,0 @@\n-x\n");
        assert_eq!(
            diff("a\nb", "a\nc"),
            "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
        assert_eq!(
            diff("a\n", "a\nb"),
            "@@ -1 +1,2 @@\n a\n+b\n\\ No newline at end of file\n"
        );
        assert_eq!(
            diff("a\nb\nc\nd\ne\n", "a\nb\nc\nd\nX\ne\n"),
            "@@ -2,4 +2,5 @@\n b\n c\n d\n+X\n e\n"
        );
    }

    /// The diffs apply with `patch` (installed by `tests/lsp/install.sh`;
    /// skipped, saying so, only where that script could not install it).
    #[test]
    fn patch_applies_them() {
        let Ok(status) = std::process::Command::new("patch")
            .arg("--version")
            .output()
        else {
            assert!(
                std::env::var_os("IDE_MCP_LSP_MISSING").is_some(),
                "`patch` is not installed: run `bash tests/lsp/install.sh`"
            );
            eprintln!("SKIPPED: `patch` could not be installed from its package registry");
            return;
        };
        assert!(status.status.success());
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("a\nb\nc\n", "a\nB\nc\nd"),
            ("", "new\n"),
            ("😀 x\r\ny\r\n", "😀 z\r\ny\r\n"),
            (
                "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
                "0\n1\n2\n3\n5\n6\n7\n8\n9\n10\n11\n",
            ),
        ];
        for (n, (old, new)) in cases.into_iter().enumerate() {
            let name = format!("f{n}.txt");
            std::fs::write(dir.path().join(&name), old).unwrap();
            let patch = unified_diff(old, new, &format!("a/{name}"), &format!("b/{name}"));
            std::fs::write(dir.path().join("p.diff"), &patch).unwrap();
            let out = std::process::Command::new("patch")
                .args(["-p1", "--batch", "--input", "p.diff"])
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{patch}\n{out:?}");
            assert_eq!(
                std::fs::read_to_string(dir.path().join(&name)).unwrap(),
                new
            );
        }
    }
}
