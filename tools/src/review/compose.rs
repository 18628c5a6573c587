//! [`compose`]: the text the user chose, hunk by hunk.

use super::hunks::Hunk;
use super::lines::LineCursor;

/// `old` with the hunks whose `accepted` flag is true applied (rejected hunks
/// keep the old lines): exactly the chosen text, line endings and final
/// newline preserved.
///
/// `accepted.len() == hunks.len()`, and `hunks` are as [`hunks`](super::hunks)`(old, _)`
/// returned them. Other input never panics: a missing flag counts as
/// rejected, and a hunk starting before the end of the previous accepted one,
/// or past the end of `old`, is applied where the text then is.
pub fn compose(old: &str, hunks: &[Hunk], accepted: &[bool]) -> String {
    let chosen = || {
        hunks
            .iter()
            .zip(accepted)
            .filter_map(|(hunk, &accepted)| accepted.then_some(hunk))
    };
    let mut out =
        String::with_capacity(old.len() + chosen().map(|h| h.new_text.len()).sum::<usize>());
    let mut lines = LineCursor::new(old);
    for hunk in chosen() {
        out.push_str(lines.take_to(hunk.old_start));
        out.push_str(&hunk.new_text);
        lines.seek(hunk.old_start.saturating_add(hunk.old_len));
    }
    out.push_str(lines.take_to(u32::MAX));
    out
}

#[cfg(test)]
mod tests {
    use super::super::hunks;
    use super::*;

    #[test]
    fn each_choice_gives_its_text() {
        let old = "1\n2\n3\n4\n5\n";
        let new = "1\nTWO\n3\n5\nsix\n";
        let h = hunks(old, new);
        assert_eq!(h.len(), 3);
        assert_eq!(compose(old, &h, &[true; 3]), new);
        assert_eq!(compose(old, &h, &[false; 3]), old);
        assert_eq!(compose(old, &h, &[true, false, false]), "1\nTWO\n3\n4\n5\n");
        assert_eq!(compose(old, &h, &[false, true, false]), "1\n2\n3\n5\n");
        assert_eq!(
            compose(old, &h, &[false, false, true]),
            "1\n2\n3\n4\n5\nsix\n"
        );
        assert_eq!(
            compose(old, &h, &[true]),
            "1\nTWO\n3\n4\n5\n",
            "missing flags reject"
        );
    }

    #[test]
    fn line_endings_and_final_newlines_are_kept() {
        let old = "a\r\nb\r\nc";
        let new = "A\r\nb\r\nc\n";
        let h = hunks(old, new);
        assert_eq!(h.len(), 2);
        assert_eq!(compose(old, &h, &[true, false]), "A\r\nb\r\nc");
        assert_eq!(compose(old, &h, &[false, true]), "a\r\nb\r\nc\n");
        let h = hunks("x\n", "");
        assert_eq!(compose("x\n", &h, &[true]), "");
        let h = hunks("", "😀");
        assert_eq!(compose("", &h, &[true]), "😀");
        assert_eq!(compose("", &h, &[false]), "");
    }

    #[test]
    fn hunks_of_another_text_do_not_panic() {
        let h = hunks("a\nb\nc\nd\n", "a\nB\nc\nD\n");
        assert_eq!(compose("", &h, &[true, true]), "B\nD\n");
        let backwards = [h[1].clone(), h[0].clone()];
        assert_eq!(
            compose("a\nb\nc\nd\n", &backwards, &[true, true]),
            "a\nb\nc\nD\nB\n"
        );
    }
}
