//! Expected packets: hex nibbles with `*` don't-cares and an optional `$`
//! end marker, and the comparison p4c's `bmv2stf.py` (`comparePacket`)
//! performs.
//!
//! Contract: without `$`, the received packet may be longer than the
//! pattern (extra trailing bytes are allowed); with `$`, it must have
//! exactly the pattern's length. A received packet shorter than the pattern
//! fails. Mismatch messages show both packets as spaced hex bytes with a
//! caret under the first differing nibble.

use std::fmt::Write as _;

/// An `expect` line's data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectPattern {
    /// One entry per nibble; `None` is `*`.
    pub nibbles: Vec<Option<u8>>,
    /// `$` was given: the length must match exactly.
    pub exact_len: bool,
}

impl ExpectPattern {
    /// Parses the data of an `expect` line (whitespace already removed or
    /// not): hex digits, `*`, and a final `$`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut nibbles = Vec::new();
        let mut exact_len = false;
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        for (i, c) in compact.chars().enumerate() {
            if exact_len {
                return Err(format!(
                    "`$` must end the expected packet (found `{c}` after it)"
                ));
            }
            match c {
                '*' => nibbles.push(None),
                '$' => {
                    exact_len = true;
                    let _ = i;
                }
                _ => match c.to_digit(16) {
                    Some(d) => nibbles.push(Some(d as u8)),
                    None => return Err(format!("`{c}` is not a hex digit, `*` or `$`")),
                },
            }
        }
        Ok(ExpectPattern { nibbles, exact_len })
    }

    /// The pattern as spaced hex bytes, `*` for don't-cares.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for (i, n) in self.nibbles.iter().enumerate() {
            if i > 0 && i % 2 == 0 {
                s.push(' ');
            }
            match n {
                Some(d) => {
                    let _ = write!(s, "{d:X}");
                }
                None => s.push('*'),
            }
        }
        if self.exact_len {
            s.push('$');
        }
        s
    }

    /// Compares a received packet; `Err` holds a multi-line explanation.
    pub fn compare(&self, actual: &[u8]) -> Result<(), String> {
        let actual_nibbles = actual.len() * 2;
        let nib = |i: usize| {
            let b = actual[i / 2];
            if i.is_multiple_of(2) { b >> 4 } else { b & 0xf }
        };
        let first_diff = self
            .nibbles
            .iter()
            .enumerate()
            .find(|&(i, n)| i >= actual_nibbles || n.is_some_and(|d| d != nib(i)))
            .map(|(i, _)| i);
        let (what, at) = match first_diff {
            Some(i) if i >= actual_nibbles => (
                format!(
                    "received packet too short: {} bytes, expected at least {}",
                    actual.len(),
                    self.nibbles.len().div_ceil(2)
                ),
                i,
            ),
            Some(i) => (format!("differs at byte {} (nibble {})", i / 2, i), i),
            None if self.exact_len && actual_nibbles > self.nibbles.len() => (
                format!(
                    "received packet too long: {} bytes, expected exactly {}",
                    actual.len(),
                    self.nibbles.len().div_ceil(2)
                ),
                self.nibbles.len(),
            ),
            None => return Ok(()),
        };
        // Caret column: 3 characters per byte ("AB "), 1 per nibble within it.
        let col = (at / 2) * 3 + at % 2;
        Err(format!(
            "{what}\n  expected: {}\n  actual:   {}\n            {}^",
            self.render(),
            hex(actual),
            " ".repeat(col)
        ))
    }
}

/// Bytes as spaced upper-case hex.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{b:02X}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dont_cares_and_trailing_bytes() {
        let p = ExpectPattern::parse("0a0b ** 0c").unwrap();
        assert_eq!(p.compare(&[0x0a, 0x0b, 0xff, 0x0c]), Ok(()));
        assert_eq!(
            p.compare(&[0x0a, 0x0b, 0x00, 0x0c, 0x99]),
            Ok(()),
            "extra bytes allowed without $"
        );
        let p = ExpectPattern::parse("0a0b**0c$").unwrap();
        assert!(p.exact_len);
        let err = p.compare(&[0x0a, 0x0b, 0x00, 0x0c, 0x99]).unwrap_err();
        assert!(err.starts_with("received packet too long"), "{err}");
    }

    #[test]
    fn mismatch_shows_caret_at_first_differing_nibble() {
        let p = ExpectPattern::parse("0a0b0c").unwrap();
        let err = p.compare(&[0x0a, 0x0b, 0x0d]).unwrap_err();
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines[0], "differs at byte 2 (nibble 5)");
        assert_eq!(lines[1], "  expected: 0A 0B 0C");
        assert_eq!(lines[2], "  actual:   0A 0B 0D");
        // The caret sits under the D.
        let caret = lines[3].find('^').unwrap();
        assert_eq!(&lines[2][caret..caret + 1], "D");
    }

    #[test]
    fn short_packet_fails() {
        let p = ExpectPattern::parse("0a0b0c").unwrap();
        let err = p.compare(&[0x0a]).unwrap_err();
        assert!(err.starts_with("received packet too short"), "{err}");
    }

    #[test]
    fn bad_characters_are_rejected() {
        assert!(ExpectPattern::parse("0g").is_err());
        assert!(ExpectPattern::parse("00$00").is_err());
    }
}
