//! Fixed-width integer arithmetic as P4_16 defines it (spec §8.6–8.7).
//!
//! Every `bit<W>` and `int<W>` value with `W <= 128` is held in a `u128`
//! (or a narrower native type chosen by the code generator) whose bits above
//! `W` are zero. Signed `int<W>` values are held in two's complement, also
//! masked to `W` bits; [`sext`] recovers the signed value when an operation
//! needs it (division, comparison, right shift). All functions are `const`
//! and branch-light so the generated code inlines them.

/// All-ones mask of the low `width` bits (`width` in `0..=128`).
#[inline(always)]
pub const fn mask(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// Truncates `value` to `width` bits: the wrap-around every P4 operation on
/// `bit<W>`/`int<W>` ends with.
#[inline(always)]
pub const fn wrap(value: u128, width: u32) -> u128 {
    value & mask(width)
}

/// Sign-extends the `width`-bit two's complement `value` to an `i128`.
#[inline(always)]
pub const fn sext(value: u128, width: u32) -> i128 {
    if width == 0 {
        return 0;
    }
    if width >= 128 {
        return value as i128;
    }
    let shift = 128 - width;
    ((value << shift) as i128) >> shift
}

/// Saturating unsigned addition `|+|` on `bit<W>`.
#[inline(always)]
pub const fn sat_add_u(a: u128, b: u128, width: u32) -> u128 {
    let max = mask(width);
    match a.checked_add(b) {
        Some(sum) if sum <= max => sum,
        _ => max,
    }
}

/// Saturating unsigned subtraction `|-|` on `bit<W>`.
#[inline(always)]
pub const fn sat_sub_u(a: u128, b: u128) -> u128 {
    a.saturating_sub(b)
}

/// Largest and smallest value of `int<W>`.
#[inline(always)]
const fn signed_bounds(width: u32) -> (i128, i128) {
    if width >= 128 {
        (i128::MAX, i128::MIN)
    } else if width == 0 {
        (0, 0)
    } else {
        let max = (1i128 << (width - 1)) - 1;
        (max, -max - 1)
    }
}

/// Saturating signed addition `|+|` on `int<W>`; inputs and output masked.
#[inline(always)]
pub const fn sat_add_s(a: u128, b: u128, width: u32) -> u128 {
    let (max, min) = signed_bounds(width);
    let sum = match sext(a, width).checked_add(sext(b, width)) {
        Some(s) => s,
        None => {
            if sext(a, width) > 0 {
                max
            } else {
                min
            }
        }
    };
    let clamped = if sum > max {
        max
    } else if sum < min {
        min
    } else {
        sum
    };
    wrap(clamped as u128, width)
}

/// Saturating signed subtraction `|-|` on `int<W>`; inputs and output masked.
#[inline(always)]
pub const fn sat_sub_s(a: u128, b: u128, width: u32) -> u128 {
    let (max, min) = signed_bounds(width);
    let diff = match sext(a, width).checked_sub(sext(b, width)) {
        Some(s) => s,
        None => {
            if sext(a, width) >= 0 {
                max
            } else {
                min
            }
        }
    };
    let clamped = if diff > max {
        max
    } else if diff < min {
        min
    } else {
        diff
    };
    wrap(clamped as u128, width)
}

/// Logical left shift on `bit<W>`/`int<W>`: shifting by `>= W` gives 0.
#[inline(always)]
pub const fn shl(value: u128, amount: u128, width: u32) -> u128 {
    if amount >= width as u128 {
        0
    } else {
        wrap(value << amount, width)
    }
}

/// Right shift on `bit<W>` (logical): shifting by `>= W` gives 0.
#[inline(always)]
pub const fn shr_u(value: u128, amount: u128, width: u32) -> u128 {
    if amount >= width as u128 {
        0
    } else {
        value >> amount
    }
}

/// Right shift on `int<W>` (arithmetic): fills with the sign bit.
#[inline(always)]
pub const fn shr_s(value: u128, amount: u128, width: u32) -> u128 {
    let amount = if amount >= 127 { 127 } else { amount as u32 };
    wrap((sext(value, width) >> amount) as u128, width)
}

/// Slice `value[hi:lo]` as an r-value.
#[inline(always)]
pub const fn slice(value: u128, hi: u32, lo: u32) -> u128 {
    (value >> lo) & mask(hi - lo + 1)
}

/// Writes `part` into bits `[hi:lo]` of `value` (slice as an l-value).
#[inline(always)]
pub const fn set_slice(value: u128, hi: u32, lo: u32, part: u128) -> u128 {
    let m = mask(hi - lo + 1) << lo;
    (value & !m) | ((part << lo) & m)
}

/// Concatenation `a ++ b` where `b` is `b_width` bits wide.
#[inline(always)]
pub const fn concat(a: u128, b: u128, b_width: u32) -> u128 {
    if b_width >= 128 {
        b
    } else {
        (a << b_width) | b
    }
}

/// Signed comparison `a < b` on `int<W>`.
#[inline(always)]
pub const fn lt_s(a: u128, b: u128, width: u32) -> bool {
    sext(a, width) < sext(b, width)
}

/// Cast between widths and signedness (spec §8.11.1): extend the source
/// (sign-extend when it is signed), then truncate to the target width.
#[inline(always)]
pub const fn cast(value: u128, from_width: u32, from_signed: bool, to_width: u32) -> u128 {
    let extended = if from_signed {
        sext(value, from_width) as u128
    } else {
        value
    };
    wrap(extended, to_width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_wraps() {
        assert_eq!(mask(0), 0);
        assert_eq!(mask(9), 0x1ff);
        assert_eq!(mask(128), u128::MAX);
        assert_eq!(wrap(0x1_0000, 16), 0);
        assert_eq!(wrap(255 + 1, 8), 0);
    }

    #[test]
    fn signed_values() {
        assert_eq!(sext(0xff, 8), -1);
        assert_eq!(sext(0x7f, 8), 127);
        assert_eq!(sat_add_s(0x7f, 1, 8), 0x7f);
        assert_eq!(sat_add_s(0x80, 0xff, 8), 0x80); // -128 + -1 saturates at -128
        assert_eq!(sat_sub_s(0x80, 1, 8), 0x80);
        assert_eq!(shr_s(0xf0, 2, 8), 0xfc);
        assert!(lt_s(0xff, 0x01, 8));
    }

    #[test]
    fn saturating_unsigned() {
        assert_eq!(sat_add_u(250, 10, 8), 255);
        assert_eq!(sat_add_u(u128::MAX, 1, 128), u128::MAX);
        assert_eq!(sat_sub_u(3, 10), 0);
    }

    #[test]
    fn shifts_past_width_are_zero() {
        assert_eq!(shl(1, 8, 8), 0);
        assert_eq!(shl(1, 7, 8), 0x80);
        assert_eq!(shr_u(0x80, 9, 8), 0);
    }

    #[test]
    fn slices_and_concat() {
        assert_eq!(slice(0xabcd, 11, 4), 0xbc);
        assert_eq!(set_slice(0xabcd, 11, 4, 0x12), 0xa12d);
        assert_eq!(concat(0xab, 0xcd, 8), 0xabcd);
        assert_eq!(cast(0xff, 8, true, 16), 0xffff);
        assert_eq!(cast(0xff, 8, false, 16), 0x00ff);
        assert_eq!(cast(0x1234, 16, false, 8), 0x34);
    }
}
