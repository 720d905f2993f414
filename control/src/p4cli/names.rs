//! P4Runtime by name, as an engineer types it: names resolve against a
//! P4Info (full name, alias or a unique dotted suffix, through
//! [`p4_target::info::find_named`]); values are `10.0.0.1`, IPv6 literals,
//! `aa:bb:cc:dd:ee:ff`, `0x..` or decimal, encoded as canonical P4Runtime
//! byte strings (big-endian, shortest, one byte for zero, §8.4) after
//! checking they fit the field's bitwidth. Match syntax by kind: exact `V`,
//! LPM `V/LEN`, ternary `V&&&MASK`, range `LO..HI`, optional `V`; `*` leaves
//! a non-exact field out (don't care).

use p4_target::info::find_named;
use proto::p4::config::v1 as cfg;
use proto::p4::config::v1::match_field::MatchType;
use proto::p4::v1 as p4pb;

/// Why a name or a value was not understood.
#[derive(Debug, thiserror::Error)]
pub enum NameError {
    /// The name picks no object, or more than one.
    #[error(transparent)]
    Name(#[from] p4_target::info::NameError),
    /// A value that does not parse or does not fit.
    #[error("{what}: {why}")]
    BadValue {
        /// The field or parameter it was given for.
        what: String,
        /// What is wrong with it.
        why: String,
    },
}

fn bad(what: &str, why: impl Into<String>) -> NameError {
    NameError::BadValue {
        what: what.to_string(),
        why: why.into(),
    }
}

fn preamble_names(p: &Option<cfg::Preamble>) -> (&str, &str) {
    p.as_ref()
        .map(|p| (p.name.as_str(), p.alias.as_str()))
        .unwrap_or(("", ""))
}

/// Table `text` of `info`.
pub fn table<'a>(info: &'a cfg::P4Info, text: &str) -> Result<&'a cfg::Table, NameError> {
    Ok(find_named("table", info.tables.iter(), text, |t| {
        preamble_names(&t.preamble)
    })?)
}

/// Action `text` among the actions `table` may use.
pub fn action<'a>(
    info: &'a cfg::P4Info,
    table: &cfg::Table,
    text: &str,
) -> Result<&'a cfg::Action, NameError> {
    let allowed = info.actions.iter().filter(|a| {
        let id = a.preamble.as_ref().map_or(0, |p| p.id);
        table.action_refs.iter().any(|r| r.id == id)
    });
    Ok(find_named("action", allowed, text, |a| {
        preamble_names(&a.preamble)
    })?)
}

/// Counter `text` of `info`.
pub fn counter<'a>(info: &'a cfg::P4Info, text: &str) -> Result<&'a cfg::Counter, NameError> {
    Ok(find_named("counter", info.counters.iter(), text, |c| {
        preamble_names(&c.preamble)
    })?)
}

/// Parses an unsigned value (IPv4, IPv6, MAC, `0x` hex or decimal).
pub fn value(text: &str, bitwidth: i32, what: &str) -> Result<u128, NameError> {
    let v = if let Ok(a) = text.parse::<std::net::Ipv4Addr>() {
        u128::from(u32::from(a))
    } else if let Ok(a) = text.parse::<std::net::Ipv6Addr>() {
        u128::from(a)
    } else if text.len() == 17 && text.split(':').count() == 6 {
        let mut v = 0u128;
        for part in text.split(':') {
            let b = u8::from_str_radix(part, 16)
                .map_err(|_| bad(what, format!("bad MAC address {text:?}")))?;
            v = (v << 8) | u128::from(b);
        }
        v
    } else if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        u128::from_str_radix(hex, 16)
            .map_err(|e| bad(what, format!("bad hex value {text:?}: {e}")))?
    } else {
        text.parse::<u128>()
            .map_err(|e| bad(what, format!("bad value {text:?}: {e}")))?
    };
    if bitwidth <= 0 || (bitwidth < 128 && v >> bitwidth != 0) {
        return Err(bad(what, format!("{text} does not fit in {bitwidth} bits")));
    }
    Ok(v)
}

/// Canonical P4Runtime byte string of `v`.
pub fn bytes(v: u128) -> Vec<u8> {
    let all = v.to_be_bytes();
    let first = all.iter().position(|&b| b != 0).unwrap_or(15);
    all[first..].to_vec()
}

fn decode(b: &[u8]) -> u128 {
    b.iter()
        .rev()
        .take(16)
        .rev()
        .fold(0u128, |acc, &x| (acc << 8) | u128::from(x))
}

fn mask_of(bitwidth: i32) -> u128 {
    if bitwidth >= 128 {
        u128::MAX
    } else {
        (1u128 << bitwidth) - 1
    }
}

/// `b` as an engineer reads a field of `bitwidth` bits.
pub fn show(b: &[u8], bitwidth: i32) -> String {
    let v = decode(b);
    match bitwidth {
        32 => std::net::Ipv4Addr::from(v as u32).to_string(),
        48 => {
            let o = (v as u64).to_be_bytes();
            o[2..]
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect::<Vec<_>>()
                .join(":")
        }
        128 => std::net::Ipv6Addr::from(v).to_string(),
        w if w <= 16 => v.to_string(),
        _ => format!("{v:#x}"),
    }
}

/// The match kind of `f`.
pub fn kind(f: &cfg::MatchField) -> MatchType {
    match &f.r#match {
        Some(cfg::match_field::Match::MatchType(t)) => {
            MatchType::try_from(*t).unwrap_or(MatchType::Unspecified)
        }
        _ => MatchType::Unspecified,
    }
}

/// The field match `text` means for `f`, or None for a don't-care `*`.
pub fn field_match(f: &cfg::MatchField, text: &str) -> Result<Option<p4pb::FieldMatch>, NameError> {
    use p4pb::field_match::FieldMatchType as M;
    let what = f.name.as_str();
    let w = f.bitwidth;
    let k = kind(f);
    if text == "*" {
        return if k == MatchType::Exact {
            Err(bad(what, "an exact field cannot be left out"))
        } else {
            Ok(None)
        };
    }
    let m = match k {
        MatchType::Exact => M::Exact(p4pb::field_match::Exact {
            value: bytes(value(text, w, what)?),
        }),
        MatchType::Optional => M::Optional(p4pb::field_match::Optional {
            value: bytes(value(text, w, what)?),
        }),
        MatchType::Lpm => {
            let (v, len) = match text.split_once('/') {
                Some((v, l)) => (
                    value(v, w, what)?,
                    l.parse::<i32>()
                        .ok()
                        .filter(|l| (0..=w).contains(l))
                        .ok_or_else(|| bad(what, format!("bad prefix length {l:?}")))?,
                ),
                None => (value(text, w, what)?, w),
            };
            if len == 0 {
                return Ok(None);
            }
            let keep = mask_of(w) & !mask_of(w - len);
            M::Lpm(p4pb::field_match::Lpm {
                value: bytes(v & keep),
                prefix_len: len,
            })
        }
        MatchType::Ternary => {
            let (v, m) = match text.split_once("&&&") {
                Some((v, m)) => (value(v, w, what)?, value(m, w, what)?),
                None => (value(text, w, what)?, mask_of(w)),
            };
            if m == 0 {
                return Ok(None);
            }
            M::Ternary(p4pb::field_match::Ternary {
                value: bytes(v & m),
                mask: bytes(m),
            })
        }
        MatchType::Range => {
            let (lo, hi) = match text.split_once("..") {
                Some((lo, hi)) => (value(lo, w, what)?, value(hi, w, what)?),
                None => {
                    let v = value(text, w, what)?;
                    (v, v)
                }
            };
            if lo > hi {
                return Err(bad(what, format!("empty range {text}")));
            }
            if lo == 0 && hi == mask_of(w) {
                return Ok(None);
            }
            M::Range(p4pb::field_match::Range {
                low: bytes(lo),
                high: bytes(hi),
            })
        }
        MatchType::Unspecified => {
            return Err(bad(what, "match kind not supported by rocectl"));
        }
    };
    Ok(Some(p4pb::FieldMatch {
        field_id: f.id,
        field_match_type: Some(m),
    }))
}

/// One field match as text (`10.0.0.0/24`, `0x6&&&0xff`, `1..2`).
pub fn show_match(f: &cfg::MatchField, m: &p4pb::FieldMatch) -> String {
    use p4pb::field_match::FieldMatchType as M;
    let w = f.bitwidth;
    match &m.field_match_type {
        Some(M::Exact(e)) => show(&e.value, w),
        Some(M::Optional(e)) => show(&e.value, w),
        Some(M::Lpm(l)) => format!("{}/{}", show(&l.value, w), l.prefix_len),
        Some(M::Ternary(t)) => format!("{:#x}&&&{:#x}", decode(&t.value), decode(&t.mask)),
        Some(M::Range(r)) => format!("{}..{}", show(&r.low, w), show(&r.high, w)),
        _ => "?".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, bitwidth: i32, t: MatchType) -> cfg::MatchField {
        cfg::MatchField {
            id: 1,
            name: name.to_string(),
            bitwidth,
            r#match: Some(cfg::match_field::Match::MatchType(t as i32)),
            ..Default::default()
        }
    }

    #[test]
    fn values_parse_by_literal_kind_and_must_fit() {
        assert_eq!(value("10.0.0.1", 32, "f").unwrap(), 0x0a00_0001);
        assert_eq!(
            value("00:11:22:33:44:55", 48, "f").unwrap(),
            0x0011_2233_4455
        );
        assert_eq!(value("::1", 128, "f").unwrap(), 1);
        assert_eq!(value("0x1ff", 9, "f").unwrap(), 511);
        assert_eq!(value("300", 9, "f").unwrap(), 300);
        assert!(value("512", 9, "f").is_err());
        assert!(value("10.0.0.1", 16, "f").is_err());
        assert!(value("ten", 16, "f").is_err());
        assert_eq!(bytes(0), vec![0]);
        assert_eq!(bytes(0x0a00_0000), vec![10, 0, 0, 0]);
    }

    #[test]
    fn matches_by_kind() {
        use p4pb::field_match::FieldMatchType as M;
        let lpm = field("hdr.ipv4.dstAddr", 32, MatchType::Lpm);
        let m = field_match(&lpm, "10.0.0.7/24").unwrap().unwrap();
        assert_eq!(
            m.field_match_type,
            Some(M::Lpm(p4pb::field_match::Lpm {
                value: vec![10, 0, 0, 0],
                prefix_len: 24
            })),
            "host bits are cleared"
        );
        assert_eq!(show_match(&lpm, &m), "10.0.0.0/24");
        assert!(field_match(&lpm, "10.0.0.0/33").is_err());
        let t = field("hdr.ipv4.protocol", 8, MatchType::Ternary);
        let m = field_match(&t, "0x11&&&0xf0").unwrap().unwrap();
        assert_eq!(
            m.field_match_type,
            Some(M::Ternary(p4pb::field_match::Ternary {
                value: vec![0x10],
                mask: vec![0xf0]
            }))
        );
        let r = field("meta.l4_dport", 16, MatchType::Range);
        let m = field_match(&r, "1000..2000").unwrap().unwrap();
        assert_eq!(show_match(&r, &m), "1000..2000");
        assert!(field_match(&r, "9..1").is_err());
        assert!(field_match(&r, "*").unwrap().is_none());
        let e = field("meta.nhop_group", 16, MatchType::Exact);
        assert!(field_match(&e, "*").is_err());
    }
}
