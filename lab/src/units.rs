//! Parsing the human units used on command lines and in topology files:
//! MAC addresses (`02:00:00:00:00:01`) and rates with an SI suffix
//! (`100G`, `250M`, `10k`, plain bit/s), returned as bit/s.

/// Errors of [`parse_mac`] and [`parse_rate_bps`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// Not six colon-separated hex octets.
    #[error("bad MAC address {0:?} (want six hex octets like 02:00:00:00:00:01)")]
    Mac(String),
    /// Not a number with an optional k/M/G/T suffix.
    #[error("bad rate {0:?} (want e.g. 100G, 250M, 10k or bit/s)")]
    Rate(String),
}

/// Parses `aa:bb:cc:dd:ee:ff` (also with `-`).
pub fn parse_mac(s: &str) -> Result<[u8; 6], UnitError> {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    if parts.len() != 6 {
        return Err(UnitError::Mac(s.to_string()));
    }
    let mut mac = [0u8; 6];
    for (m, p) in mac.iter_mut().zip(parts) {
        if p.is_empty() || p.len() > 2 {
            return Err(UnitError::Mac(s.to_string()));
        }
        *m = u8::from_str_radix(p, 16).map_err(|_| UnitError::Mac(s.to_string()))?;
    }
    Ok(mac)
}

/// Formats a MAC as lower-case colon-separated hex.
pub fn format_mac(mac: &[u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Parses a rate like `100G`, `2.5G`, `250M`, `10k`, `1000000`; optional
/// trailing `bps`/`b`. Returns bit/s.
pub fn parse_rate_bps(s: &str) -> Result<u64, UnitError> {
    let err = || UnitError::Rate(s.to_string());
    let t = s.trim();
    let t = t
        .strip_suffix("bps")
        .or_else(|| t.strip_suffix("bit/s"))
        .or_else(|| t.strip_suffix('b'))
        .unwrap_or(t);
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('g' | 'G') => (&t[..t.len() - 1], 1e9),
        Some('t' | 'T') => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    let v: f64 = num.trim().parse().map_err(|_| err())?;
    let bps = v * mult;
    if !bps.is_finite() || !(1.0..=1e15).contains(&bps) {
        return Err(err());
    }
    Ok(bps.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_parse_and_print_round_trip() {
        let m = parse_mac("02:AB:00:00:0c:01").unwrap();
        assert_eq!(m, [2, 0xab, 0, 0, 0xc, 1]);
        assert_eq!(format_mac(&m), "02:ab:00:00:0c:01");
        for bad in [
            "02:00:00:00:00",
            "02:00:00:00:00:100",
            "zz:00:00:00:00:00",
            "",
        ] {
            assert!(parse_mac(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rates_take_si_suffixes() {
        assert_eq!(parse_rate_bps("100G").unwrap(), 100_000_000_000);
        assert_eq!(parse_rate_bps("2.5G").unwrap(), 2_500_000_000);
        assert_eq!(parse_rate_bps("250Mbps").unwrap(), 250_000_000);
        assert_eq!(parse_rate_bps("10k").unwrap(), 10_000);
        assert_eq!(parse_rate_bps("1200").unwrap(), 1200);
        for bad in ["", "G", "-1G", "fastG", "0"] {
            assert!(parse_rate_bps(bad).is_err(), "{bad}");
        }
    }
}
