//! An indent-aware text writer for generated Rust.
//!
//! Contract: [`CodeWriter::line`] writes one line at the current indent;
//! [`CodeWriter::open`] writes a line ending in `{` and indents;
//! [`CodeWriter::close`] dedents and writes the closing text. Output uses
//! four-space indents and `\n` line ends, so it is byte-for-byte
//! deterministic for snapshot tests.

/// Accumulates generated source.
#[derive(Debug, Default)]
pub struct CodeWriter {
    out: String,
    indent: usize,
}

impl CodeWriter {
    /// Writes `text` as one line at the current indent.
    pub fn line(&mut self, text: impl AsRef<str>) {
        let text = text.as_ref();
        if text.is_empty() {
            self.out.push('\n');
            return;
        }
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Writes `text` (which should end in `{`) and indents.
    pub fn open(&mut self, text: impl AsRef<str>) {
        self.line(text);
        self.indent += 1;
    }

    /// Dedents and writes `text` (usually `}`).
    pub fn close(&mut self, text: impl AsRef<str>) {
        self.indent = self.indent.saturating_sub(1);
        self.line(text);
    }

    /// Dedents, writes `text` (`} else {`), and indents again.
    pub fn reopen(&mut self, text: impl AsRef<str>) {
        self.indent = self.indent.saturating_sub(1);
        self.line(text);
        self.indent += 1;
    }

    /// The text written so far.
    pub fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_nested_blocks() {
        let mut w = CodeWriter::default();
        w.open("fn f() {");
        w.open("if x {");
        w.line("y();");
        w.close("}");
        w.close("}");
        assert_eq!(w.finish(), "fn f() {\n    if x {\n        y();\n    }\n}\n");
    }
}
