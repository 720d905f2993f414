"""Harness self-test against the tc stand-in (``run --standin``): a wire dut0<->dut1, dut2<->dut3.

These tests check the harness, not the switch: namespaces, veths, ptf's
ports, the scapy builders (RoCE with ICRC, PFC) and that a missing frame
fails. They need no P4Runtime server.
"""

import ptf
import ptf.testutils as tu
from ptf.base_tests import BaseTest

import roce


class WireTest(BaseTest):
    def setUp(self):
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()


class RoceCrossesWire(WireTest):
    """A RoCE WRITE sent on port 0 arrives byte-identical (ICRC included) on port 1 only."""

    def runTest(self):
        pkt = roce.roce_write("02:00:00:00:00:02", "02:00:00:00:00:01", "10.0.0.1", "10.0.1.2")
        self.assertTrue(roce.icrc_ok(bytes(pkt)))
        tu.send_packet(self, 0, pkt)
        tu.verify_packet(self, pkt, 1)
        tu.verify_no_other_packets(self)


class PfcCrossesWire(WireTest):
    """A PFC frame is carried by the stand-in (a bridge would drop it)."""

    def runTest(self):
        pkt = roce.pfc_frame("02:00:00:00:00:03", {3: 0xFFFF})
        tu.send_packet(self, 2, pkt)
        tu.verify_packet(self, pkt, 3)
        tu.verify_no_other_packets(self)


class NoLoopBetweenPairs(WireTest):
    """Port 0's traffic never shows up on ports 2/3: the pairs are separate."""

    def runTest(self):
        pkt = roce.udp_packet("02:00:00:00:00:02", "02:00:00:00:00:01", "10.0.0.1", "10.0.1.2")
        tu.send_packet(self, 1, pkt)
        tu.verify_packet(self, pkt, 0)
        tu.verify_no_packet(self, pkt, 2)
        tu.verify_no_packet(self, pkt, 3)
