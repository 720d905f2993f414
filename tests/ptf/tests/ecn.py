"""ECN marking under a congested egress queue (roce-semantics R-ECN-1..4, R-ECN-7).

Congestion: egress port 1 is shaped to 10 Mb/s through the fabric service
(``SetPorts`` speed_bps) and a burst of ~1 KB RoCE WRITEs arrives at the
line rate of the veth. The ECN profile of (port 1, priority 3) has
Kmin 3,000 B and Kmax 6,000 B with Pmax 1.0, so every packet that departs
while more than 6,000 B wait behind it is CE-marked. Asserted: marks happen,
only on ECT packets, never below Kmin, each mark is counted in
``ecn_marked[port*8+prio]``, and a marked packet equals the original except
for the ECN bits, TTL and IPv4 checksum, with its ICRC still valid.
"""

import time

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

import fabric
import roce
from rsbase import ROUTER_MAC, SwitchTest, host_mac, routed

EGRESS = 1
PRIO = 3
SHAPED_BPS = 10_000_000  # 856 us per 1,074 B frame; a pre-built burst arrives far faster
BURST = 48
KMIN = 3000
KMAX = 6000
# Packets that may leave before the burst has fully arrived (the sender can
# be descheduled for a few ms; each frame takes 0.86 ms on the wire).
EARLY = 6


class EcnTest(SwitchTest):
    def setUp(self):
        SwitchTest.setUp(self)
        self.route_v4("10.0.1.0/24", EGRESS)

    def congest(self, enabled=True):
        self.set_ports(**{"p%d" % EGRESS: dict(speed_bps=SHAPED_BPS)})
        profile = fabric.msg(
            "EcnProfile", port=EGRESS, priority=PRIO, enabled=enabled, kmin_bytes=KMIN, kmax_bytes=KMAX, pmax=1.0
        )
        self.fabric_set("Ecn", fabric.msg("EcnConfig", profiles=[profile]))

    def burst(self, ecn, count=BURST, gap_s=0.0):
        """Send ``count`` RoCE WRITEs (psn = index); returns {psn: (sent_pkt, received_bytes)}."""
        sent = {
            i: roce.roce_write(
                ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", sport=0xC500, psn=i, ecn=ecn, payload_len=1000
            )
            for i in range(count)
        }
        if gap_s:
            for i in range(count):
                self.send(0, sent[i])
                time.sleep(gap_s)
        else:
            self.send_burst(0, [sent[i] for i in range(count)])
        frames = self.collect(quiet_s=0.6)
        self.last_span_s = (frames[-1][2] - frames[0][2]) if len(frames) > 1 else 0.0
        got = {}
        for port, data, _ in frames:
            self.assertEqual(port, EGRESS, "frame on unexpected port %d" % port)
            pkt = Ether(data)
            self.assertIn(UDP, pkt)
            psn = pkt[roce.BTH].psn
            self.assertNotIn(psn, got, "psn %d delivered twice" % psn)
            got[psn] = data
        self.assertEqual(sorted(got), list(range(count)), "packets lost or reordered under congestion")
        return {i: (sent[i], got[i]) for i in range(count)}

    def assert_shaped(self, result):
        """The burst left port 1 no faster than the shaper allows (else there was no queue)."""
        wire_s = sum(len(d) for _, d in result.values()) * 8.0 / SHAPED_BPS
        self.assertGreater(
            self.last_span_s,
            0.7 * wire_s,
            "burst left in %.2f ms, the shaper needs %.2f ms: egress not shaped, no queue built"
            % (self.last_span_s * 1e3, wire_s * 1e3),
        )

    def marked_count(self):
        return self.packets("ecn_marked", EGRESS * 8 + PRIO)

    def check_unmarked(self, pkt, data):
        self.assertEqual(data, bytes(routed(pkt, host_mac(EGRESS))))


class EcnMarksAboveKmax(EcnTest):
    """A 48-packet burst into a 10 Mb/s queue gets CE marks; ecn_marked counts exactly those."""

    def runTest(self):
        self.congest()
        before = self.marked_count()
        result = self.burst(roce.ECT0)
        marked = [i for i, (_, data) in result.items() if roce.ecn_of(data) == roce.CE]
        self.assert_shaped(result)
        for i, (pkt, data) in result.items():
            if i not in marked:
                self.check_unmarked(pkt, data)
        # R-ECN-3/4: decided at dequeue on q = the bytes left behind. Once
        # the burst is in, packet j leaves (BURST - 1 - j) frames behind it:
        # above Kmax it must be marked (Pmax 1.0 there means p = 1), at or
        # below Kmin it must not be. The first few leave before the whole
        # burst has arrived, so only j >= EARLY is held to the Kmax rule.
        frame_len = len(result[0][1])
        for j, (_, data) in result.items():
            behind = (BURST - 1 - j) * frame_len
            is_ce = roce.ecn_of(data) == roce.CE
            if behind > KMAX and j >= EARLY:
                self.assertTrue(is_ce, "psn %d left %d B behind (> Kmax) unmarked: marks %s" % (j, behind, marked))
            if behind <= KMIN:
                self.assertFalse(is_ce, "psn %d left %d B behind (<= Kmin) but was marked" % (j, behind))
        self.assertEqual(self.wait_counter("ecn_marked", EGRESS * 8 + PRIO, before + len(marked)), before + len(marked))


class EcnMarkedPacketsKeepIcrc(EcnTest):
    """Each CE-marked RoCE packet differs from the sent one only in ECN, TTL and checksum; ICRC valid."""

    def runTest(self):
        self.congest()
        result = self.burst(roce.ECT1)
        marked = 0
        for i, (pkt, data) in result.items():
            if roce.ecn_of(data) != roce.CE:
                continue
            marked += 1
            exp = routed(pkt, host_mac(EGRESS))
            exp[IP].tos = roce.tos(roce.DSCP_ROCE, roce.CE)
            self.assertEqual(data, bytes(exp), "marked psn %d" % i)
            self.assertTrue(roce.icrc_ok(data), "ICRC invalid after marking psn %d" % i)
            self.assertEqual(data[-4:], bytes(pkt)[-4:])
        self.assertGreater(marked, 0, "no packet was marked: the queue never passed Kmax")


class EcnNeverOnNotEct(EcnTest):
    """The same congestion leaves Not-ECT packets unmarked, then marks an ECT burst."""

    def runTest(self):
        self.congest()
        before = self.marked_count()
        for i, (pkt, data) in self.burst(roce.NOT_ECT).items():
            self.assertEqual(roce.ecn_of(data), roce.NOT_ECT, "Not-ECT psn %d was marked" % i)
            self.check_unmarked(pkt, data)
        self.assertEqual(self.marked_count(), before)
        ect = self.burst(roce.ECT0)
        self.assertTrue(any(roce.ecn_of(d) == roce.CE for _, d in ect.values()), "control burst not marked")


class EcnNoMarkBelowKmin(EcnTest):
    """Packets spaced 20 ms apart never queue: no marks although the profile is on."""

    def runTest(self):
        self.congest()
        before = self.marked_count()
        for i, (pkt, data) in self.burst(roce.ECT0, count=10, gap_s=0.02).items():
            self.check_unmarked(pkt, data)
        self.assertEqual(self.marked_count(), before)


class EcnDisabledProfileNoMark(EcnTest):
    """With the profile disabled the congested queue marks nothing; re-enabled it marks."""

    def runTest(self):
        self.congest(enabled=False)
        for i, (pkt, data) in self.burst(roce.ECT0).items():
            self.check_unmarked(pkt, data)
        self.congest(enabled=True)
        ect = self.burst(roce.ECT0)
        self.assertTrue(any(roce.ecn_of(d) == roce.CE for _, d in ect.values()), "re-enabled profile did not mark")
