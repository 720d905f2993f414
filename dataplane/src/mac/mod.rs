//! The MAC layer of one port: classify received frames into MAC Control
//! (PFC / PAUSE, consumed here) and data (handed to the P4 parser), and build
//! outgoing PFC frames for the traffic manager's requests.
//!
//! Contract: frames are Ethernet without FCS. A frame to
//! 01:80:C2:00:00:01 with EtherType 0x8808 is MAC Control and is *never*
//! forwarded, flooded, queued, counted as data or paused (R-PFC-FMT-5): the
//! caller passes the returned [`MacControlRepr`] to
//! [`crate::tm::Tm::handle_mac_control`]. LLDP frames to the nearest-bridge
//! address (01:80:C2:00:00:0E, EtherType 0x88CC) are consumed too
//! ([`RxClass::Lldp`], 802.1AB), for the port's DCBX agent. Malformed MAC Control frames and
//! runts are consumed and counted. No allocation, no panics.
//! Spec: IEEE 802.3 Annex 31B / 802.1Qbb via reference §2 (R-PFC-FMT-1..6).

use crate::wire::ethernet::{EthernetAddress, EthernetFrame, WireError};
use crate::wire::lldp;
use crate::wire::pfc::{self, MacControlPacket, MacControlRepr, PfcRepr};

/// What a received frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxClass {
    /// A data frame for the forwarding pipeline.
    Data,
    /// MAC Control, consumed here; pass it to the traffic manager.
    Control(MacControlRepr),
    /// Too short to be Ethernet, or a truncated MAC Control frame: dropped.
    Malformed,
    /// LLDP to the nearest-bridge address: consumed here, never forwarded
    /// (802.1AB; pass it to the port's [`crate::dcbx::PortAgent`]).
    Lldp,
}

/// MAC counters of one port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MacStats {
    /// Data frames passed on.
    pub rx_data_frames: u64,
    /// PFC frames consumed.
    pub rx_pfc_frames: u64,
    /// Legacy PAUSE frames consumed.
    pub rx_pause_frames: u64,
    /// MAC Control frames with an unknown opcode consumed.
    pub rx_unknown_opcode_frames: u64,
    /// Runts and truncated MAC Control frames dropped.
    pub rx_malformed_frames: u64,
    /// PFC frames built for sending.
    pub tx_pfc_frames: u64,
    /// LLDP frames consumed.
    pub rx_lldp_frames: u64,
}

/// The MAC of one port.
#[derive(Clone, Copy, Debug)]
pub struct Mac {
    addr: EthernetAddress,
    stats: MacStats,
}

impl Mac {
    /// A MAC whose PFC frames carry source address `addr`.
    pub fn new(addr: EthernetAddress) -> Self {
        Mac {
            addr,
            stats: MacStats::default(),
        }
    }

    /// The port's MAC address.
    pub fn addr(&self) -> EthernetAddress {
        self.addr
    }

    /// Counters.
    pub fn stats(&self) -> MacStats {
        self.stats
    }

    /// Classify and count one received frame.
    pub fn handle_rx(&mut self, frame: &[u8]) -> RxClass {
        let Ok(eth) = EthernetFrame::new_checked(frame) else {
            self.stats.rx_malformed_frames += 1;
            return RxClass::Malformed;
        };
        if lldp::is_lldp(frame) {
            self.stats.rx_lldp_frames += 1;
            return RxClass::Lldp;
        }
        if !pfc::is_mac_control(&eth) {
            self.stats.rx_data_frames += 1;
            return RxClass::Data;
        }
        let repr =
            MacControlPacket::new_checked(eth.payload()).and_then(|p| MacControlRepr::parse(&p));
        match repr {
            Ok(repr) => {
                match repr {
                    MacControlRepr::Pfc(_) => self.stats.rx_pfc_frames += 1,
                    MacControlRepr::Pause(_) => self.stats.rx_pause_frames += 1,
                    MacControlRepr::Unknown { .. } => self.stats.rx_unknown_opcode_frames += 1,
                }
                RxClass::Control(repr)
            }
            Err(_) => {
                self.stats.rx_malformed_frames += 1;
                RxClass::Malformed
            }
        }
    }

    /// Build the 60-byte PFC frame for `repr` into `buf` (≥ 60 bytes).
    /// Returns the frame length.
    pub fn emit_pfc(&mut self, repr: &PfcRepr, buf: &mut [u8]) -> Result<usize, WireError> {
        let n = pfc::emit_frame(self.addr, &MacControlRepr::Pfc(*repr), buf)?;
        self.stats.tx_pfc_frames += 1;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADDR: EthernetAddress = EthernetAddress([0x00, 0x11, 0x22, 0x33, 0x44, 0x55]);

    #[test]
    fn pfc_round_trips_through_the_mac() {
        let mut tx = Mac::new(ADDR);
        let mut rx = Mac::new(EthernetAddress([2, 0, 0, 0, 0, 9]));
        let mut buf = [0u8; 64];
        let n = tx
            .emit_pfc(&PfcRepr::xoff(1 << 3, 0xffff), &mut buf)
            .unwrap();
        assert_eq!(n, 60);
        assert_eq!(
            rx.handle_rx(&buf[..n]),
            RxClass::Control(MacControlRepr::Pfc(PfcRepr::xoff(1 << 3, 0xffff)))
        );
        assert_eq!(rx.stats().rx_pfc_frames, 1);
        assert_eq!(rx.stats().rx_data_frames, 0);
        assert_eq!(tx.stats().tx_pfc_frames, 1);
    }

    #[test]
    fn data_and_lookalikes_are_data() {
        let mut mac = Mac::new(ADDR);
        let mut frame = [0u8; 60];
        frame[..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0x00, 0x00, 0x01]);
        frame[12..14].copy_from_slice(&[0x08, 0x00]); // right MAC, IPv4 EtherType
        assert_eq!(mac.handle_rx(&frame), RxClass::Data);
        frame[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 1]);
        frame[12..14].copy_from_slice(&[0x88, 0x08]); // MAC Control type to a unicast MAC
        assert_eq!(mac.handle_rx(&frame), RxClass::Data);
        assert_eq!(mac.stats().rx_data_frames, 2);
    }

    #[test]
    fn pause_unknown_and_malformed_are_consumed() {
        let mut mac = Mac::new(ADDR);
        let mut buf = [0u8; 60];
        pfc::emit_frame(
            ADDR,
            &MacControlRepr::Pause(pfc::PauseRepr { quanta: 7 }),
            &mut buf,
        )
        .unwrap();
        assert!(matches!(
            mac.handle_rx(&buf),
            RxClass::Control(MacControlRepr::Pause(_))
        ));
        buf[15] = 0x05;
        assert!(matches!(
            mac.handle_rx(&buf),
            RxClass::Control(MacControlRepr::Unknown { opcode: 5 })
        ));
        pfc::emit_frame(ADDR, &MacControlRepr::Pfc(PfcRepr::xon(1)), &mut buf).unwrap();
        assert_eq!(mac.handle_rx(&buf[..20]), RxClass::Malformed); // PFC PDU cut short
        assert_eq!(mac.handle_rx(&buf[..10]), RxClass::Malformed); // runt
        let s = mac.stats();
        assert_eq!(
            (
                s.rx_pause_frames,
                s.rx_unknown_opcode_frames,
                s.rx_malformed_frames
            ),
            (1, 1, 2)
        );
    }
}
