//! Reading and writing header fields at bit offsets in wire bytes.
//!
//! P4 headers are big-endian bit strings: a field of width `w` at bit offset
//! `o` occupies bits `o..o+w` counting from the most significant bit of the
//! first byte. Generated `extract` code checks the packet length once per
//! header (`data.len() * 8 >= offset + header bits`) and then calls
//! [`read_bits`] per field, which therefore never fails; [`write_bits`] is its
//! mirror for the deparser. Widths are `1..=128`.

/// Reads `width` bits starting at bit `bit_offset` of `data`, big-endian.
///
/// # Panics
/// If the bits are not all inside `data` (callers check the header length first).
#[inline]
pub fn read_bits(data: &[u8], bit_offset: usize, width: u32) -> u128 {
    debug_assert!((1..=128).contains(&width));
    let first = bit_offset / 8;
    let skip = (bit_offset % 8) as u32;
    let total = skip + width;
    // Fast path: one unaligned 8-byte load covers the field (most fields of
    // a header that is not the last thing in the packet).
    if total <= 64
        && let Some(chunk) = data.get(first..first + 8)
    {
        let v = u64::from_be_bytes(chunk.try_into().expect("8 bytes"));
        return u128::from((v << skip) >> (64 - width));
    }
    let n = total.div_ceil(8) as usize;
    if n <= 16 {
        let mut buf = [0u8; 16];
        buf[..n].copy_from_slice(&data[first..first + n]);
        (u128::from_be_bytes(buf) << skip) >> (128 - width)
    } else {
        // 17 bytes: a 128-bit field not byte-aligned.
        let head = read_bits(data, bit_offset, 64);
        let rest = read_bits(data, bit_offset + 64, width - 64);
        (head << (width - 64)) | rest
    }
}

/// Writes the low `width` bits of `value` at bit `bit_offset` of `data`,
/// big-endian, leaving the surrounding bits untouched.
///
/// # Panics
/// If the bits are not all inside `data`.
#[inline]
pub fn write_bits(data: &mut [u8], bit_offset: usize, width: u32, value: u128) {
    debug_assert!((1..=128).contains(&width));
    let value = value & crate::bits::mask(width);
    let first = bit_offset / 8;
    let skip = (bit_offset % 8) as u32;
    let total = skip + width;
    if total <= 64
        && let Some(chunk) = data.get_mut(first..first + 8)
    {
        let old = u64::from_be_bytes((&*chunk).try_into().expect("8 bytes"));
        let shift = 64 - total;
        let m = (u64::MAX >> (64 - width)) << shift;
        let new = (old & !m) | ((value as u64) << shift);
        chunk.copy_from_slice(&new.to_be_bytes());
        return;
    }
    let n = total.div_ceil(8) as usize;
    if n > 16 {
        write_bits(data, bit_offset, 64, value >> (width - 64));
        write_bits(data, bit_offset + 64, width - 64, value);
        return;
    }
    let mut buf = [0u8; 16];
    buf[..n].copy_from_slice(&data[first..first + n]);
    let old = u128::from_be_bytes(buf);
    let shift = 128 - total;
    let m = crate::bits::mask(width) << shift;
    let new = (old & !m) | (value << shift);
    data[first..first + n].copy_from_slice(&new.to_be_bytes()[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_ipv4_fields() {
        // version 4, ihl 5, tos 0xb8, total length 0x0054
        let hdr = [0x45u8, 0xb8, 0x00, 0x54];
        assert_eq!(read_bits(&hdr, 0, 4), 4);
        assert_eq!(read_bits(&hdr, 4, 4), 5);
        assert_eq!(read_bits(&hdr, 8, 6), 0x2e); // DSCP 46
        assert_eq!(read_bits(&hdr, 14, 2), 0);
        assert_eq!(read_bits(&hdr, 16, 16), 0x54);
        assert_eq!(read_bits(&hdr, 0, 32), 0x45b8_0054);
    }

    proptest! {
        #[test]
        fn write_then_read_roundtrips(
            bytes in proptest::collection::vec(any::<u8>(), 20),
            offset in 0usize..24,
            width in 1u32..=128,
            value in any::<u128>(),
        ) {
            let mut data = bytes.clone();
            write_bits(&mut data, offset, width, value);
            prop_assert_eq!(read_bits(&data, offset, width), value & crate::bits::mask(width));
            // Bits outside the field are untouched.
            for bit in (0..data.len() * 8).filter(|&b| b < offset || b >= offset + width as usize) {
                prop_assert_eq!(read_bits(&data, bit, 1), read_bits(&bytes, bit, 1));
            }
        }
    }
}
