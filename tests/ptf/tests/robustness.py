"""Bad input on the wire: runts, frames over the MTU, random bytes on every port.

Asserted each time: nothing malformed leaves the switch, every dropped frame
is counted (``drop_reason`` for what the P4 pipeline drops, the fabric
``drops`` counters for what the MAC/traffic manager drops), the daemon
keeps answering P4Runtime, and valid traffic is forwarded right after.
"""

import random
import time

import ptf.testutils as tu

import roce
from rsbase import (
    DROP_PARSER_ERROR,
    DROP_UNKNOWN_L2_DST,
    ROUTER_MAC,
    SwitchTest,
    host_mac,
    routed,
)


class RobustTest(SwitchTest):
    def setUp(self):
        SwitchTest.setUp(self)
        self.route_v4("10.0.1.0/24", 1)

    def drop_total(self):
        return sum(self.packets("drop_reason", i) for i in range(8))

    def fabric_drop_total(self):
        return sum(c.drops for c in self.fabric_call("GetCounters").counters)

    def still_forwards(self, seq=0):
        pkt = roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", psn=1000 + seq)
        self.send(0, pkt)
        tu.verify_packet(self, routed(pkt, host_mac(1)), 1)


class RuntFramesDroppedAndCounted(RobustTest):
    """Frames of 14-40 bytes (IPv4, IPv6, RoCE, unknown types) are dropped, each counted once."""

    def runTest(self):
        full4 = bytes(roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2"))
        full6 = bytes(roce.roce_write(ROUTER_MAC, host_mac(0), "2001:db8::1", "2001:db8::2", ipv6=True))
        runts = [full4[:14], full4[:20], full4[:33], full6[:14], full6[:40]]
        unknown = bytes.fromhex("02000000aaaa") + bytes.fromhex(host_mac(0).replace(":", "")) + b"\x12\x34"
        parser_before = self.packets("drop_reason", DROP_PARSER_ERROR)
        l2_before = self.packets("drop_reason", DROP_UNKNOWN_L2_DST)
        for r in runts:
            self.send(0, r)
        self.send(0, unknown)
        tu.verify_no_other_packets(self, timeout=0.5)
        self.assertEqual(self.wait_counter("drop_reason", DROP_PARSER_ERROR, parser_before + 5), parser_before + 5)
        self.assertEqual(self.packets("drop_reason", DROP_UNKNOWN_L2_DST), l2_before + 1)
        self.still_forwards()


class JumboOverMtuDropped(RobustTest):
    """With port 0's MTU at 1500, a 3000-byte routed frame is dropped and counted; 1500 passes."""

    def runTest(self):
        self.set_ports(p0=dict(mtu_bytes=1500), p1=dict(mtu_bytes=1500))
        before = self.drop_total() + self.fabric_drop_total()
        big = roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", payload_len=3000 - 42)
        self.send(0, big)
        tu.verify_no_other_packets(self, timeout=0.5)
        self.assertGreater(self.drop_total() + self.fabric_drop_total(), before, "over-MTU frame not counted")
        fits = roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", payload_len=1500 - 28)
        self.send(0, fits)
        tu.verify_packet(self, routed(fits, host_mac(1)), 1)


class JumboWithinMtuForwarded(RobustTest):
    """A 9000-byte RoCE frame is forwarded intact under a 9100-byte port MTU."""

    def runTest(self):
        self.set_ports(p0=dict(mtu_bytes=9100), p1=dict(mtu_bytes=9100))
        pkt = roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", payload_len=9000 - 14 - 20 - 8 - 12 - 16 - 4)
        self.assertEqual(len(bytes(pkt)), 9000)
        self.send(0, pkt)
        got = self.recv(port=1, timeout=2)
        self.assertIsNotNone(got, "9000-byte frame not forwarded")
        self.assertEqual(len(got[1]), 9000, "frame length changed by the switch")
        self.assertEqual(got[1], bytes(routed(pkt, host_mac(1))))
        self.assertTrue(roce.icrc_ok(got[1]))


class RandomBytesOnEveryPort(RobustTest):
    """200 seeded random frames (random, IPv4- and IPv6-typed) on all 4 ports: none forwarded, all counted."""

    def runTest(self):
        rng = random.Random(0x5EED)
        frames = []
        for i in range(200):
            length = rng.randint(14, 600)
            body = bytearray(rng.getrandbits(8) for _ in range(length))
            body[0:6] = bytes([0x06]) + body[1:6]
            kind = i % 3
            if kind == 0:
                body[12:14] = b"\x08\x00"
            elif kind == 1:
                body[12:14] = b"\x86\xdd"
            elif body[12:14] in (b"\x88\x08", b"\x81\x00", b"\x88\xa8"):
                body[12:14] = b"\x12\x34"
            frames.append(bytes(body))
        before = self.drop_total()
        for i, f in enumerate(frames):
            self.send(self.ports[i % len(self.ports)], f)
        leaked = self.collect(quiet_s=0.5)
        self.assertEqual([(p, d[:20].hex()) for p, d, _ in leaked], [], "random frames were forwarded")
        self.assertEqual(self.wait_counter_total(before + len(frames)), before + len(frames))
        for seq in range(3):
            self.still_forwards(seq)

    def wait_counter_total(self, at_least, timeout_s=3.0):
        deadline = time.time() + timeout_s
        while True:
            total = self.drop_total()
            if total >= at_least or time.time() > deadline:
                return total
            time.sleep(0.1)


class GarbageAfterRoceHeaders(RobustTest):
    """A RoCE WRITE whose UDP length is shorter than the frame: forwarded, trailing bytes untouched."""

    def runTest(self):
        pkt = roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2")
        tail = bytes([0xEE]) * 31
        self.send(0, bytes(pkt) + tail)
        got = self.recv(port=1, timeout=2)
        self.assertIsNotNone(got)
        self.assertEqual(got[1], bytes(routed(pkt, host_mac(1))) + tail)
        tu.verify_no_other_packets(self, timeout=0.3)
