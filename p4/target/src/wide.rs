//! `bit<W>` and `int<W>` values wider than 128 bits (P4_16 spec §8.6–8.7,
//! §8.11.1 casts, §8.6 slices and concatenation).
//!
//! A value of width `W > 128` is a [`Bits<L>`] with `L = W.div_ceil(64)`
//! little-endian `u64` limbs. As with [`crate::bits`], the invariant is that
//! every bit at or above `W` is zero; each operation that can set such bits
//! takes the width and masks its result. Signed `int<W>` values are held in
//! two's complement masked to `W` bits; the signed operations
//! ([`Bits::shr_s`], [`Bits::lt_s`], [`Bits::sext`]) read the sign at bit
//! `W - 1`.
//!
//! Why our own type rather than a big-integer crate: the generated code needs
//! a `Copy` fixed-size array whose limb count is a const generic chosen per
//! width, P4's exact wrap-around/shift/slice semantics on a width that is not a
//! multiple of 64, and nothing that allocates on the per-packet path. The
//! arithmetic is a few dozen lines of schoolbook limb code, cheaper to own than
//! to adapt (`ruint` would fix the width at the type level as a multiple of
//! its `BITS` parameter and still need a mask per operation).
//!
//! Contract: nothing here allocates; nothing panics for any width `W` in
//! `1..=64 * L` (slice bounds are the caller's: `hi < W`, `lo <= hi`, as the
//! checker guarantees). Shifts by any amount are defined (≥ `W` gives zero, or
//! all sign bits for an arithmetic right shift); division by zero gives zero,
//! as the narrow code does.

use core::cmp::Ordering;

/// A bit string of up to `64 * L` bits, little-endian `u64` limbs.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Bits<const L: usize>(pub [u64; L]);

impl<const L: usize> Default for Bits<L> {
    fn default() -> Self {
        Self::ZERO
    }
}

impl<const L: usize> core::fmt::Debug for Bits<L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Hex without leading zero limbs, `_` between limbs.
        let Some(top) = self.0.iter().rposition(|&l| l != 0) else {
            return write!(f, "0x0");
        };
        write!(f, "0x")?;
        for (i, limb) in self.0[..=top].iter().rev().enumerate() {
            if i == 0 {
                write!(f, "{limb:x}")?;
            } else {
                write!(f, "_{limb:016x}")?;
            }
        }
        Ok(())
    }
}

impl<const L: usize> Bits<L> {
    /// The value 0.
    pub const ZERO: Self = Self([0; L]);

    /// Zero-extends a `u128` (truncated when `L < 2`).
    #[inline]
    pub const fn from_u128(v: u128) -> Self {
        let mut limbs = [0u64; L];
        if L > 0 {
            limbs[0] = v as u64;
        }
        if L > 1 {
            limbs[1] = (v >> 64) as u64;
        }
        Self(limbs)
    }

    /// Builds a constant from little-endian limbs (more limbs than `L` are
    /// dropped, fewer are zero-extended): what generated code uses for wide
    /// literals.
    #[inline]
    pub const fn from_limbs(src: &[u64]) -> Self {
        let mut limbs = [0u64; L];
        let mut i = 0;
        while i < L && i < src.len() {
            limbs[i] = src[i];
            i += 1;
        }
        Self(limbs)
    }

    /// The low 128 bits.
    #[inline]
    pub const fn low_u128(&self) -> u128 {
        let lo = if L > 0 { self.0[0] as u128 } else { 0 };
        let hi = if L > 1 { self.0[1] as u128 } else { 0 };
        (hi << 64) | lo
    }

    /// Keeps the low `width` bits: the wrap-around every operation ends with.
    #[inline]
    pub const fn wrap(mut self, width: u32) -> Self {
        let mut i = 0;
        while i < L {
            let base = (i as u32) * 64;
            if base >= width {
                self.0[i] = 0;
            } else if width - base < 64 {
                self.0[i] &= (1u64 << (width - base)) - 1;
            }
            i += 1;
        }
        self
    }

    /// Bit `i` (false above the limbs).
    #[inline]
    pub const fn bit(&self, i: u32) -> bool {
        let limb = (i / 64) as usize;
        limb < L && (self.0[limb] >> (i % 64)) & 1 == 1
    }

    /// Whether the value is zero.
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&l| l == 0)
    }

    /// Changes the limb count: zero-extends or truncates (callers wrap to the
    /// new width when truncating to a width that is not a multiple of 64).
    #[inline]
    pub fn resize<const M: usize>(self) -> Bits<M> {
        let mut out = Bits::<M>::ZERO;
        let n = L.min(M);
        out.0[..n].copy_from_slice(&self.0[..n]);
        out
    }

    /// `a + b` modulo `2^width`.
    #[inline]
    pub fn add(self, other: Self, width: u32) -> Self {
        let mut out = Self::ZERO;
        let mut carry = false;
        for i in 0..L {
            let (s, c1) = self.0[i].overflowing_add(other.0[i]);
            let (s, c2) = s.overflowing_add(carry as u64);
            out.0[i] = s;
            carry = c1 || c2;
        }
        out.wrap(width)
    }

    /// `a - b` modulo `2^width`.
    #[inline]
    pub fn sub(self, other: Self, width: u32) -> Self {
        let mut out = Self::ZERO;
        let mut borrow = false;
        for i in 0..L {
            let (d, b1) = self.0[i].overflowing_sub(other.0[i]);
            let (d, b2) = d.overflowing_sub(borrow as u64);
            out.0[i] = d;
            borrow = b1 || b2;
        }
        out.wrap(width)
    }

    /// `-a` modulo `2^width`.
    #[inline]
    pub fn neg(self, width: u32) -> Self {
        Self::ZERO.sub(self, width)
    }

    /// `a * b` modulo `2^width` (schoolbook, low `L` limbs only).
    #[inline]
    pub fn mul(self, other: Self, width: u32) -> Self {
        let mut out = Self::ZERO;
        for i in 0..L {
            let mut carry = 0u128;
            for j in 0..L - i {
                let t = self.0[i] as u128 * other.0[j] as u128 + out.0[i + j] as u128 + carry;
                out.0[i + j] = t as u64;
                carry = t >> 64;
            }
        }
        out.wrap(width)
    }

    /// Unsigned `(a / b, a % b)`; `(0, 0)` when `b` is zero (what the
    /// narrow code gives: P4 leaves it undefined). Bit-serial long division:
    /// `64 * L` steps, no allocation.
    #[inline]
    pub fn div_rem(self, other: Self) -> (Self, Self) {
        if other.is_zero() {
            return (Self::ZERO, Self::ZERO);
        }
        let bits = 64 * L as u32;
        let mut quotient = Self::ZERO;
        let mut rem = Self::ZERO;
        for i in (0..bits).rev() {
            // rem = rem << 1 | bit i of self (no width: rem < other fits).
            let carry = rem.bit(bits - 1);
            for k in (0..L).rev() {
                let from_below = if k > 0 { rem.0[k - 1] >> 63 } else { 0 };
                rem.0[k] = rem.0[k] << 1 | from_below;
            }
            rem.0[0] |= self.bit(i) as u64;
            if carry || !rem.lt_u(&other) {
                rem = rem.sub(other, bits);
                quotient.0[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
        (quotient, rem)
    }

    /// Saturating unsigned `a |+| b` on `bit<width>`.
    #[inline]
    pub fn sat_add_u(self, other: Self, width: u32) -> Self {
        let full = 64 * L as u32;
        let sum = self.add(other, full);
        let overflow = sum.lt_u(&self) || (width < full && sum.wrap(width) != sum);
        if overflow { Self::ones(width) } else { sum }
    }

    /// Saturating unsigned `a |-| b` on `bit<W>`.
    #[inline]
    pub fn sat_sub_u(self, other: Self, width: u32) -> Self {
        if self.lt_u(&other) {
            Self::ZERO
        } else {
            self.sub(other, width)
        }
    }

    /// Saturating signed `a |+| b` on `int<width>` (two's complement).
    #[inline]
    pub fn sat_add_s(self, other: Self, width: u32) -> Self {
        let sum = self.add(other, width);
        let sign = |v: &Self| v.bit(width - 1);
        if sign(&self) == sign(&other) && sign(&sum) != sign(&self) {
            Self::signed_limit(sign(&self), width)
        } else {
            sum
        }
    }

    /// Saturating signed `a |-| b` on `int<width>` (two's complement).
    #[inline]
    pub fn sat_sub_s(self, other: Self, width: u32) -> Self {
        let diff = self.sub(other, width);
        let sign = |v: &Self| v.bit(width - 1);
        if sign(&self) != sign(&other) && sign(&diff) != sign(&self) {
            Self::signed_limit(sign(&self), width)
        } else {
            diff
        }
    }

    /// The most negative (`negative`) or most positive `int<width>`.
    fn signed_limit(negative: bool, width: u32) -> Self {
        let max = Self::ones(width - 1);
        if negative { max.not(width) } else { max }
    }

    /// Bitwise and.
    #[inline]
    pub fn and(mut self, other: Self) -> Self {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a &= b;
        }
        self
    }

    /// Bitwise or.
    #[inline]
    pub fn or(mut self, other: Self) -> Self {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
        self
    }

    /// Bitwise exclusive or.
    #[inline]
    pub fn xor(mut self, other: Self) -> Self {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a ^= b;
        }
        self
    }

    /// Bitwise complement within `width` bits.
    #[inline]
    pub fn not(mut self, width: u32) -> Self {
        for a in self.0.iter_mut() {
            *a = !*a;
        }
        self.wrap(width)
    }

    /// Left shift; shifting by `>= width` gives zero.
    #[inline]
    pub fn shl(self, amount: u128, width: u32) -> Self {
        if amount >= width as u128 {
            return Self::ZERO;
        }
        let amount = amount as usize;
        let (limbs, bits) = (amount / 64, amount % 64);
        let mut out = Self::ZERO;
        for i in (limbs..L).rev() {
            let src = i - limbs;
            let mut v = self.0[src] << bits;
            if bits > 0 && src > 0 {
                v |= self.0[src - 1] >> (64 - bits);
            }
            out.0[i] = v;
        }
        out.wrap(width)
    }

    /// Logical right shift (`bit<W>`); shifting by `>= width` gives zero.
    #[inline]
    pub fn shr_u(self, amount: u128, width: u32) -> Self {
        if amount >= width as u128 {
            return Self::ZERO;
        }
        self.shr_raw(amount as usize)
    }

    fn shr_raw(self, amount: usize) -> Self {
        let (limbs, bits) = (amount / 64, amount % 64);
        let mut out = Self::ZERO;
        for i in 0..L.saturating_sub(limbs) {
            let src = i + limbs;
            let mut v = self.0[src] >> bits;
            if bits > 0 && src + 1 < L {
                v |= self.0[src + 1] << (64 - bits);
            }
            out.0[i] = v;
        }
        out
    }

    /// Arithmetic right shift (`int<W>`): fills with the sign bit; shifting by
    /// `>= width` gives all sign bits.
    #[inline]
    pub fn shr_s(self, amount: u128, width: u32) -> Self {
        let amount = amount.min(width.saturating_sub(1) as u128) as usize;
        let negative = width > 0 && self.bit(width - 1);
        let shifted = self.shr_raw(amount);
        if negative {
            // Set bits [width - amount, width).
            let fill = Self::ones(width).xor(Self::ones(width - amount as u32));
            shifted.or(fill)
        } else {
            shifted
        }
    }

    /// All-ones in the low `width` bits.
    #[inline]
    pub fn ones(width: u32) -> Self {
        Self([u64::MAX; L]).wrap(width)
    }

    /// Sign-extends the `width`-bit value to all `64 * L` bits.
    #[inline]
    pub fn sext(self, width: u32) -> Self {
        if width == 0 || !self.bit(width - 1) {
            self
        } else {
            self.or(Self([u64::MAX; L]).xor(Self::ones(width)))
        }
    }

    /// The value as a shift amount: itself when below 2^128, else
    /// `u128::MAX` (either way every bit is shifted out).
    #[inline]
    pub fn amount(&self) -> u128 {
        if self.0.iter().skip(2).all(|&l| l == 0) {
            self.low_u128()
        } else {
            u128::MAX
        }
    }

    /// Unsigned comparison.
    #[inline]
    pub fn cmp_u(&self, other: &Self) -> Ordering {
        for i in (0..L).rev() {
            match self.0[i].cmp(&other.0[i]) {
                Ordering::Equal => {}
                o => return o,
            }
        }
        Ordering::Equal
    }

    /// Unsigned `a < b`.
    #[inline]
    pub fn lt_u(&self, other: &Self) -> bool {
        self.cmp_u(other) == Ordering::Less
    }

    /// Signed `a < b` on `int<width>`.
    #[inline]
    pub fn lt_s(&self, other: &Self, width: u32) -> bool {
        let (sa, sb) = (self.bit(width - 1), other.bit(width - 1));
        if sa != sb { sa } else { self.lt_u(other) }
    }

    /// Slice `[hi:lo]` as an r-value that fits in a `u128` (`hi - lo < 128`).
    #[inline]
    pub fn slice_u128(&self, hi: u32, lo: u32) -> u128 {
        self.shr_raw(lo as usize).low_u128() & crate::bits::mask(hi - lo + 1)
    }

    /// Slice `[hi:lo]` as an r-value of `M` limbs.
    #[inline]
    pub fn slice<const M: usize>(&self, hi: u32, lo: u32) -> Bits<M> {
        self.shr_raw(lo as usize).resize::<M>().wrap(hi - lo + 1)
    }

    /// Writes `part` (its low `hi - lo + 1` bits) into bits `[hi:lo]`.
    #[inline]
    pub fn set_slice<const M: usize>(self, hi: u32, lo: u32, part: Bits<M>) -> Self {
        let field = hi - lo + 1;
        let top = hi + 1;
        let m = Self::ones(top).xor(Self::ones(lo));
        let placed = part.resize::<L>().wrap(field).shl(lo as u128, top);
        self.and(m.not(64 * L as u32)).or(placed)
    }

    /// Writes a `u128` part into bits `[hi:lo]`.
    #[inline]
    pub fn set_slice_u128(self, hi: u32, lo: u32, part: u128) -> Self {
        self.set_slice(hi, lo, Bits::<2>::from_u128(part))
    }

    /// Concatenation `a ++ b` as a value of this type: `high` (of any limb
    /// count) above the `low_width`-bit `low`.
    #[inline]
    pub fn concat<const A: usize, const B: usize>(
        high: Bits<A>,
        low: Bits<B>,
        low_width: u32,
        width: u32,
    ) -> Self {
        high.resize::<L>()
            .shl(low_width as u128, width)
            .or(low.resize::<L>())
    }

    /// Cast (spec §8.11.1): extend the `from_width`-bit source (sign-extend
    /// when it is signed), then truncate to `to_width`.
    #[inline]
    pub fn cast_from<const M: usize>(
        v: Bits<M>,
        from_width: u32,
        signed: bool,
        to_width: u32,
    ) -> Self {
        let mut out = Self::ZERO;
        let n = L.min(M);
        out.0[..n].copy_from_slice(&v.0[..n]);
        if signed && from_width > 0 && v.bit(from_width - 1) {
            // Fill everything from `from_width` up.
            let filled = Self([u64::MAX; L]).xor(Self::ones(from_width.min(64 * L as u32)));
            out = out.or(filled);
        }
        out.wrap(to_width)
    }

    /// Cast from a narrow (`<= 128`-bit) value.
    #[inline]
    pub fn cast_from_u128(v: u128, from_width: u32, signed: bool, to_width: u32) -> Self {
        Self::cast_from(Bits::<2>::from_u128(v), from_width, signed, to_width)
    }

    /// Cast to a narrow (`<= 128`-bit) value.
    #[inline]
    pub fn cast_to_u128(self, from_width: u32, signed: bool, to_width: u32) -> u128 {
        Bits::<2>::cast_from(self, from_width, signed, to_width).low_u128()
    }

    /// Reads `width` bits at bit `bit_offset` of `data`, big-endian (a
    /// header field at any bit offset).
    ///
    /// # Panics
    /// If the bits are not all inside `data` (callers check the header length).
    #[inline]
    pub fn read_bits(data: &[u8], bit_offset: usize, width: u32) -> Self {
        let mut out = Self::ZERO;
        // Limb `i` holds bits [64i, 64i+64) counting from the least
        // significant: read them from the end of the field backwards.
        let mut i = 0;
        let mut remaining = width;
        while remaining > 0 {
            let w = remaining.min(64);
            let off = bit_offset + (remaining - w) as usize;
            out.0[i] = crate::packet::read_bits(data, off, w) as u64;
            remaining -= w;
            i += 1;
        }
        out
    }

    /// Writes the low `width` bits at bit `bit_offset` of `data`, big-endian,
    /// leaving the surrounding bits untouched.
    ///
    /// # Panics
    /// If the bits are not all inside `data`.
    #[inline]
    pub fn write_bits(&self, data: &mut [u8], bit_offset: usize, width: u32) {
        let mut i = 0;
        let mut remaining = width;
        while remaining > 0 {
            let w = remaining.min(64);
            let off = bit_offset + (remaining - w) as usize;
            crate::packet::write_bits(data, off, w, self.0[i] as u128);
            remaining -= w;
            i += 1;
        }
    }

    /// The value from big-endian bytes (P4Runtime match/parameter bytes:
    /// any length; leading bytes above the limbs are dropped).
    #[inline]
    pub fn from_be_bytes(bytes: &[u8]) -> Self {
        let mut out = Self::ZERO;
        for (k, &b) in bytes.iter().rev().enumerate() {
            let limb = k / 8;
            if limb >= L {
                break;
            }
            out.0[limb] |= (b as u64) << ((k % 8) * 8);
        }
        out
    }

    /// Writes the value as big-endian bytes into `out` (its length decides
    /// how many low bytes are written).
    #[inline]
    pub fn write_be_bytes(&self, out: &mut [u8]) {
        let n = out.len();
        for (k, b) in out.iter_mut().enumerate() {
            let byte = n - 1 - k;
            let limb = byte / 8;
            *b = if limb < L {
                (self.0[limb] >> ((byte % 8) * 8)) as u8
            } else {
                0
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bits;

    /// A small seeded generator (xorshift64*) so the property tests are
    /// reproducible without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn u128(&mut self) -> u128 {
            ((self.next() as u128) << 64) | self.next() as u128
        }
    }

    type B2 = Bits<2>;

    /// Every operation agrees with `crate::bits` on `u128` for widths
    /// `1..=128`.
    #[test]
    fn agrees_with_u128_arithmetic() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let w = (rng.next() % 128) as u32 + 1;
            let x = bits::wrap(rng.u128(), w);
            let y = bits::wrap(rng.u128(), w);
            let amount = (rng.next() % 140) as u128;
            let (a, b) = (B2::from_u128(x), B2::from_u128(y));
            assert_eq!(a.add(b, w).low_u128(), bits::wrap(x.wrapping_add(y), w));
            assert_eq!(a.sub(b, w).low_u128(), bits::wrap(x.wrapping_sub(y), w));
            assert_eq!(a.mul(b, w).low_u128(), bits::wrap(x.wrapping_mul(y), w));
            assert_eq!(a.neg(w).low_u128(), bits::wrap(0u128.wrapping_sub(x), w));
            assert_eq!(a.not(w).low_u128(), bits::wrap(!x, w));
            assert_eq!(a.and(b).low_u128(), x & y);
            assert_eq!(a.or(b).low_u128(), x | y);
            assert_eq!(a.xor(b).low_u128(), x ^ y);
            assert_eq!(a.shl(amount, w).low_u128(), bits::shl(x, amount, w));
            assert_eq!(a.shr_u(amount, w).low_u128(), bits::shr_u(x, amount, w));
            assert_eq!(
                a.shr_s(amount, w).low_u128(),
                bits::shr_s(x, amount, w),
                "w={w} x={x:#x} >> {amount}"
            );
            assert_eq!(a.lt_u(&b), x < y);
            let (q, r) = a.div_rem(b);
            assert_eq!(
                (q.low_u128(), r.low_u128()),
                (x.checked_div(y).unwrap_or(0), x.checked_rem(y).unwrap_or(0))
            );
            assert_eq!(a.sat_add_u(b, w).low_u128(), bits::sat_add_u(x, y, w));
            assert_eq!(a.sat_sub_u(b, w).low_u128(), bits::sat_sub_u(x, y));
            assert_eq!(a.sat_add_s(b, w).low_u128(), bits::sat_add_s(x, y, w));
            assert_eq!(a.sat_sub_s(b, w).low_u128(), bits::sat_sub_s(x, y, w));
            assert_eq!(a.lt_s(&b, w), bits::lt_s(x, y, w));
            let hi = (rng.next() % w as u64) as u32;
            let lo = (rng.next() % (hi as u64 + 1)) as u32;
            assert_eq!(a.slice_u128(hi, lo), bits::slice(x, hi, lo));
            assert_eq!(
                a.set_slice_u128(hi, lo, y).low_u128(),
                bits::set_slice(x, hi, lo, y)
            );
            let to = (rng.next() % 128) as u32 + 1;
            for signed in [false, true] {
                assert_eq!(
                    B2::cast_from_u128(x, w, signed, to).low_u128(),
                    bits::cast(x, w, signed, to)
                );
            }
            if w <= 64 {
                let bw = (rng.next() % 64) as u32 + 1;
                let z = bits::wrap(y, bw);
                assert_eq!(
                    B2::concat(a, B2::from_u128(z), bw, w + bw).low_u128(),
                    bits::concat(x, z, bw)
                );
            }
        }
    }

    /// Adding 1 to 2^192 - 1 carries across three limbs.
    #[test]
    fn debug_is_hex_without_leading_zero_limbs() {
        assert_eq!(format!("{:?}", Bits::<4>::from_u128(0xab)), "0xab");
        assert_eq!(format!("{:?}", Bits::<4>::ZERO), "0x0");
        assert_eq!(
            format!("{:?}", Bits::<4>::from_u128(1).shl(64, 256)),
            "0x1_0000000000000000"
        );
    }

    #[test]
    fn carries_across_limbs() {
        let w = 336;
        let a = Bits::<6>::ones(192);
        let one = Bits::<6>::from_u128(1);
        assert_eq!(a.add(one, w).0, [0, 0, 0, 1, 0, 0]);
        // And wraps at the width: (2^336 - 1) + 1 = 0.
        assert!(Bits::<6>::ones(w).add(one, w).is_zero());
        // 0 - 1 = 2^336 - 1.
        assert_eq!(Bits::<6>::ZERO.sub(one, w), Bits::<6>::ones(w));
        // (2^200) * (2^100) = 2^300.
        let p = one.shl(200, w).mul(one.shl(100, w), w);
        assert_eq!(p, one.shl(300, w));
        assert_eq!(p.0[4], 1 << (300 - 256));
        // (2^200) * (2^200) wraps to 0 in 336 bits.
        assert!(one.shl(200, w).mul(one.shl(200, w), w).is_zero());
    }

    #[test]
    fn wide_division_and_saturation() {
        let w = 336;
        let one = Bits::<6>::from_u128(1);
        // (2^300 + 7) / 2^150 = 2^150, remainder 7.
        let n = one.shl(300, w).add(Bits::from_u128(7), w);
        let (q, r) = n.div_rem(one.shl(150, w));
        assert_eq!((q, r), (one.shl(150, w), Bits::from_u128(7)));
        // (2^336 - 1) / 3 = 0x5555...5 (336 bits of 01 pairs), remainder 0.
        let (q, r) = Bits::<6>::ones(w).div_rem(Bits::from_u128(3));
        assert_eq!(q.mul(Bits::from_u128(3), w), Bits::<6>::ones(w));
        assert!(r.is_zero());
        assert_eq!(n.div_rem(Bits::ZERO), (Bits::ZERO, Bits::ZERO));
        // bit<336>: max |+| 1 = max; 0 |-| 1 = 0.
        assert_eq!(Bits::<6>::ones(w).sat_add_u(one, w), Bits::<6>::ones(w));
        assert!(Bits::<6>::ZERO.sat_sub_u(one, w).is_zero());
        // bit<320> fills its 5 limbs: the carry out of the top limb saturates.
        assert_eq!(
            Bits::<5>::ones(320).sat_add_u(Bits::from_u128(1), 320),
            Bits::<5>::ones(320)
        );
        // int<336>: max |+| 1 = max, min |-| 1 = min.
        let max = Bits::<6>::ones(w - 1);
        let min = one.shl(335, w);
        assert_eq!(max.sat_add_s(one, w), max);
        assert_eq!(min.sat_sub_s(one, w), min);
        assert_eq!(min.sat_add_s(one, w), min.add(one, w));
    }

    #[test]
    fn shifts_of_wide_values() {
        let w = 320;
        let one = Bits::<5>::from_u128(1);
        assert_eq!(one.shl(319, w).0, [0, 0, 0, 0, 1 << 63]);
        assert!(one.shl(320, w).is_zero());
        assert!(one.shl(u128::MAX, w).is_zero());
        assert_eq!(one.shl(319, w).shr_u(319, w), one);
        assert!(one.shl(319, w).shr_u(320, w).is_zero());
        // int<320>: -2^319 >> 300 = -2^19; >> 400 = -1.
        let min = one.shl(319, w);
        assert_eq!(min.shr_s(300, w), Bits::<5>::from_u128(1 << 19).neg(w));
        assert_eq!(min.shr_s(400, w), Bits::<5>::ones(w));
        assert_eq!(one.shl(318, w).shr_s(400, w), Bits::<5>::ZERO);
        // Unaligned shift moves bits across limb boundaries.
        let v = Bits::<5>::from_u128(0xabcd).shl(60, w);
        assert_eq!(v.0[0], 0xd << 60);
        assert_eq!(v.0[1], 0xabc);
    }

    #[test]
    fn signed_wide_compare_and_cast() {
        let w = 256;
        let minus_one = Bits::<4>::ones(w);
        let one = Bits::<4>::from_u128(1);
        assert!(minus_one.lt_s(&one, w));
        assert!(!minus_one.lt_u(&one));
        // int<8> -2 cast to int<256> sign-extends; to bit<200> truncates.
        let v = Bits::<4>::cast_from_u128(0xfe, 8, true, 256);
        assert_eq!(v, Bits::<4>::from_u128(2).neg(256));
        let t = Bits::<4>::cast_from_u128(0xfe, 8, true, 200);
        assert_eq!(t, Bits::<4>::ones(200).xor(Bits::<4>::from_u128(1)));
        // bit<256> down to bit<16> keeps the low bits.
        assert_eq!(v.cast_to_u128(256, true, 16), 0xfffe);
        assert_eq!(
            Bits::<4>::sext(Bits::<4>::from_u128(0x80), 8).0,
            [u64::MAX - 0x7f, u64::MAX, u64::MAX, u64::MAX]
        );
    }

    #[test]
    fn wide_slices_and_concat() {
        // 336 bits: 0x0102..., a slice spanning limbs 1 and 2.
        let v = Bits::<6>::from_limbs(&[
            0x1111_2222_3333_4444,
            0x5555_6666_7777_8888,
            0x9999_aaaa_bbbb_cccc,
        ]);
        assert_eq!(v.slice_u128(143, 112), 0xcccc_5555);
        let s: Bits<2> = v.slice(191, 64);
        assert_eq!(s.0, [0x5555_6666_7777_8888, 0x9999_aaaa_bbbb_cccc]);
        let written = v.set_slice_u128(335, 320, 0xbeef);
        assert_eq!(written.0[5], 0xbeef);
        assert_eq!(written.slice_u128(335, 320), 0xbeef);
        assert_eq!(written.slice_u128(319, 192), v.slice_u128(319, 192));
        let cleared = written.set_slice_u128(335, 320, 0);
        assert_eq!(cleared, v);
        // bit<128> ++ bit<208> = bit<336>.
        let hi = Bits::<2>::from_u128(0xab);
        let lo = Bits::<4>::from_u128(0xcd);
        let c = Bits::<6>::concat(hi, lo, 208, 336);
        assert_eq!(c.slice_u128(215, 208), 0xab);
        assert_eq!(c.slice_u128(7, 0), 0xcd);
    }

    #[test]
    fn wire_bytes_at_any_offset() {
        let mut rng = Rng(7);
        for _ in 0..500 {
            let w = (rng.next() % 400) as u32 + 1;
            let off = (rng.next() % 13) as usize;
            let mut data = [0u8; 64];
            for b in data.iter_mut() {
                *b = rng.next() as u8;
            }
            let before = data;
            let v = Bits::<7>::from_limbs(&[
                rng.next(),
                rng.next(),
                rng.next(),
                rng.next(),
                rng.next(),
                rng.next(),
                rng.next(),
            ])
            .wrap(w);
            v.write_bits(&mut data, off, w);
            assert_eq!(Bits::<7>::read_bits(&data, off, w), v);
            for bit in (0..512).filter(|&b| b < off || b >= off + w as usize) {
                assert_eq!(
                    crate::packet::read_bits(&data, bit, 1),
                    crate::packet::read_bits(&before, bit, 1)
                );
            }
        }
        // Big-endian bytes: 42 bytes of bit<336>.
        let mut bytes = [0u8; 42];
        bytes[0] = 0x80;
        bytes[41] = 0x01;
        let v = Bits::<6>::from_be_bytes(&bytes);
        assert!(v.bit(335) && v.bit(0));
        let mut back = [0u8; 42];
        v.write_be_bytes(&mut back);
        assert_eq!(back, bytes);
        assert_eq!(Bits::<6>::read_bits(&bytes, 0, 336), v);
    }
}
