//! Walking a text line by line, forward only: lines end just after `\n`, and
//! a last line without one is a line too (imara-diff's line tokens).

/// A position in a text at the start of a line, moved forward by lines.
pub(super) struct LineCursor<'a> {
    text: &'a str,
    /// The index of the line `offset` starts.
    line: u32,
    /// The byte offset of that line's start (`text.len()` past the end).
    offset: usize,
}

impl<'a> LineCursor<'a> {
    /// At the start of `text`'s first line.
    pub(super) fn new(text: &'a str) -> Self {
        Self {
            text,
            line: 0,
            offset: 0,
        }
    }

    /// The byte offset where line `line` starts, moving there; the end of
    /// the text for a line past its end, and the current offset for a line
    /// already passed (the cursor never moves back).
    pub(super) fn seek(&mut self, line: u32) -> usize {
        while self.line < line && self.offset < self.text.len() {
            self.offset = self.text[self.offset..]
                .find('\n')
                .map_or(self.text.len(), |at| self.offset + at + 1);
            self.line += 1;
        }
        self.offset
    }

    /// The text from the cursor to the start of line `line`, moving there.
    pub(super) fn take_to(&mut self, line: u32) -> &'a str {
        let start = self.offset;
        let end = self.seek(line);
        &self.text[start..end]
    }
}

#[cfg(test)]
mod tests {
    use super::LineCursor;

    #[test]
    fn lines_end_after_their_newline() {
        let mut cursor = LineCursor::new("a\r\nbb\n\nc");
        assert_eq!(cursor.take_to(1), "a\r\n");
        assert_eq!(cursor.take_to(3), "bb\n\n");
        assert_eq!(cursor.seek(1), 7, "never back");
        assert_eq!(cursor.take_to(4), "c");
        assert_eq!(cursor.take_to(9), "");
        assert_eq!(LineCursor::new("").seek(3), 0);
    }
}
