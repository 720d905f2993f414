"""Priority flow control, both directions (roce-semantics §2-§4).

Generation (R-PFC-TX-1/2, R-PFC-FMT-*): priority 3 is lossless on ports 0
and 1, port 1 is shaped to 10 Mb/s, and a static XOFF threshold of
16,000 B is set for priority 3. A burst of 40 x ~1 KB RoCE WRITEs (headroom set to 64 KiB so the
burst fits: PTF cannot honour the pause) from
port 0 to port 1 must make the switch send, on port 0, a well-formed PFC
frame enabling exactly priority 3 with a non-zero time, followed by an XON
(priority 3 enabled, time 0) once the queue drains; no data is lost.

Reception (R-PFC-RX-1..3, R-PFC-FMT-5): a PFC frame arriving on port 1
stops priority-3 egress of port 1 for quanta x 512 bit times at the port
speed (100 Mb/s: 0xFFFF quanta = 335.5 ms) while priority 0 passes; an XON
resumes it at once; the frame itself is consumed (never forwarded) and
counted; a priority without PFC enabled ignores it.
"""

import time

from scapy.layers.l2 import Ether

import fabric
import roce
from rsbase import ROUTER_MAC, SwitchTest, host_mac, routed

PRIO = 3
SHAPED_BPS = 100_000_000
QUANTUM_S = 512.0 / SHAPED_BPS
FULL_PAUSE_S = 0xFFFF * QUANTUM_S  # 0.3355 s
BURST = 40  # x 1,070 B: past the 16,000 B XOFF threshold, within threshold + headroom


class PfcTest(SwitchTest):
    def setUp(self):
        SwitchTest.setUp(self)
        self.route_v4("10.0.1.0/24", 1)

    def lossless(self, ports=(0, 1), shaped=(1,), pfc=(PRIO,), speed_bps=SHAPED_BPS):
        changes = {}
        for p in ports:
            changes["p%d" % p] = dict(pfc_priorities=list(pfc))
        for p in shaped:
            changes.setdefault("p%d" % p, {})["speed_bps"] = speed_bps
        self.set_ports(**changes)

    def data(self, prio_dscp, psn, payload_len=1000):
        return roce.roce_write(
            ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", dscp=prio_dscp, psn=psn, payload_len=payload_len
        )


class PfcXoffThenXonOnCongestion(PfcTest):
    """Congesting lossless priority 3 makes port 0 emit XOFF for priority 3 only, then XON; nothing lost."""

    def runTest(self):
        # 10 Mb/s: the pre-built burst arrives far faster, so port 1's queue grows.
        self.lossless(speed_bps=10_000_000)
        threshold = fabric.msg(
            "PriorityThreshold",
            priority=PRIO,
            static_threshold=fabric.msg("StaticThreshold", xoff_bytes=16000, xon_bytes=4000),
        )
        buf = self.fabric_call("GetBuffer")
        keep = [t for t in buf.thresholds if t.priority != PRIO]
        del buf.thresholds[:]
        buf.thresholds.extend(keep + [threshold])
        # PTF does not stop sending when paused: the headroom must absorb
        # the whole rest of the burst, so it is set explicitly.
        buf.headroom.explicit_bytes = 65536
        self.fabric_set("Buffer", buf)
        pfc_tx_before = self.prio_counters(0, PRIO).pfc_tx_frames
        self.send_burst(0, [self.data(26, i) for i in range(BURST)])
        frames = self.collect(quiet_s=1.0)
        pfc = [(t, roce.parse_pfc(d), d) for p, d, t in frames if p == 0 and roce.parse_pfc(d) is not None]
        delivered = sorted(Ether(d)[roce.BTH].psn for p, d, _ in frames if p == 1)
        others = [(p, d[:20].hex()) for p, d, _ in frames if p not in (0, 1) or (p == 0 and roce.parse_pfc(d) is None)]
        self.assertEqual(others, [], "unexpected frames")
        self.assertEqual(delivered, list(range(BURST)), "lossless priority lost data")
        self.assertTrue(pfc, "no PFC frame was sent on the ingress port")
        _, (vector, quanta), first = pfc[0]
        self.assertEqual(roce.pfc_problems(first), [])
        self.assertEqual(vector, 1 << PRIO, "XOFF enables priorities %s" % bin(vector))
        self.assertGreater(quanta[PRIO], 0, "first PFC frame is not an XOFF")
        xon = [(t, q) for t, (v, q), _ in pfc if v & (1 << PRIO) and q[PRIO] == 0]
        self.assertTrue(xon, "no XON followed the XOFF")
        for _, _, d in pfc:
            self.assertEqual(roce.pfc_problems(d), [])
        self.assertGreaterEqual(self.prio_counters(0, PRIO).pfc_tx_frames - pfc_tx_before, len(pfc))


class PfcPausesOnlyThatPriority(PfcTest):
    """PFC for priority 3 (0xFFFF quanta) on port 1: priority 0 passes at once, priority 3 waits ~335 ms."""

    def runTest(self):
        self.lossless()
        t0 = time.time()
        self.send(1, roce.pfc_frame(host_mac(1), {PRIO: 0xFFFF}))
        time.sleep(0.02)
        p3 = self.data(26, 1, payload_len=64)
        p0 = self.data(0, 2, payload_len=64)
        self.send(0, p3)
        self.send(0, p0)
        first = self.recv(port=1, timeout=1.0)
        self.assertIsNotNone(first, "nothing left port 1")
        self.assertEqual(first[1], bytes(routed(p0, host_mac(1))), "priority 0 did not overtake paused priority 3")
        self.assertLess(first[2] - t0, 0.2, "priority 0 was delayed too")
        second = self.recv(port=1, timeout=2.0)
        self.assertIsNotNone(second, "paused priority 3 never resumed")
        self.assertEqual(second[1], bytes(routed(p3, host_mac(1))))
        waited = second[2] - t0
        self.assertGreater(waited, FULL_PAUSE_S * 0.8, "pause too short: %.3f s" % waited)
        self.assertLess(waited, FULL_PAUSE_S + 0.3, "pause too long: %.3f s" % waited)


class PfcPauseTimeFollowsQuanta(PfcTest):
    """A 0x4000-quanta pause (83.9 ms at 100 Mb/s) holds priority 3 for about that long, not 0xFFFF."""

    def runTest(self):
        self.lossless()
        quanta = 0x4000
        t0 = time.time()
        self.send(1, roce.pfc_frame(host_mac(1), {PRIO: quanta}))
        time.sleep(0.01)
        p3 = self.data(26, 1, payload_len=64)
        self.send(0, p3)
        got = self.recv(port=1, timeout=1.0)
        self.assertIsNotNone(got)
        waited = got[2] - t0
        expect = quanta * QUANTUM_S
        self.assertGreater(waited, expect * 0.7, "pause %.3f s shorter than %.3f s" % (waited, expect))
        self.assertLess(waited, expect + 0.15, "pause %.3f s longer than %.3f s" % (waited, expect))


class PfcXonResumesAtOnce(PfcTest):
    """XOFF (0xFFFF) then XON after 100 ms: the held priority-3 packet leaves right after the XON."""

    def runTest(self):
        self.lossless()
        self.send(1, roce.pfc_frame(host_mac(1), {PRIO: 0xFFFF}))
        time.sleep(0.02)
        p3 = self.data(26, 1, payload_len=64)
        self.send(0, p3)
        self.assertIsNone(self.recv(port=1, timeout=0.1), "priority 3 was not paused")
        t_xon = time.time()
        self.send(1, roce.pfc_frame(host_mac(1), {PRIO: 0}))
        got = self.recv(port=1, timeout=1.0)
        self.assertIsNotNone(got)
        self.assertEqual(got[1], bytes(routed(p3, host_mac(1))))
        self.assertLess(got[2] - t_xon, 0.1, "XON did not resume priority 3 promptly")


class PfcFrameConsumedAndCounted(PfcTest):
    """A PFC frame is consumed by the receiving MAC: not forwarded anywhere, counted as pfc_rx."""

    def runTest(self):
        self.lossless()
        before = self.prio_counters(0, PRIO).pfc_rx_frames
        self.send(0, roce.pfc_frame(host_mac(0), {PRIO: 100}))
        self.assertEqual(self.collect(quiet_s=0.5), [], "PFC frame was forwarded")
        deadline = time.time() + 2
        while self.prio_counters(0, PRIO).pfc_rx_frames < before + 1 and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.prio_counters(0, PRIO).pfc_rx_frames, before + 1)


class PfcIgnoredOnLossyPriority(PfcTest):
    """Port 1 without PFC on priority 3 ignores a priority-3 pause (R-PFC-RX-3)."""

    def runTest(self):
        self.lossless(ports=(0, 1), shaped=(1,), pfc=())
        self.send(1, roce.pfc_frame(host_mac(1), {PRIO: 0xFFFF}))
        time.sleep(0.02)
        p3 = self.data(26, 1, payload_len=64)
        t0 = time.time()
        self.send(0, p3)
        got = self.recv(port=1, timeout=1.0)
        self.assertIsNotNone(got)
        self.assertEqual(got[1], bytes(routed(p3, host_mac(1))))
        self.assertLess(got[2] - t0, 0.1, "a lossy priority obeyed PFC")
