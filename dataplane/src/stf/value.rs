//! Numbers in STF files, decoded against the width of the key field or
//! action parameter they are written for.
//!
//! Forms (p4c `tools/stf/stf_lexer.py` and `bmv2stf.py`, plus a few that
//! bmv2's CLI accepts):
//! - decimal `42`, negative decimal `-3` (two's complement in the width);
//! - hexadecimal `0x2a`, binary `0b101`, octal `0o17`, where hex and binary
//!   digits may be `*` (don't care) in ternary context;
//! - IPv4 `10.0.0.1`, MAC `00:11:22:33:44:55`, IPv6 `2001:db8::1`.
//!
//! A hex/binary/octal ternary value masks only the digits written: as in
//! p4c's `makeMask`, `0x25**` on a 16-bit field is `0x2500 &&& 0xff00`, and
//! `0x1` on a 16-bit field is `0x1 &&& 0xf`. Every value must fit its width.

use std::net::{Ipv4Addr, Ipv6Addr};

use p4_target::bits::mask;

/// Why a value could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// Not a number in any accepted form.
    #[error("`{0}` is not a number (decimal, 0x.., 0b.., 0o.., IPv4, IPv6 or MAC)")]
    Malformed(String),
    /// Too large for the width.
    #[error("`{text}` does not fit in {width} bits")]
    TooWide {
        /// The text.
        text: String,
        /// The width.
        width: u32,
    },
    /// `*` digits where a plain value is required.
    #[error("`{0}`: don't-care digits are only allowed in ternary keys")]
    DontCareNotAllowed(String),
}

/// A decoded value and the mask of its significant bits (all ones unless
/// `*` digits or a short hex/binary ternary value were written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Masked {
    /// Value with don't-care bits zero.
    pub value: u128,
    /// Bits that were written.
    pub mask: u128,
}

fn radix_digits(text: &str) -> Option<(u32, &str)> {
    let t = text.as_bytes();
    if t.len() > 2 && t[0] == b'0' {
        match t[1] {
            b'x' | b'X' => return Some((16, &text[2..])),
            b'b' | b'B' => return Some((2, &text[2..])),
            b'o' | b'O' => return Some((8, &text[2..])),
            _ => {}
        }
    }
    None
}

/// Decodes `text` for a `width`-bit field, allowing `*` digits and returning
/// the mask of written bits (see the module doc).
pub fn parse_masked(text: &str, width: u32) -> Result<Masked, ValueError> {
    let too_wide = || ValueError::TooWide {
        text: text.to_string(),
        width,
    };
    if let Some((radix, digits)) = radix_digits(text) {
        let bits_per = match radix {
            16 => 4,
            8 => 3,
            _ => 1,
        };
        let mut value = 0u128;
        let mut m = 0u128;
        let mut any = false;
        for c in digits.chars() {
            if c == '_' {
                continue;
            }
            any = true;
            if value.leading_zeros() < bits_per || m.leading_zeros() < bits_per {
                return Err(too_wide());
            }
            value <<= bits_per;
            m <<= bits_per;
            if c == '*' {
                continue;
            }
            let d = c
                .to_digit(radix)
                .ok_or_else(|| ValueError::Malformed(text.to_string()))?;
            value |= d as u128;
            m |= mask(bits_per);
        }
        if !any {
            return Err(ValueError::Malformed(text.to_string()));
        }
        // Written digits beyond the width must be zero.
        if value & !mask(width) != 0 {
            return Err(too_wide());
        }
        return Ok(Masked {
            value,
            mask: m & mask(width),
        });
    }
    let value = parse_plain(text, width)?;
    Ok(Masked {
        value,
        mask: mask(width),
    })
}

/// Decodes `text` as a plain value for a `width`-bit field (no `*`).
pub fn parse_value(text: &str, width: u32) -> Result<u128, ValueError> {
    if text.contains('*') {
        return Err(ValueError::DontCareNotAllowed(text.to_string()));
    }
    if radix_digits(text).is_some() {
        return parse_masked(text, width).map(|m| m.value);
    }
    parse_plain(text, width)
}

fn parse_plain(text: &str, width: u32) -> Result<u128, ValueError> {
    let too_wide = || ValueError::TooWide {
        text: text.to_string(),
        width,
    };
    let fits = |v: u128| {
        if v & !mask(width) == 0 {
            Ok(v)
        } else {
            Err(too_wide())
        }
    };
    if let Some(neg) = text.strip_prefix('-') {
        let v: u128 = neg
            .parse()
            .map_err(|_| ValueError::Malformed(text.to_string()))?;
        // The most negative value of int<width> is -2^(width-1).
        if width == 0 || (width < 128 && v > 1u128 << (width - 1)) {
            return Err(too_wide());
        }
        return Ok(v.wrapping_neg() & mask(width));
    }
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let v: u128 = text.parse().map_err(|_| too_wide())?;
        return fits(v);
    }
    if let Ok(ip) = text.parse::<Ipv4Addr>() {
        return fits(u32::from(ip) as u128);
    }
    let groups: Vec<&str> = text.split(':').collect();
    if groups.len() == 6 && groups.iter().all(|g| (1..=2).contains(&g.len())) {
        let mut v = 0u128;
        for g in groups {
            let b =
                u8::from_str_radix(g, 16).map_err(|_| ValueError::Malformed(text.to_string()))?;
            v = (v << 8) | b as u128;
        }
        return fits(v);
    }
    if let Ok(ip) = text.parse::<Ipv6Addr>() {
        return fits(u128::from(ip));
    }
    Err(ValueError::Malformed(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_forms() {
        assert_eq!(parse_value("42", 8), Ok(42));
        assert_eq!(parse_value("0x2A", 8), Ok(42));
        assert_eq!(parse_value("0b101", 3), Ok(5));
        assert_eq!(parse_value("0o17", 4), Ok(15));
        assert_eq!(parse_value("10.0.1.2", 32), Ok(0x0a00_0102));
        assert_eq!(parse_value("00:11:22:33:44:5f", 48), Ok(0x0011_2233_445f));
        assert_eq!(
            parse_value("2001:db8::1", 128),
            Ok(0x2001_0db8_0000_0000_0000_0000_0000_0001)
        );
        assert_eq!(parse_value("-1", 8), Ok(0xff));
        assert_eq!(parse_value("-128", 8), Ok(0x80));
    }

    #[test]
    fn width_is_enforced() {
        assert!(matches!(
            parse_value("256", 8),
            Err(ValueError::TooWide { .. })
        ));
        assert!(matches!(
            parse_value("0x100", 8),
            Err(ValueError::TooWide { .. })
        ));
        assert!(matches!(
            parse_value("-129", 8),
            Err(ValueError::TooWide { .. })
        ));
        assert!(matches!(
            parse_value("10.0.0.1", 16),
            Err(ValueError::TooWide { .. })
        ));
        // Leading zero digits beyond the width are fine.
        assert_eq!(parse_value("0x00ff", 8), Ok(0xff));
        assert!(matches!(
            parse_value("ten", 8),
            Err(ValueError::Malformed(_))
        ));
        assert!(matches!(
            parse_value("0x", 8),
            Err(ValueError::Malformed(_))
        ));
    }

    #[test]
    fn dont_care_digits_make_a_mask() {
        assert_eq!(
            parse_masked("0x****0101", 32),
            Ok(Masked {
                value: 0x0101,
                mask: 0x0000_ffff
            })
        );
        assert_eq!(
            parse_masked("0x25**", 16),
            Ok(Masked {
                value: 0x2500,
                mask: 0xff00
            })
        );
        assert_eq!(
            parse_masked("0b1*1", 3),
            Ok(Masked {
                value: 0b101,
                mask: 0b101
            })
        );
        assert_eq!(
            parse_masked("7", 16),
            Ok(Masked {
                value: 7,
                mask: 0xffff
            })
        );
        assert_eq!(
            parse_value("0x2*", 8),
            Err(ValueError::DontCareNotAllowed("0x2*".into()))
        );
    }
}
