//! P4Runtime byte strings (spec "Bytestrings", reference §1.4).
//!
//! Values travel big-endian. We accept any length whose extra leading bytes
//! are zero (p4runtime-shell sends zero-padded values when its canonical
//! option is off) and reply in canonical form: the shortest string, one
//! byte for zero. Decoding to a native integer normalises keys, so a padded
//! DELETE finds an entry inserted canonically. Widths are 1..=128 bits.

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
    fn round_trip_for_any_value_and_padding() {
        for v in [0u128, 1, 255, 256, 0xdead_beef, u128::MAX >> 1] {
            let mut padded = vec![0; 3];
            padded.extend(encode(v));
            assert_eq!(decode(&padded, 128, "v").unwrap(), v);
        }
    }
}
