//! The human units used on command lines, in topology files and in
//! reports: MAC addresses (`02:00:00:00:00:01`), rates with an SI suffix
//! (`100G`, `250M`, `10k`, plain bit/s) parsed to bit/s, and byte counts
//! and durations printed for people (`12.3 KB`, `26.6 ms`; reports' JSON
//! keeps the exact numbers). One parser for every `--speed` the project's
//! binaries take (`roceswitch`, `rocectl headroom`, `rocelab`, `roceperf`).

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

/// A rate for people in the form `--speed` takes: `100M`, `1G`, `2.5G`.
pub fn format_rate(bps: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("T", 1_000_000_000_000),
        ("G", 1_000_000_000),
        ("M", 1_000_000),
        ("k", 1_000),
    ];
    for (unit, scale) in UNITS {
        if bps >= scale {
            let v = bps as f64 / scale as f64;
            return format!(
                "{}{unit}",
                format!("{v:.3}")
                    .trim_end_matches('0')
                    .trim_end_matches('.')
            );
        }
    }
    bps.to_string()
}

/// A byte count for people: `512 B`, `12.3 KB`, `4.50 MB`, `1.20 GB`
/// (SI prefixes, as switch buffer sizes are quoted).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [(&str, f64); 3] = [("GB", 1e9), ("MB", 1e6), ("KB", 1e3)];
    for (unit, scale) in UNITS {
        let v = bytes as f64 / scale;
        if v >= 1.0 {
            return format!("{} {unit}", three_digits(v));
        }
    }
    format!("{bytes} B")
}

/// A duration for people: `850 ns`, `12.5 µs`, `26.6 ms`, `1.20 s`.
pub fn format_duration(d: std::time::Duration) -> String {
    let ns = d.as_nanos() as f64;
    let (v, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        return format!("{} ns", d.as_nanos());
    };
    format!("{} {unit}", three_digits(v))
}

/// `v` with three significant digits (`1.20`, `12.3`, `123`), at least 1.
fn three_digits(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_print_with_units() {
        use std::time::Duration;
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(999), "999 B");
        assert_eq!(format_bytes(12_345), "12.3 KB");
        assert_eq!(format_bytes(4_500_000), "4.50 MB");
        assert_eq!(format_bytes(16_777_216), "16.8 MB");
        assert_eq!(format_duration(Duration::from_nanos(850)), "850 ns");
        assert_eq!(format_duration(Duration::from_nanos(12_500)), "12.5 µs");
        assert_eq!(format_duration(Duration::from_micros(26_633)), "26.6 ms");
        assert_eq!(format_duration(Duration::from_millis(1200)), "1.20 s");
        for (bps, text) in [
            (100_000_000, "100M"),
            (1_000_000_000, "1G"),
            (2_500_000_000, "2.5G"),
        ] {
            assert_eq!(format_rate(bps), text);
            assert_eq!(parse_rate_bps(text).unwrap(), bps);
        }
    }

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
