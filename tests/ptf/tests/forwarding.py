"""Forwarding and parsing of roce_switch.p4 on the real switch.

IPv4/IPv6 routing (TTL/hop limit, IPv4 checksum), LPM longest match, the
default route, drops counted by reason (no route, TTL, checksum, unknown L2
destination, parser errors on truncated RoCE/IPv4 headers), L2 forwarding
per VLAN including 802.1ad double tags, IPv4 options, RoCE opcodes with
their extension headers (ICRC must arrive intact), trailing bytes after
the headers. Each test asserts the exact frame(s) out and that nothing else
leaves the switch, or the exact counter increment.
"""

import ptf.testutils as tu
from p4.v1 import p4runtime_pb2
from p4runtime_sh import shell as sh
from scapy.layers.inet import IP, UDP, IPOption_NOP, IPOption_RR
from scapy.layers.l2 import Ether
from scapy.packet import Raw

import roce
from rsbase import (
    DROP_CHECKSUM,
    DROP_NO_ROUTE,
    DROP_PARSER_ERROR,
    DROP_TTL_EXPIRED,
    DROP_UNKNOWN_L2_DST,
    ROUTER_MAC,
    SwitchTest,
    host_mac,
    routed,
)

NEG_TIMEOUT = 0.5


class Ipv4RouteTtlChecksum(SwitchTest):
    """A routed IPv4 UDP packet: new MACs, TTL 64 -> 63, IPv4 checksum recomputed, nothing else."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        pkt = roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", ttl=64)
        exp = routed(pkt, host_mac(1))
        self.assertEqual(Ether(bytes(exp))[IP].ttl, 63)
        self.send(0, pkt)
        tu.verify_packet(self, exp, 1)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)


class Ipv4RouteRoceIcrcIntact(SwitchTest):
    """A routed RoCE WRITE keeps its ICRC (TTL and checksum are masked out of it)."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 2)
        pkt = roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2")
        self.send(0, pkt)
        got = self.recv(port=2, timeout=2)
        self.assertIsNotNone(got, "routed RoCE packet not received on port 2")
        self.assertEqual(got[1], bytes(routed(pkt, host_mac(2))))
        self.assertTrue(roce.icrc_ok(got[1]), "ICRC invalid after routing")
        self.assertEqual(got[1][-4:], bytes(pkt)[-4:])
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)


class Ipv6RouteHopLimit(SwitchTest):
    """A routed IPv6 packet: new MACs, hop limit 64 -> 63."""

    def runTest(self):
        self.add_my_station()
        self.add_nexthop(5, 3, host_mac(3))
        self.add_route("2001:db8:1::/48", 5)
        pkt = roce.udp_packet(ROUTER_MAC, host_mac(0), "2001:db8::1", "2001:db8:1::2", ipv6=True)
        self.send(0, pkt)
        tu.verify_packet(self, routed(pkt, host_mac(3)), 3)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)


class Ipv6RoceRoute(SwitchTest):
    """RoCEv2 over IPv6 is routed with its ICRC intact."""

    def runTest(self):
        self.add_my_station()
        self.add_nexthop(6, 1, host_mac(1))
        self.add_route("2001:db8:2::/64", 6)
        pkt = roce.roce_write(ROUTER_MAC, host_mac(0), "2001:db8::1", "2001:db8:2::9", ipv6=True)
        self.send(0, pkt)
        got = self.recv(port=1, timeout=2)
        self.assertIsNotNone(got, "routed IPv6 RoCE packet not received")
        self.assertEqual(got[1], bytes(routed(pkt, host_mac(1))))
        self.assertTrue(roce.icrc_ok(got[1]))


class LpmLongestMatchWins(SwitchTest):
    """/8, /24 and /25 overlap: each destination leaves by its longest matching prefix."""

    def runTest(self):
        self.add_my_station()
        for nh, port in ((1, 1), (2, 2), (3, 3)):
            self.add_nexthop(nh, port, host_mac(port))
        self.add_route("10.0.0.0/8", 1)
        self.add_route("10.0.1.0/24", 2)
        self.add_route("10.0.1.128/25", 3)
        for dst, port in (("10.0.1.200", 3), ("10.0.1.5", 2), ("10.2.0.1", 1), ("10.0.1.128", 3), ("10.0.1.127", 2)):
            pkt = roce.udp_packet(ROUTER_MAC, host_mac(0), "10.9.9.9", dst)
            self.send(0, pkt)
            tu.verify_packet(self, routed(pkt, host_mac(port)), port)
            tu.verify_no_other_packets(self, timeout=0.2)


class DefaultRouteZeroPrefix(SwitchTest):
    """A /0 route (LPM field omitted, as P4Runtime spells it) catches what nothing else matches."""

    def runTest(self):
        self.add_my_station()
        self.add_nexthop(1, 1, host_mac(1))
        self.add_nexthop(2, 2, host_mac(2))
        self.add_route("10.0.1.0/24", 1)
        # p4runtime-shell refuses prefix 0, so write the entry directly.
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
        req.election_id.high = 0
        req.election_id.low = 1
        up = req.updates.add()
        up.type = p4runtime_pb2.Update.INSERT
        te = up.entity.table_entry
        te.table_id = sh.TableEntry("ipv4_lpm").id
        te.action.action.action_id = sh.context.get_obj_id(sh.P4Type.action, "set_nexthop_id")
        param = te.action.action.params.add()
        param.param_id = sh.context.get_param_id("set_nexthop_id", "nexthop_id")
        param.value = b"\x02"
        sh.client.write(req)
        for dst, port in (("192.0.2.1", 2), ("10.0.1.1", 1)):
            pkt = roce.udp_packet(ROUTER_MAC, host_mac(0), "10.9.9.9", dst)
            self.send(0, pkt)
            tu.verify_packet(self, routed(pkt, host_mac(port)), port)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)


class NoRouteDropCounted(SwitchTest):
    """No matching route: nothing leaves, drop_reason[NO_ROUTE] grows by exactly 1."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        before = self.packets("drop_reason", DROP_NO_ROUTE)
        self.send(0, roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "172.16.0.1"))
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
        self.assertEqual(self.wait_counter("drop_reason", DROP_NO_ROUTE, before + 1), before + 1)


class TtlExpiredDropCounted(SwitchTest):
    """TTL 1 is not forwarded; drop_reason[TTL_EXPIRED] counts it."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        before = self.packets("drop_reason", DROP_TTL_EXPIRED)
        self.send(0, roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", ttl=1))
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
        self.assertEqual(self.wait_counter("drop_reason", DROP_TTL_EXPIRED, before + 1), before + 1)


class BadIpv4ChecksumDropCounted(SwitchTest):
    """An IPv4 header with a wrong checksum is dropped and counted (drop_reason[CHECKSUM])."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        pkt = roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2")
        good = Ether(bytes(pkt))[IP].chksum
        pkt[IP].chksum = good ^ 0x0101
        before = self.packets("drop_reason", DROP_CHECKSUM)
        self.send(0, pkt)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
        self.assertEqual(self.wait_counter("drop_reason", DROP_CHECKSUM, before + 1), before + 1)


class UnknownL2DestinationDroppedNotFlooded(SwitchTest):
    """A frame to an unknown MAC is dropped and counted, never flooded (R-DL-1)."""

    def runTest(self):
        self.add_l2(0, host_mac(1), 1)
        before = self.packets("drop_reason", DROP_UNKNOWN_L2_DST)
        self.send(0, roce.udp_packet("02:00:00:00:99:99", host_mac(0), "10.0.0.1", "10.0.0.2"))
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
        self.assertEqual(self.wait_counter("drop_reason", DROP_UNKNOWN_L2_DST, before + 1), before + 1)


class L2ForwardUntagged(SwitchTest):
    """Untagged frames are switched on (vid 0, dst MAC), unchanged."""

    def runTest(self):
        self.add_l2(0, host_mac(2), 2)
        pkt = roce.roce_write(host_mac(2), host_mac(0), "10.0.0.1", "10.0.0.3")
        self.send(0, pkt)
        tu.verify_packet(self, pkt, 2)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)


class L2ForwardInVlan(SwitchTest):
    """A VLAN 10 frame is switched by (10, MAC) and keeps its tag; the same MAC in VLAN 20 is not."""

    def runTest(self):
        self.add_l2(10, host_mac(3), 3)
        pkt10 = roce.udp_packet(host_mac(3), host_mac(0), "10.0.0.1", "10.0.0.4", vlans=[(0x8100, 10, 0)])
        self.send(0, pkt10)
        tu.verify_packet(self, pkt10, 3)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
        before = self.packets("drop_reason", DROP_UNKNOWN_L2_DST)
        pkt20 = roce.udp_packet(host_mac(3), host_mac(0), "10.0.0.1", "10.0.0.4", vlans=[(0x8100, 20, 0)])
        self.send(0, pkt20)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
        self.assertEqual(self.wait_counter("drop_reason", DROP_UNKNOWN_L2_DST, before + 1), before + 1)


class DoubleTaggedFrame(SwitchTest):
    """An 802.1ad (S-tag 100) + 802.1Q (C-tag 10) frame is switched on the outer VID, both tags kept."""

    def runTest(self):
        self.add_l2(100, host_mac(1), 1)
        pkt = roce.udp_packet(
            host_mac(1), host_mac(0), "10.0.0.1", "10.0.0.2", vlans=[(0x88A8, 100, 3), (0x8100, 10, 5)]
        )
        self.send(0, pkt)
        tu.verify_packet(self, pkt, 1)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)


class Ipv4OptionsRouted(SwitchTest):
    """IHL 7 (record-route option): routed, options kept, checksum over them recomputed."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        pkt = roce.udp_packet(
            ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", ip_options=[IPOption_RR(routers=["192.0.2.7"]), IPOption_NOP()]
        )
        self.assertGreater(Ether(bytes(pkt))[IP].ihl, 5)
        self.send(0, pkt)
        tu.verify_packet(self, routed(pkt, host_mac(1)), 1)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)


class RoceOpcodesParsedAndForwarded(SwitchTest):
    """CNP (16-byte pad), ACK (AETH) and WRITE (RETH) are forwarded byte-exact with valid ICRC."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        pkts = [
            roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", payload_len=256),
            roce.roce_cnp(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2"),
            roce.roce_ack(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2"),
        ]
        for pkt in pkts:
            self.send(0, pkt)
            got = self.recv(port=1, timeout=2)
            self.assertIsNotNone(got, "no output for %s" % pkt.summary())
            self.assertEqual(got[1], bytes(routed(pkt, host_mac(1))))
            self.assertTrue(roce.icrc_ok(got[1]))
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)


class TruncatedBthDropCounted(SwitchTest):
    """UDP/4791 whose frame ends 6 bytes into the BTH: a parser error, dropped and counted."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        full = bytes(roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2"))
        cut = full[: 14 + 20 + 8 + 6]
        before = self.packets("drop_reason", DROP_PARSER_ERROR)
        self.send(0, cut)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
        self.assertEqual(self.wait_counter("drop_reason", DROP_PARSER_ERROR, before + 1), before + 1)


class TruncatedRethDropCounted(SwitchTest):
    """An RDMA WRITE Only whose RETH is cut after 8 of 16 bytes: parser error, dropped, counted."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        full = bytes(roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2"))
        cut = full[: 14 + 20 + 8 + 12 + 8]
        before = self.packets("drop_reason", DROP_PARSER_ERROR)
        self.send(0, cut)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
        self.assertEqual(self.wait_counter("drop_reason", DROP_PARSER_ERROR, before + 1), before + 1)


class TruncatedIpv4HeaderDropCounted(SwitchTest):
    """EtherType IPv4 with only 12 bytes of header: parser error, counted."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        full = bytes(roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2"))
        before = self.packets("drop_reason", DROP_PARSER_ERROR)
        self.send(0, full[: 14 + 12])
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
        self.assertEqual(self.wait_counter("drop_reason", DROP_PARSER_ERROR, before + 1), before + 1)


class Ipv4BadVersionDropCounted(SwitchTest):
    """EtherType IPv4 carrying version 6 in the header: IPv4BadVersion, counted as a parser error."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        raw_pkt = bytearray(bytes(roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2")))
        raw_pkt[14] = (6 << 4) | 5
        before = self.packets("drop_reason", DROP_PARSER_ERROR)
        self.send(0, bytes(raw_pkt))
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
        self.assertEqual(self.wait_counter("drop_reason", DROP_PARSER_ERROR, before + 1), before + 1)


class TrailingBytesAfterHeadersKept(SwitchTest):
    """Bytes after the IP total length (trailer garbage) travel through unchanged."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        pkt = roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2")
        garbage = bytes(range(200, 240))
        frame = bytes(pkt) + garbage
        self.send(0, frame)
        exp = bytes(routed(pkt, host_mac(1))) + garbage
        got = self.recv(port=1, timeout=2)
        self.assertIsNotNone(got, "packet with trailer not forwarded")
        self.assertEqual(got[1], exp)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)


class NonRoceUdpPayloadUntouched(SwitchTest):
    """UDP to a port other than 4791 whose payload looks like a BTH is not parsed as RoCE."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        pkt = (
            Ether(dst=ROUTER_MAC, src=host_mac(0))
            / IP(src="10.0.0.1", dst="10.0.1.2", ttl=9)
            / UDP(sport=4791, dport=4792)
            / Raw(b"\x0a\x00")
        )
        self.send(0, pkt)
        tu.verify_packet(self, routed(pkt, host_mac(1)), 1)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
