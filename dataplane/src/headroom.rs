//! PFC headroom (xoff) sizing: the SONiC/Mellanox formula (R-HR-2) with ASIC
//! presets (R-HR-3), plus the Linux mlxsw (R-HR-5) and HPCC-simulator
//! (R-HR-6) variants as separate functions.
//!
//! Contract: pure functions, no allocation, no panics; inputs outside the
//! formula's domain (zero cell size, speed, MTU) return [`HeadroomError`].
//! Units: bytes, except where a name says otherwise (`_mbps`: port speed in
//! Mb/s as SONiC uses, R-UNIT-5; `_m`: metres, R-UNIT-3; `_kb`: ×1024 bytes,
//! R-UNIT-2). The Mellanox results are multiples of 1024 bytes.
//!
//! The formula is reproduced *as implemented* in SWSS
//! `buffer_headroom_mellanox.lua`, including its small-packet byte-share
//! quirk (D-8); tests pin E-3..E-8.

use crate::time::BITS_PER_QUANTUM;

/// Speed of light in cable used by SONiC (R-UNIT-4), m/s.
pub const CABLE_LIGHT_SPEED_MPS: f64 = 198_000_000.0;

/// Why an input cannot be sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeadroomError {
    /// Port speed 0.
    #[error("port speed must be > 0")]
    ZeroSpeed,
    /// Cell size 0.
    #[error("cell size must be > 0")]
    ZeroCell,
    /// MTU 0.
    #[error("MTU must be > 0")]
    ZeroMtu,
    /// Small-packet percentage above 100.
    #[error("small_packet_percentage must be 0..=100")]
    BadPercentage,
}

/// ASIC constant sets from SBI `asic_table.j2` (R-HR-3). The default,
/// Spectrum-2, is what the traffic manager models.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AsicPreset {
    /// Spectrum-1: cell 96.
    Spectrum1,
    /// Spectrum-2: cell 144.
    #[default]
    Spectrum2,
    /// Spectrum-3: cell 144.
    Spectrum3,
    /// Spectrum-4: cell 192, adds kb_on_tile.
    Spectrum4,
    /// Spectrum-5: cell 192, adds kb_on_tile.
    Spectrum5,
    /// Spectrum-6: cell 256, pipeline 42 KB, +18 KB xoff.
    Spectrum6,
    /// Tofino-2 (Barefoot constants; still run through the Mellanox formula).
    Tofino2,
}

/// The ASIC_TABLE constants one preset stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AsicConstants {
    /// Buffer cell size in bytes.
    pub cell_bytes: u32,
    /// `pipeline_latency` in KB (×1024).
    pub pipeline_latency_kb: f64,
    /// `mac_phy_delay` in KB (×1024).
    pub mac_phy_delay_kb: f64,
    /// `peer_response_time` in KB, used only for speeds missing from the quanta table.
    pub peer_response_time_kb: f64,
}

impl AsicPreset {
    /// The constants (R-HR-3).
    pub const fn constants(self) -> AsicConstants {
        let (cell_bytes, pipeline_latency_kb, peer_response_time_kb) = match self {
            AsicPreset::Spectrum1 => (96, 19.0, 3.8),
            AsicPreset::Spectrum2 | AsicPreset::Spectrum3 => (144, 19.0, 3.8),
            AsicPreset::Spectrum4 | AsicPreset::Spectrum5 => (192, 19.0, 3.8),
            AsicPreset::Spectrum6 => (256, 42.0, 3.8),
            AsicPreset::Tofino2 => (176, 68.0, 9.0),
        };
        AsicConstants {
            cell_bytes,
            pipeline_latency_kb,
            mac_phy_delay_kb: 0.8,
            peer_response_time_kb,
        }
    }
}

/// Inputs of the R-HR-2 formula.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeadroomInputs {
    /// Port speed in Mb/s (100000 = 100 GbE).
    pub speed_mbps: u64,
    /// Cable length in metres.
    pub cable_length_m: u32,
    /// Port MTU in bytes.
    pub port_mtu_bytes: u32,
    /// Gearbox delay in ns (0 = no gearbox).
    pub gearbox_delay_ns: u64,
    /// Serdes lanes (8 doubles xon and adds an MTU to size).
    pub lanes: u8,
    /// LOSSLESS_TRAFFIC_PATTERN `mtu` (R-HR-4 default 1024).
    pub lossless_mtu_bytes: u32,
    /// LOSSLESS_TRAFFIC_PATTERN `small_packet_percentage` (default 50).
    pub small_packet_percentage: u8,
    /// Shared headroom pool in use (R-PFC-TX-6).
    pub shared_headroom_pool: bool,
    /// ASIC constants.
    pub asic: AsicPreset,
}

impl HeadroomInputs {
    /// SONiC defaults (R-HR-4: lossless MTU 1024, 50 % small packets, 4 lanes,
    /// no gearbox, no SHP) for a port.
    pub fn new(
        speed_mbps: u64,
        cable_length_m: u32,
        port_mtu_bytes: u32,
        asic: AsicPreset,
    ) -> Self {
        HeadroomInputs {
            speed_mbps,
            cable_length_m,
            port_mtu_bytes,
            gearbox_delay_ns: 0,
            lanes: 4,
            lossless_mtu_bytes: 1024,
            small_packet_percentage: 50,
            shared_headroom_pool: false,
            asic,
        }
    }
}

/// A sized PG: thresholds in bytes, multiples of 1024 for the Mellanox formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadroomResult {
    /// XON threshold.
    pub xon_bytes: u64,
    /// XOFF headroom.
    pub xoff_bytes: u64,
    /// PG buffer size (xon + xoff, or xon with SHP).
    pub size_bytes: u64,
}

/// Peer response budget in pause quanta per speed (R-PFC-RX-5), or `None`
/// for a speed not in the table.
pub fn peer_response_quanta(speed_mbps: u64) -> Option<u64> {
    Some(match speed_mbps {
        100 => 1,
        1_000 => 2,
        10_000 => 67,
        25_000 => 80,
        40_000 => 118,
        50_000 => 147,
        100_000 => 394,
        200_000 => 453,
        400_000 | 800_000 => 905,
        _ => return None,
    })
}

/// Peer response in bytes: quanta · 512 / 8 (E-3), or `None` off-table.
pub fn peer_response_bytes(speed_mbps: u64) -> Option<u64> {
    peer_response_quanta(speed_mbps).map(|q| q * BITS_PER_QUANTUM / 8)
}

fn roundup_1024(x: f64) -> u64 {
    ((x / 1024.0).ceil() as u64) * 1024
}

/// R-HR-2: the SONiC/Mellanox headroom formula.
pub fn mellanox(inp: &HeadroomInputs) -> Result<HeadroomResult, HeadroomError> {
    if inp.speed_mbps == 0 {
        return Err(HeadroomError::ZeroSpeed);
    }
    if inp.port_mtu_bytes == 0 || inp.lossless_mtu_bytes == 0 {
        return Err(HeadroomError::ZeroMtu);
    }
    if inp.small_packet_percentage > 100 {
        return Err(HeadroomError::BadPercentage);
    }
    let c = inp.asic.constants();
    if c.cell_bytes == 0 {
        return Err(HeadroomError::ZeroCell);
    }
    let speed = inp.speed_mbps as f64;
    let cell = f64::from(c.cell_bytes);
    let lossless_mtu = f64::from(inp.lossless_mtu_bytes);
    let spp = f64::from(inp.small_packet_percentage);
    let eight_lanes = inp.lanes == 8;

    // 1. peer response
    let peer_response = match peer_response_bytes(inp.speed_mbps) {
        Some(b) => b as f64,
        None => c.peer_response_time_kb * 1024.0,
    };
    // 2. worst-case cell factor
    let worst_case_factor = if c.cell_bytes > 128 {
        (cell / 64.0).ceil()
    } else {
        (2.0 * cell / (1.0 + cell)).ceil()
    };
    // 3.-4. small-packet byte share (as implemented, D-8) and cell occupancy
    let spp_by_byte = 100.0 * 64.0 / ((spp * 64.0 + (100.0 - spp) * lossless_mtu) / 100.0);
    let cell_occupancy = (100.0 - spp_by_byte + spp_by_byte * worst_case_factor) / 100.0;
    // 5.-7. cable, gearbox, tile
    let bytes_on_cable =
        2.0 * f64::from(inp.cable_length_m) * speed * 1e9 / CABLE_LIGHT_SPEED_MPS / 8000.0;
    let bytes_on_gearbox = speed * inp.gearbox_delay_ns as f64 / (8.0 * 1024.0);
    let kb_on_tile = match inp.asic {
        AsicPreset::Spectrum4 | AsicPreset::Spectrum5 => speed / 1000.0 * 120.0 / 8.0,
        _ => 0.0,
    };
    // 8. propagation
    let propagation = f64::from(inp.port_mtu_bytes)
        + bytes_on_cable
        + 2.0 * bytes_on_gearbox
        + c.mac_phy_delay_kb * 1024.0
        + peer_response
        + kb_on_tile;
    // 9. xoff
    let mut xoff = roundup_1024(lossless_mtu + propagation * cell_occupancy);
    if inp.asic == AsicPreset::Spectrum6 {
        xoff += 18 * 1024;
    }
    // 10. small-packet compensation
    if !inp.shared_headroom_pool && inp.small_packet_percentage != 100 {
        let worst = roundup_1024(lossless_mtu + propagation * worst_case_factor);
        if xoff + 2048 < worst {
            xoff += 2048;
        }
    }
    // 11. xon
    let mut xon = roundup_1024(c.pipeline_latency_kb * 1024.0);
    if eight_lanes {
        xon *= 2;
    }
    // 12. size
    let size = if inp.shared_headroom_pool {
        xon
    } else {
        let extra = if eight_lanes {
            f64::from(inp.port_mtu_bytes)
        } else {
            0.0
        };
        roundup_1024(xoff as f64 + xon as f64 + extra)
    };
    Ok(HeadroomResult {
        xon_bytes: xon,
        xoff_bytes: xoff,
        size_bytes: size,
    })
}

/// R-HR-5 sizes in cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MlxswHeadroom {
    /// XOFF threshold: 2 · cells(MTU).
    pub threshold_cells: u64,
    /// Delay allowance: 2 · cells(delay_bytes) + cells(MTU) (PFC).
    pub delay_cells: u64,
    /// threshold + delay (×2 on 8-lane ports).
    pub buffer_cells: u64,
    /// `buffer_cells` × cell size.
    pub buffer_bytes: u64,
}

/// Fixed PAUSE delay of mlxsw ("100 m cable"), bytes.
pub const MLXSW_PAUSE_DELAY_BYTES: u64 = 19_476;

/// R-HR-5 (Linux mlxsw): `delay` comes from `dcb pfc set … delay N` in
/// *bits* (PFC), or the fixed 19,476-byte PAUSE delay when `pfc_delay_bits`
/// is `None` (legacy PAUSE, which mlxsw charges as delay + MTU, not 2·delay).
pub fn mlxsw(
    cell_bytes: u32,
    mtu_bytes: u32,
    pfc_delay_bits: Option<u64>,
    eight_lanes: bool,
) -> Result<MlxswHeadroom, HeadroomError> {
    if cell_bytes == 0 {
        return Err(HeadroomError::ZeroCell);
    }
    if mtu_bytes == 0 {
        return Err(HeadroomError::ZeroMtu);
    }
    let cell = u64::from(cell_bytes);
    let cells = |bytes: u64| bytes.div_ceil(cell);
    let mtu_cells = cells(u64::from(mtu_bytes));
    let threshold_cells = 2 * mtu_cells;
    let delay_cells = match pfc_delay_bits {
        Some(bits) => 2 * cells(bits.div_ceil(8)) + mtu_cells,
        None => cells(MLXSW_PAUSE_DELAY_BYTES) + mtu_cells,
    };
    let mut buffer_cells = threshold_cells + delay_cells;
    if eight_lanes {
        buffer_cells *= 2;
    }
    Ok(MlxswHeadroom {
        threshold_cells,
        delay_cells,
        buffer_cells,
        buffer_bytes: buffer_cells * cell,
    })
}

/// R-HR-6 (HPCC `third.cc`): 3 × (rate · one-way delay / 8), the division
/// done in integers before the ×3.
pub fn hpcc(rate_bps: u64, one_way_delay_ns: u64) -> u64 {
    let bytes = u128::from(rate_bps) * u128::from(one_way_delay_ns) / 8 / 1_000_000_000;
    u64::try_from(bytes * 3).unwrap_or(u64::MAX)
}

/// R-DT-3 (HPCC `SwitchMmu`): the PFC threshold
/// T = (buffer − Σheadroom − Σreserve − shared_used) >> shift, saturating at 0.
pub fn hpcc_pfc_threshold(
    buffer_bytes: u64,
    headroom_total_bytes: u64,
    reserve_total_bytes: u64,
    shared_used_bytes: u64,
    shift: u32,
) -> u64 {
    buffer_bytes
        .saturating_sub(headroom_total_bytes)
        .saturating_sub(reserve_total_bytes)
        .saturating_sub(shared_used_bytes)
        .checked_shr(shift)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(speed_mbps: u64, cable: u32, mtu: u32, asic: AsicPreset) -> HeadroomInputs {
        HeadroomInputs::new(speed_mbps, cable, mtu, asic)
    }

    #[test]
    fn peer_response_e3() {
        assert_eq!(peer_response_bytes(100_000), Some(25_216));
        assert_eq!(peer_response_bytes(25_000), Some(5_120));
        assert_eq!(peer_response_bytes(400_000), Some(57_920));
        assert_eq!(
            crate::time::pause_quanta_to_duration(394, 100_000_000_000).as_nanos(),
            2_018
        ); // 2.01728 µs, rounded up
        assert_eq!(peer_response_bytes(123), None);
    }

    #[test]
    fn spectrum2_100g_100m_mtu4200_e4() {
        let r = mellanox(&inputs(100_000, 100, 4200, AsicPreset::Spectrum2)).unwrap();
        assert_eq!(
            r,
            HeadroomResult {
                xon_bytes: 19_456,
                xoff_bytes: 56_320,
                size_bytes: 75_776
            }
        );
    }

    #[test]
    fn lossless_mtu_4200_spp_0_and_100_e5() {
        let mut i = inputs(100_000, 100, 4200, AsicPreset::Spectrum3);
        i.lossless_mtu_bytes = 4200;
        i.small_packet_percentage = 0;
        assert_eq!(
            mellanox(&i).unwrap(),
            HeadroomResult {
                xon_bytes: 19_456,
                xoff_bytes: 51_200,
                size_bytes: 70_656
            }
        );
        i.small_packet_percentage = 100;
        let r = mellanox(&i).unwrap();
        assert_eq!((r.xoff_bytes, r.size_bytes), (133_120, 152_576));
    }

    #[test]
    fn sonic_defaults_e6() {
        let r = mellanox(&inputs(100_000, 100, 9100, AsicPreset::Spectrum2)).unwrap();
        assert_eq!(
            r,
            HeadroomResult {
                xon_bytes: 19_456,
                xoff_bytes: 62_464,
                size_bytes: 81_920
            }
        );
        let r = mellanox(&inputs(100_000, 5, 9100, AsicPreset::Spectrum1)).unwrap();
        assert_eq!((r.xoff_bytes, r.size_bytes), (44_032, 63_488));
        let r = mellanox(&inputs(100_000, 300, 9100, AsicPreset::Spectrum1)).unwrap();
        assert_eq!((r.xoff_bytes, r.size_bytes), (84_992, 104_448));
    }

    #[test]
    fn shp_and_eight_lanes() {
        let mut i = inputs(100_000, 100, 4200, AsicPreset::Spectrum2);
        i.shared_headroom_pool = true;
        let r = mellanox(&i).unwrap();
        assert_eq!(r.size_bytes, r.xon_bytes);
        assert_eq!(r.xoff_bytes, 54_272); // no small-packet compensation with SHP (E-4 before +2048)
        let mut i = inputs(100_000, 100, 4200, AsicPreset::Spectrum2);
        i.lanes = 8;
        let r = mellanox(&i).unwrap();
        assert_eq!(r.xon_bytes, 2 * 19_456);
        assert_eq!(r.size_bytes, 56_320 + 2 * 19_456 + 5_120); // + MTU rounded up to 1024 multiple
    }

    #[test]
    fn presets_r_hr_3() {
        assert_eq!(AsicPreset::Spectrum1.constants().cell_bytes, 96);
        assert_eq!(AsicPreset::Spectrum4.constants().cell_bytes, 192);
        assert_eq!(AsicPreset::Spectrum6.constants().pipeline_latency_kb, 42.0);
        assert_eq!(AsicPreset::Tofino2.constants().cell_bytes, 176);
        // Spectrum-6 adds 18 KB to xoff relative to the same inputs without it.
        let r6 = mellanox(&inputs(100_000, 100, 4200, AsicPreset::Spectrum6)).unwrap();
        assert_eq!(r6.xon_bytes, 43_008);
        assert_eq!(r6.xoff_bytes % 1024, 0);
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert_eq!(
            mellanox(&inputs(0, 100, 4200, AsicPreset::Spectrum2)),
            Err(HeadroomError::ZeroSpeed)
        );
        assert_eq!(
            mellanox(&inputs(100_000, 100, 0, AsicPreset::Spectrum2)),
            Err(HeadroomError::ZeroMtu)
        );
        let mut i = inputs(100_000, 100, 4200, AsicPreset::Spectrum2);
        i.small_packet_percentage = 101;
        assert_eq!(mellanox(&i), Err(HeadroomError::BadPercentage));
        assert_eq!(mlxsw(0, 1500, None, false), Err(HeadroomError::ZeroCell));
    }

    #[test]
    fn mlxsw_e7() {
        let h = mlxsw(96, 4200, Some(32_768), false).unwrap();
        assert_eq!(
            (
                h.threshold_cells,
                h.delay_cells,
                h.buffer_cells,
                h.buffer_bytes
            ),
            (88, 130, 218, 20_928)
        );
        assert_eq!(
            mlxsw(96, 4200, Some(32_768), true).unwrap().buffer_cells,
            436
        );
    }

    #[test]
    fn hpcc_e8() {
        assert_eq!(hpcc(100_000_000_000, 1_000), 37_500);
        let buffer = 32 * 1024 * 1024;
        assert_eq!(
            hpcc_pfc_threshold(buffer, 16 * 37_500, 16 * 4096, 0, 3),
            4_111_112
        );
    }
}
