"""RoCE security at the switch (README "RoCE security"): the per-port RoCE
source allowlist and P_Key partitions, set through the fabric service
(``SetSecurity``; the tables are fabric-owned).

Observed on the wire and through ``roce_security_drops`` (ingress) /
``roce_security_egress_drops`` (egress), indexed ``port * 4 + reason``
(reasons: 0 RoCE v2 source, 1 RoCE v1 source, 2 P_Key in, 3 P_Key out),
and the fabric ``GetCounters`` port rows. Off until configured: a port with
no allowed sources is not filtered, one with no partitions not checked.

IBTA P_Key rule (Vol 1 10.9): same low 15 bits and at least one of the
two full members (top bit set): limited <-> full passes, limited <-> limited
does not.
"""

import ptf.testutils as tu
from scapy.contrib.roce import BTH
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

import fabric
import roce
from rsbase import ROUTER_MAC, SwitchTest, host_mac, routed

SEC_DROP_REASONS = 4
ROCEV2_SOURCE, ROCEV1_SOURCE, PKEY_INGRESS, PKEY_EGRESS = range(4)


def port_security(port, allow=(), partitions=()):
    """A ``PortSecurity``: ``allow`` of ``source`` strings or ``(source, vlan)``;
    ``partitions`` of ``(key, full)``."""
    p = fabric.msg("PortSecurity", port=port)
    for a in allow:
        source, vlan = a if isinstance(a, tuple) else (a, None)
        entry = p.allow.add(source=source)
        if vlan is not None:
            entry.vlan = vlan
    for key, full in partitions:
        p.partitions.add(key=key, full=full)
    return p


def write(src, dst, pkey=0xFFFF, dport=None):
    """A routed RoCE v2 WRITE from ``src`` (on port 0's host) carrying ``pkey``;
    with ``dport``, plain UDP to that port instead."""
    if dport is not None:
        return roce.udp_packet(ROUTER_MAC, host_mac(0), src, dst, dport=dport)
    pkt = roce.roce_write(ROUTER_MAC, host_mac(0), src, dst)
    pkt[BTH].pkey = pkey
    return Ether(bytes(pkt))


class SecurityTest(SwitchTest):
    def setUp(self):
        SwitchTest.setUp(self)
        self.add_my_station()
        for port in (1, 2, 3):
            self.add_nexthop(port, port, host_mac(port))
            self.add_route("10.0.%d.0/24" % port, port)

    def set_security(self, *ports):
        self.fabric_set("Security", fabric.msg("SecurityConfig", ports=list(ports)))

    def drops(self, port, reason):
        counter = "roce_security_egress_drops" if reason == PKEY_EGRESS else "roce_security_drops"
        return self.packets(counter, port * SEC_DROP_REASONS + reason)

    def forwarded(self, in_port, pkt, out_port):
        self.send(in_port, pkt)
        tu.verify_packet(self, routed(pkt, host_mac(out_port)), out_port)
        tu.verify_no_other_packets(self, timeout=0.3)

    def dropped(self, in_port, pkt, counter_port, reason):
        before = self.drops(counter_port, reason)
        self.send(in_port, pkt)
        tu.verify_no_other_packets(self, timeout=0.5)
        counter = "roce_security_egress_drops" if reason == PKEY_EGRESS else "roce_security_drops"
        got = self.wait_counter(counter, counter_port * SEC_DROP_REASONS + reason, before + 1)
        self.assertEqual(got, before + 1, "drops of port %d reason %d" % (counter_port, reason))


class AllowlistedSourceForwarded(SecurityTest):
    """RoCE v2 from a listed source (host or prefix) is routed as usual."""

    def runTest(self):
        self.set_security(port_security(0, allow=["10.0.0.1", "10.0.8.0/24"]))
        self.forwarded(0, write("10.0.0.1", "10.0.1.2"), 1)
        self.forwarded(0, write("10.0.8.77", "10.0.1.2"), 1)
        self.assertEqual(self.drops(0, ROCEV2_SOURCE), 0)


class UnlistedSourceDroppedAndCounted(SecurityTest):
    """RoCE v2 from a source not on port 0's allowlist is dropped; the counter
    moves, in P4Runtime and in the fabric port counters."""

    def runTest(self):
        self.set_security(port_security(0, allow=["10.0.0.1"]))
        self.dropped(0, write("10.0.0.2", "10.0.1.2"), 0, ROCEV2_SOURCE)
        rows = self.fabric_call("GetCounters", fabric.msg("CountersRequest", ports=[0])).ports
        row = [r for r in rows if r.port == 0][0]
        self.assertEqual(row.roce_security_rocev2_source_drops, self.drops(0, ROCEV2_SOURCE))


class NonRoceFromUnlistedSourceForwarded(SecurityTest):
    """Plain UDP (not 4791) from an unlisted source is not filtered."""

    def runTest(self):
        self.set_security(port_security(0, allow=["10.0.0.1"]))
        self.forwarded(0, write("10.0.0.2", "10.0.1.2", dport=5678), 1)


class UnfilteredPortUnaffected(SecurityTest):
    """Port 2 has no allowlist: its RoCE passes whatever the source, while port 0 filters."""

    def runTest(self):
        self.set_security(port_security(0, allow=["10.0.0.1"]))
        pkt = roce.roce_write(ROUTER_MAC, host_mac(2), "10.9.9.9", "10.0.1.2")
        self.forwarded(2, pkt, 1)
        self.assertEqual(self.drops(2, ROCEV2_SOURCE), 0)


class PkeyLimitedAndFullTalk(SecurityTest):
    """Partition 0x0010: port 0 limited, port 1 full: both directions pass."""

    def runTest(self):
        self.set_security(
            port_security(0, partitions=[(0x10, False)]),
            port_security(1, partitions=[(0x10, True)]),
        )
        self.forwarded(0, write("10.0.0.1", "10.0.1.2", pkey=0x0010), 1)
        back = roce.roce_write(ROUTER_MAC, host_mac(1), "10.0.1.2", "10.0.0.1")
        back[BTH].pkey = 0x8010
        back = Ether(bytes(back))
        self.add_nexthop(4, 0, host_mac(0))
        self.add_route("10.0.0.0/24", 4)
        self.forwarded(1, back, 0)


class PkeyLimitedToLimitedDropped(SecurityTest):
    """Partition 0x0010 with ports 0 and 2 limited: 0 -> 2 is dropped at egress and counted on port 2."""

    def runTest(self):
        self.set_security(
            port_security(0, partitions=[(0x10, False)]),
            port_security(2, partitions=[(0x10, False)]),
        )
        self.dropped(0, write("10.0.0.1", "10.0.2.2", pkey=0x0010), 2, PKEY_EGRESS)


class PkeyUnknownPartitionDropped(SecurityTest):
    """A P_Key naming a partition port 0 is not in (or claiming full membership
    on a limited port) is dropped at ingress and counted."""

    def runTest(self):
        self.set_security(port_security(0, partitions=[(0x10, False)]))
        self.dropped(0, write("10.0.0.1", "10.0.1.2", pkey=0x8020), 0, PKEY_INGRESS)
        self.dropped(0, write("10.0.0.1", "10.0.1.2", pkey=0x8010), 0, PKEY_INGRESS)


class RoceV1BySourceMac(SecurityTest):
    """RoCE v1 (EtherType 0x8915, GRH, BTH) on VLAN 10: a listed source MAC is
    bridged, another MAC is dropped and counted under the v1 reason."""

    def runTest(self):
        vid, dst = 10, "02:00:00:00:0a:01"
        self.add_l2(vid, dst, 1)
        self.set_security(port_security(0, allow=[(host_mac(0), vid)]))
        grh = bytes([0x60, 0, 0, 0, 0, 28, 0x1B, 64]) + bytes(32)
        bth = bytes([0x0A, 0, 0xFF, 0xFF, 0, 0, 0, 0x11, 0x80, 0, 0, 1])

        def v1(src):
            return Ether(dst=dst, src=src) / Dot1Q(vlan=vid, prio=3, type=0x8915) / Raw(grh + bth + bytes(16))

        ok = v1(host_mac(0))
        self.send(0, ok)
        tu.verify_packet(self, ok, 1)
        tu.verify_no_other_packets(self, timeout=0.3)
        self.dropped(0, v1("02:00:00:00:0b:99"), 0, ROCEV1_SOURCE)
