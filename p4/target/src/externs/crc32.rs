//! CRC-32 as zlib computes it (CRC-32/ISO-HDLC: poly 0x04C11DB7,
//! reflected, init and xorout 0xFFFFFFFF), the v1model `crc32` hash and the
//! default of `crc32_custom`.
//!
//! Contract: [`crc32`] and [`crc32_array`] give zlib's value for every
//! input; neither allocates nor panics.
//!
//! Why part of it is written by hand: the selector and ECMP hashes run over
//! short field lists whose length the generated code knows (a 37-byte IPv4
//! 5-tuple, a 4-byte flow hash). `crc32fast` folds 16 bytes at a time and
//! then reduces serially, a chain of about six dependent carry-less
//! multiplies for 37 bytes. [`crc32_array`] instead multiplies every 8-byte
//! word of the message by its own constant `x^(64d+32) mod P` (`d` = words
//! after it) at once, XORs the products and reduces the sum with one
//! slicing-by-8 table step: one multiply deep. Up to 8 bytes the table step
//! alone does it, inlined into the caller. Longer inputs, CPUs without
//! `pclmulqdq` and other architectures go to `crc32fast`, the one other
//! CRC-32 code the crate uses.
//!
//! The arithmetic, in the reflected domain zlib uses (bit `t` of a
//! little-endian word of `w` bits is the coefficient of `x^(w-1-t)`):
//! - with init 0 and no xorout, the register is `L(M) = M(x)·x^32 mod P`,
//!   linear in the message, and leading zero bytes do not change it; for a
//!   fixed length `n`, zlib's CRC is `L(M) xor crc32(0^n)` (the second term
//!   a constant per length, [`ZEROS`]);
//! - the message front-padded with zeros to whole words `W_i` gives
//!   `L(M) = (sum over i of W_i(x)·x^(64d_i)·x^32) mod P`; the last word's
//!   term is the table step itself, every other word is multiplied by
//!   `K[d] = x^(64d+32) mod P` (degree < 32), a product of degree < 95;
//! - the sum `S` (a 95-bit reflected value) splits into `H(x)·x^32 + Lo(x)`:
//!   `Lo` is already reduced, and `H(x)·x^32 mod P` is the CRC of `H`'s 8
//!   bytes from a zero register, a slicing-by-8 step.

/// `T[k][b]`: the zero-init register after byte `b` followed by `k` zero
/// bytes (slicing-by-8; `T[0]` is the classic byte table).
static T: [[u32; 256]; 8] = slicing_tables();

/// `K[d] = x^(64d+32) mod P`, reflected, for a word `d` words before the end.
static K: [u64; 8] = fold_constants();

/// `ZEROS[n]`: zlib's CRC-32 of `n` zero bytes.
static ZEROS: [u32; 65] = zeros_crcs();

/// The reflected polynomial.
const POLY: u32 = 0xEDB8_8320;

const fn slicing_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut s = 1;
    while s < 8 {
        let mut i = 0;
        while i < 256 {
            t[s][i] = (t[s - 1][i] >> 8) ^ t[0][(t[s - 1][i] & 0xff) as usize];
            i += 1;
        }
        s += 1;
    }
    t
}

/// The register after `crc` meets `zeros` zero bytes.
const fn after_zeros(table: &[u32; 256], mut crc: u32, zeros: usize) -> u32 {
    let mut i = 0;
    while i < zeros {
        crc = table[(crc & 0xff) as usize] ^ (crc >> 8);
        i += 1;
    }
    crc
}

const fn fold_constants() -> [u64; 8] {
    let t = slicing_tables();
    let mut k = [0u64; 8];
    let mut d = 0;
    while d < 8 {
        // The message 0x80, 0^(8d) is the polynomial x^(64d) (0x80 is its
        // first bit, the coefficient of x^(8·(8d+1) − 8)): its zero-init
        // register is x^(64d)·x^32 mod P.
        k[d] = after_zeros(&t[0], t[0][0x80], 8 * d) as u64;
        d += 1;
    }
    k
}

const fn zeros_crcs() -> [u32; 65] {
    let t = slicing_tables();
    let mut z = [0u32; 65];
    let mut n = 0;
    while n <= 64 {
        z[n] = !after_zeros(&t[0], !0, n);
        n += 1;
    }
    z
}

/// `H(x)·x^32 mod P` for the 8 bytes of `h` (little-endian): the register
/// after those bytes from zero.
#[inline(always)]
fn slice8(h: u64) -> u32 {
    let b = h.to_le_bytes();
    T[7][b[0] as usize]
        ^ T[6][b[1] as usize]
        ^ T[5][b[2] as usize]
        ^ T[4][b[3] as usize]
        ^ T[3][b[4] as usize]
        ^ T[2][b[5] as usize]
        ^ T[1][b[6] as usize]
        ^ T[0][b[7] as usize]
}

/// A CRC-32 hasher set up once: `crc32fast::Hasher::new` detects CPU
/// features on every call, which costs more than hashing a 5-tuple.
static HASHER: std::sync::OnceLock<crc32fast::Hasher> = std::sync::OnceLock::new();

/// CRC-32 of any input (`crc32fast`).
#[inline]
pub(crate) fn crc32(data: &[u8]) -> u32 {
    let mut h = HASHER.get_or_init(crc32fast::Hasher::new).clone();
    h.update(data);
    h.finalize()
}

/// CRC-32 of an input whose length is known at compile time: one table
/// step up to 8 bytes, folded with one carry-less multiply per word up to
/// 64 bytes (see the module doc).
#[inline]
pub(crate) fn crc32_array<const N: usize>(data: &[u8; N]) -> u32 {
    if N <= 8 {
        return sliced(data);
    }
    #[cfg(target_arch = "x86_64")]
    if N <= 64 && std::arch::is_x86_feature_detected!("pclmulqdq") {
        // SAFETY: the CPU has the one feature `folded` enables beyond the
        // x86_64 baseline (checked just above).
        return unsafe { folded(data) };
    }
    crc32(data)
}

/// [`crc32_array`] for `N <= 8`: the register after the message from zero
/// is one slicing-by-N step (byte `k` meets `N - 1 - k` zero bytes after
/// it), then zlib's CRC is that xor [`ZEROS`]`[N]`. No carry-less multiply,
/// so it inlines: an action selector's hash of one flow-hash field (4
/// bytes) stays in registers, where the folded path was a call that read
/// the caller's stored bytes back one at a time.
#[inline(always)]
fn sliced<const N: usize>(data: &[u8; N]) -> u32 {
    let mut crc = ZEROS[N];
    for (k, &b) in data.iter().enumerate() {
        crc ^= T[N - 1 - k][usize::from(b)];
    }
    crc
}

/// [`crc32_array`] for `N <= 64` with `pclmulqdq`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "pclmulqdq")]
unsafe fn folded<const N: usize>(data: &[u8; N]) -> u32 {
    use std::arch::x86_64::{
        _mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_set_epi64x, _mm_setzero_si128,
        _mm_unpackhi_epi64, _mm_xor_si128,
    };
    let words = N.div_ceil(8);
    let pad = words * 8 - N;
    let full = N / 8;
    // The front-padded words are read as the message's own aligned 8-byte
    // chunks shifted together, and the tail byte by byte: the caller has
    // just stored the message field by field, and a load across two of
    // those stores cannot take its bytes from the store queue (it waits
    // for both to reach the cache); a load inside one store can.
    let chunk = |j: usize| -> u64 {
        if j < full {
            u64::from_le_bytes(data[8 * j..8 * j + 8].try_into().unwrap_or_default())
        } else {
            let mut t = 0u64;
            for k in 0..N - 8 * full {
                // SAFETY: `8 * full + k < N`, in bounds of `data`; volatile
                // so the bytes are not merged into one load across stores.
                let b = unsafe { std::ptr::read_volatile(&data[8 * full + k]) };
                t |= u64::from(b) << (8 * k);
            }
            t
        }
    };
    let mut h = 0u64;
    let mut sum = _mm_setzero_si128();
    let mut prev = 0u64;
    for i in 0..words {
        let c = chunk(i);
        // Word `i` is bytes `8i - pad .. 8i + 8 - pad` of the message.
        let w = if pad == 0 {
            c
        } else {
            (prev >> (8 * (8 - pad))) | (c << (8 * pad))
        };
        prev = c;
        match words - 1 - i {
            0 => h ^= w,
            d => {
                let p = _mm_clmulepi64_si128(
                    _mm_set_epi64x(0, w as i64),
                    _mm_set_epi64x(0, K[d] as i64),
                    0x00,
                );
                sum = _mm_xor_si128(sum, p);
            }
        }
    }
    // `sum` bit u is the coefficient of x^(94-u): bits 0..=62 are H (one
    // place short of a 64-bit reflected word), bits 63..=94 are Lo.
    let lo64 = _mm_cvtsi128_si64(sum) as u64;
    let hi64 = _mm_cvtsi128_si64(_mm_unpackhi_epi64(sum, sum)) as u64;
    h ^= lo64 << 1;
    let lo = ((lo64 >> 63) | (hi64 << 1)) as u32;
    slice8(h) ^ lo ^ ZEROS[N]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte-at-a-time definition.
    fn reference(data: &[u8]) -> u32 {
        !data.iter().fold(!0u32, |crc, &b| {
            T[0][((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8)
        })
    }

    /// Every length the fold handles, and a few past it, against the
    /// definition and `crc32fast`.
    #[test]
    fn arrays_of_every_length_match_the_definition() {
        let bytes: Vec<u8> = (0..80u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        macro_rules! check {
            ($($n:literal)*) => {$(
                for start in [0, 3, 7] {
                    let a: [u8; $n] = bytes[start..start + $n].try_into().unwrap();
                    assert_eq!(crc32_array(&a), reference(&a), "N = {}", $n);
                    assert_eq!(crc32_array(&a), crc32(&a), "N = {}", $n);
                    let ones = [0xffu8; $n];
                    assert_eq!(crc32_array(&ones), reference(&ones), "ones, N = {}", $n);
                }
            )*};
        }
        check!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24
            25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48
            49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 72);
    }

    #[test]
    fn known_values() {
        // zlib's check value and the classic pangram.
        assert_eq!(crc32_array(b"123456789"), 0xCBF4_3926);
        assert_eq!(
            crc32_array(b"The quick brown fox jumps over the lazy dog"),
            0x414F_A339
        );
    }

    proptest::proptest! {
        #[test]
        fn any_slice_matches_the_definition(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            proptest::prop_assert_eq!(crc32(&data), reference(&data));
        }

        #[test]
        fn any_37_bytes_match_the_definition(data in proptest::array::uniform32(proptest::prelude::any::<u8>()), tail in proptest::prelude::any::<[u8; 5]>()) {
            let mut a = [0u8; 37];
            a[..32].copy_from_slice(&data);
            a[32..].copy_from_slice(&tail);
            proptest::prop_assert_eq!(crc32_array(&a), reference(&a));
        }
    }
}
