//! Properties of [`hunks`] and [`compose`] against a naive reference, on
//! texts made of a few lines (so that lines repeat and diffs are ambiguous),
//! with LF and CRLF endings and a last line that may lack one.

use proptest::prelude::*;

use super::{Hunk, compose, hunks};

/// A text of up to 12 lines from a small alphabet, the last maybe unterminated.
fn text() -> impl Strategy<Value = String> {
    let line = prop::sample::select(vec!["a\n", "b\n", "a\r\n", "b\r\n", "c\n", "\n", "😀\n"]);
    let last = prop::sample::select(vec!["", "", "a", "b", "😀"]);
    (prop::collection::vec(line, 0..12), last).prop_map(|(lines, last)| lines.concat() + last)
}

fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Applies the accepted hunks line by line: for each old line (and the end),
/// first the new lines of the accepted hunks that start there, then the old
/// line unless an accepted hunk replaces it.
fn naive_compose(old: &str, hunks: &[Hunk], accepted: &[bool]) -> String {
    let old = lines(old);
    let chosen: Vec<&Hunk> = hunks
        .iter()
        .zip(accepted)
        .filter(|(_, accepted)| **accepted)
        .map(|(hunk, _)| hunk)
        .collect();
    let mut out = String::new();
    for at in 0..=old.len() {
        for hunk in chosen.iter().filter(|h| h.old_start as usize == at) {
            out.push_str(&hunk.new_text);
        }
        let replaced = chosen
            .iter()
            .any(|h| (h.old_start as usize..(h.old_start + h.old_len) as usize).contains(&at));
        if let Some(line) = old.get(at).filter(|_| !replaced) {
            out.push_str(line);
        }
    }
    out
}

/// The hunks are well formed: non-empty, in order, separated by at least
/// one unchanged line, within `old`, and their texts hold `new_len` lines.
fn check_shape(old: &str, hunks: &[Hunk]) {
    let old_lines = lines(old).len() as u32;
    let mut next_free = 0;
    for hunk in hunks {
        assert!(hunk.old_len + hunk.new_len > 0, "{hunk:?}");
        assert!(hunk.old_start >= next_free, "sorted, apart: {hunks:?}");
        assert!(hunk.old_start + hunk.old_len <= old_lines, "{hunk:?}");
        assert_eq!(lines(&hunk.new_text).len() as u32, hunk.new_len, "{hunk:?}");
        next_free = hunk.old_start + hunk.old_len + 1;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn all_accepted_is_new_and_none_is_old(old in text(), new in text()) {
        let h = hunks(&old, &new);
        check_shape(&old, &h);
        prop_assert_eq!(h.is_empty(), old == new);
        prop_assert_eq!(compose(&old, &h, &vec![true; h.len()]), new);
        prop_assert_eq!(compose(&old, &h, &vec![false; h.len()]), old);
    }

    #[test]
    fn any_choice_is_the_naive_one(
        old in text(),
        new in text(),
        choice in prop::collection::vec(any::<bool>(), 12),
    ) {
        let h = hunks(&old, &new);
        let accepted: Vec<bool> = choice.iter().copied().cycle().take(h.len()).collect();
        prop_assert_eq!(compose(&old, &h, &accepted), naive_compose(&old, &h, &accepted));
    }
}

#[test]
fn the_reference_agrees_on_a_known_case() {
    let old = "1\n2\n3\n4\n5\n";
    let h = hunks(old, "1\nTWO\n3\n5\nsix\n");
    assert_eq!(
        naive_compose(old, &h, &[true, false, true]),
        "1\nTWO\n3\n4\n5\nsix\n"
    );
}
