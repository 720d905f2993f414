"""ECMP through the ``nexthop`` action selector (roce-semantics R-ECMP-1/2).

One route points at a group of 4 members; members are told apart by their
next-hop MAC (two share an egress port). RoCEv2 flows differ only in the
UDP source port (their entropy, R-ROCE-9). Asserted: every flow leaves
exactly once through one member and all 4 members are used; a flow keeps
its member; removing one member from the group moves only the flows that
were on it.
"""

import collections

from scapy.layers.inet import UDP
from scapy.layers.l2 import Ether

import roce
from rsbase import ROUTER_MAC, SwitchTest, host_mac, nexthop_mac, routed

GROUP = 7
NEXTHOP_ID = 70
MEMBERS = [(1, 1, nexthop_mac(1)), (2, 2, nexthop_mac(2)), (3, 3, nexthop_mac(3)), (4, 2, nexthop_mac(4))]
FLOWS = [0xC000 + 37 * i for i in range(64)]


class EcmpTest(SwitchTest):
    def setUp(self):
        SwitchTest.setUp(self)
        self.add_my_station()
        self.add_ecmp(NEXTHOP_ID, GROUP, MEMBERS)
        self.add_route("10.0.1.0/24", NEXTHOP_ID)

    def flow_pkt(self, sport):
        return roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", sport=sport, psn=sport & 0xFF)

    def send_flows(self, flows, member_set=MEMBERS):
        """Send one packet per flow; returns {sport: member_id}; fails on loss, duplicates or bad bytes."""
        by_mac = {mac: (mid, port) for mid, port, mac in member_set}
        for sport in flows:
            self.send(0, self.flow_pkt(sport))
        frames = self.collect(quiet_s=0.5)
        got = {}
        for port, data, _ in frames:
            pkt = Ether(data)
            self.assertIn(UDP, pkt, "unexpected non-UDP frame on port %d: %s" % (port, data[:40].hex()))
            sport = pkt[UDP].sport
            self.assertNotIn(sport, got, "flow 0x%04x delivered twice" % sport)
            self.assertIn(pkt.dst, by_mac, "flow 0x%04x went to unknown next hop %s" % (sport, pkt.dst))
            mid, mport = by_mac[pkt.dst]
            self.assertEqual(port, mport, "member %d's packet left port %d, not %d" % (mid, port, mport))
            self.assertEqual(data, bytes(routed(self.flow_pkt(sport), pkt.dst)), "flow 0x%04x bytes" % sport)
            got[sport] = mid
        missing = [hex(s) for s in flows if s not in got]
        self.assertEqual(missing, [], "flows not delivered")
        return got


class EcmpSpreadsOverFourMembers(EcmpTest):
    """64 RoCE flows (distinct UDP source ports) use all 4 members, none with fewer than 4 flows."""

    def runTest(self):
        got = self.send_flows(FLOWS)
        per_member = collections.Counter(got.values())
        self.assertEqual(sorted(per_member), [1, 2, 3, 4], "members used: %s" % dict(per_member))
        self.assertGreaterEqual(min(per_member.values()), 4, "distribution %s" % dict(per_member))


class EcmpFlowsAreSticky(EcmpTest):
    """Each flow takes the same member on three rounds (no reordering within a QP)."""

    def runTest(self):
        first = self.send_flows(FLOWS)
        for _ in range(2):
            self.assertEqual(self.send_flows(FLOWS), first)


class EcmpMemberRemovalMovesOnlyItsFlows(EcmpTest):
    """Removing member 4 re-homes exactly its flows; flows on members 1-3 stay put."""

    def runTest(self):
        before = self.send_flows(FLOWS)
        self.set_group_members(GROUP, [1, 2, 3])
        after = self.send_flows(FLOWS, MEMBERS[:3])
        moved_wrongly = {hex(s): (before[s], after[s]) for s in FLOWS if before[s] != 4 and after[s] != before[s]}
        self.assertEqual(moved_wrongly, {}, "flows moved although their member stayed")
        self.assertTrue(all(after[s] in (1, 2, 3) for s in FLOWS))


class EcmpIpv6Flows(SwitchTest):
    """IPv6 RoCE flows spread over a 2-member group and keep their member."""

    def runTest(self):
        self.add_my_station()
        self.add_ecmp(80, 8, [(11, 1, nexthop_mac(11)), (12, 3, nexthop_mac(12))])
        self.add_route("2001:db8:5::/64", 80)
        flows = [0xC100 + 11 * i for i in range(32)]
        seen = {}
        for rnd in range(2):
            for sport in flows:
                pkt = roce.roce_write(
                    ROUTER_MAC, host_mac(0), "2001:db8::1", "2001:db8:5::2", sport=sport, ipv6=True
                )
                self.send(0, pkt)
                got = self.recv(timeout=2)
                self.assertIsNotNone(got, "IPv6 flow 0x%04x lost" % sport)
                port, data, _ = got
                self.assertEqual(data, bytes(routed(pkt, Ether(data).dst)))
                if rnd == 0:
                    seen[sport] = port
                else:
                    self.assertEqual(port, seen[sport], "IPv6 flow 0x%04x changed member" % sport)
        self.assertEqual(sorted(set(seen.values())), [1, 3])
