//! P4Runtime byte strings (spec "Bytestrings", reference §1.4).
//!
//! Values travel big-endian. We accept any length whose extra leading bytes
//! are zero (p4runtime-shell sends zero-padded values when its canonical
//! option is off) and reply in canonical form: the shortest string, one
//! byte for zero. Decoding to a native integer normalises keys, so a padded
//! DELETE finds an entry inserted canonically. Widths are 1..=128 bits.
//!
//! `int<W>` values (signed registers and digest members, whose P4Info type
//! spec says `int`) travel in two's complement: a string is read as a
//! signed big-endian number of its own length, must lie in
//! -2^(W-1)..2^(W-1), and is held as its W-bit pattern; the canonical
//! reply is the shortest string whose sign extension gives the value
//! (int<16> -1 is `ff`, 255 is `00 ff`).

use std::fmt;

use super::error::P4Error;

/// Decodes `bytes` as an unsigned value of `bitwidth` bits; `field` names
/// the field in errors. Empty strings and values wider than the field are
/// INVALID_ARGUMENT.
pub fn decode(bytes: &[u8], bitwidth: u32, field: impl fmt::Display) -> Result<u128, P4Error> {
    if bytes.is_empty() {
        return Err(P4Error::invalid(field, "empty byte string"));
    }
    let first = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    let digits = &bytes[first..];
    if digits.len() > 16 {
        return Err(P4Error::invalid(
            field,
            format!("value is wider than the field's {bitwidth} bits"),
        ));
    }
    let value = digits
        .iter()
        .fold(0u128, |acc, &b| (acc << 8) | u128::from(b));
    if bitwidth < 128 && value >> bitwidth != 0 {
        return Err(P4Error::invalid(
            field,
            format!("value {value:#x} is wider than the field's {bitwidth} bits"),
        ));
    }
    Ok(value)
}

/// The canonical byte string of `value`: shortest big-endian form, `[0]` for zero.
pub fn encode(value: u128) -> Vec<u8> {
    let bytes = value.to_be_bytes();
    let first = bytes.iter().position(|&b| b != 0).unwrap_or(15);
    bytes[first..].to_vec()
}

/// Decodes `bytes` as a two's complement `int<bitwidth>` and returns its
/// `bitwidth`-bit pattern (what the pipeline stores). Empty strings and
/// values outside the type's range are INVALID_ARGUMENT (callers that must
/// answer OUT_OF_RANGE map the code).
pub fn decode_signed(
    bytes: &[u8],
    bitwidth: u32,
    field: impl fmt::Display,
) -> Result<u128, P4Error> {
    if bytes.is_empty() {
        return Err(P4Error::invalid(field, "empty byte string"));
    }
    let negative = bytes[0] & 0x80 != 0;
    let pad = if negative { 0xff } else { 0 };
    // Sign-extension bytes carry no value.
    let first = bytes
        .iter()
        .position(|&b| b != pad)
        .unwrap_or(bytes.len() - 1);
    let digits = &bytes[first..];
    let out_of_range = || {
        P4Error::invalid(
            &field,
            format!("value is outside int<{bitwidth}> (two's complement, spec §8.4)"),
        )
    };
    if digits.len() > 16 {
        return Err(out_of_range());
    }
    let mut buf = [pad; 16];
    buf[16 - digits.len()..].copy_from_slice(digits);
    let value = i128::from_be_bytes(buf);
    // Sixteen digit bytes whose top bit disagrees with the sign (+2^127
    // written as 00 80 ...) need a 129th bit.
    if (value < 0) != negative {
        return Err(out_of_range());
    }
    if bitwidth == 0 {
        return if value == 0 {
            Ok(0)
        } else {
            Err(out_of_range())
        };
    }
    if bitwidth < 128 {
        let half = 1i128 << (bitwidth - 1);
        if value < -half || value >= half {
            return Err(out_of_range());
        }
    }
    Ok(value as u128 & mask(bitwidth))
}

/// The canonical byte string of the `bitwidth`-bit two's complement
/// pattern `pattern`: the shortest string whose sign extension is the value.
pub fn encode_signed(pattern: u128, bitwidth: u32) -> Vec<u8> {
    let shift = 128 - bitwidth.clamp(1, 128);
    let value = ((pattern << shift) as i128) >> shift;
    let bytes = value.to_be_bytes();
    let pad = if value < 0 { 0xff } else { 0 };
    let mut first = 0;
    // Drop a sign byte while the next byte still carries the same sign.
    while first < 15 && bytes[first] == pad && (bytes[first + 1] & 0x80 != 0) == (value < 0) {
        first += 1;
    }
    bytes[first..].to_vec()
}

/// All-ones in the low `bitwidth` bits.
pub fn mask(bitwidth: u32) -> u128 {
    if bitwidth >= 128 {
        u128::MAX
    } else {
        (1u128 << bitwidth) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_encoding_is_shortest_with_one_byte_zero() {
        assert_eq!(encode(0), vec![0]);
        assert_eq!(encode(1), vec![1]);
        assert_eq!(encode(0x1ff), vec![1, 0xff]);
        assert_eq!(encode(u128::MAX), vec![0xff; 16]);
    }

    #[test]
    fn padded_values_normalise_and_wide_ones_fail_naming_the_field() {
        assert_eq!(decode(&[0, 1], 9, "p").unwrap(), 1);
        assert_eq!(
            decode(
                &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7],
                9,
                "p"
            )
            .unwrap(),
            7
        );
        let e = decode(&[2, 0], 9, "match[0].exact.value").unwrap_err();
        assert_eq!(e.code, tonic::Code::InvalidArgument);
        assert!(
            e.message.starts_with("match[0].exact.value:"),
            "{}",
            e.message
        );
        assert!(decode(&[], 9, "p").is_err());
        assert_eq!(decode(&[1, 0xff], 9, "p").unwrap(), 0x1ff);
    }

    #[test]
    fn signed_values_are_twos_complement_with_canonical_sign_extension() {
        assert_eq!(encode_signed(0xff, 8), vec![0xff]);
        assert_eq!(encode_signed(0xffff, 16), vec![0xff]);
        assert_eq!(encode_signed(0x00ff, 16), vec![0x00, 0xff]);
        assert_eq!(encode_signed(0x80, 8), vec![0x80]);
        assert_eq!(encode_signed(0x7f, 8), vec![0x7f]);
        assert_eq!(encode_signed(0, 8), vec![0]);
        assert_eq!(encode_signed(0x1ff, 9), vec![0xff]);
        assert_eq!(encode_signed(0x100, 9), vec![0xff, 0x00]);
        assert_eq!(encode_signed(u128::MAX, 128), vec![0xff]);
        // Sign-extended strings of any length decode to the same pattern.
        assert_eq!(decode_signed(&[0xff], 16, "d").unwrap(), 0xffff);
        assert_eq!(decode_signed(&[0xff, 0xff, 0xff], 16, "d").unwrap(), 0xffff);
        assert_eq!(decode_signed(&[0x00, 0xff], 16, "d").unwrap(), 0x00ff);
        assert_eq!(decode_signed(&[0xff, 0x00], 9, "d").unwrap(), 0x100);
        assert_eq!(decode_signed(&[0x80], 8, "d").unwrap(), 0x80);
        // int<8> holds -128..=127: +128 and -129 do not fit; neither does
        // the unsigned pattern of -1 written zero-padded.
        assert!(decode_signed(&[0x00, 0x80], 8, "d").is_err());
        assert!(decode_signed(&[0xff, 0x7f], 8, "d").is_err());
        assert!(decode_signed(&[0x01, 0xff], 9, "d").is_err());
        assert!(decode_signed(&[], 8, "d").is_err());
        assert_eq!(decode_signed(&[0], 0, "d").unwrap(), 0);
        assert!(decode_signed(&[0xff], 0, "d").is_err());
        let mut plus_2_127 = vec![0u8; 17];
        plus_2_127[1] = 0x80;
        assert!(decode_signed(&plus_2_127, 128, "d").is_err());
        for w in [1u32, 4, 8, 9, 12, 16, 33, 64, 127, 128] {
            for v in [0i128, 1, -1, i128::MAX >> (128 - w), i128::MIN >> (128 - w)] {
                if w == 1 && v == 1 {
                    continue;
                }
                let pattern = v as u128 & mask(w);
                let wire = encode_signed(pattern, w);
                assert_eq!(
                    decode_signed(&wire, w, "d").unwrap(),
                    pattern,
                    "int<{w}> {v}"
                );
                let mut padded = vec![if v < 0 { 0xff } else { 0 }; 2];
                padded.extend(&wire);
                assert_eq!(
                    decode_signed(&padded, w, "d").unwrap(),
                    pattern,
                    "int<{w}> {v}"
                );
            }
        }
    }

    #[test]
    fn round_trip_for_any_value_and_padding() {
        for v in [0u128, 1, 255, 256, 0xdead_beef, u128::MAX >> 1] {
            let mut padded = vec![0; 3];
            padded.extend(encode(v));
            assert_eq!(decode(&padded, 128, "v").unwrap(), v);
        }
    }
}
