"""Classification into the 8 priorities (roce-semantics R-MAP-1/2).

Observed through the counters indexed ``port * 8 + priority``:
``tx_port_prio`` on the egress port (the queue the traffic manager used)
and ``rx_port_prio`` on the ingress port. Defaults: DSCP trust, RoCE DSCP
26 -> 3, CNP DSCP 48 -> 6. Per-port PCP trust and the DSCP map are set
through the fabric QoS service (the tables are fabric-owned).
"""

import ptf.testutils as tu
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

import fabric
import roce
from rsbase import ROUTER_MAC, SwitchTest, host_mac, routed

EGRESS = 1


class PriorityTest(SwitchTest):
    def setUp(self):
        SwitchTest.setUp(self)
        self.route_v4("10.0.1.0/24", EGRESS)

    def cells(self, name, port):
        return [self.packets(name, port * 8 + prio) for prio in range(8)]

    def assert_one_on(self, pkt, expected_prio, in_port=0, exp=None):
        """Send ``pkt``, expect it routed, and exactly one count on tx[EGRESS][prio] and rx[in][prio]."""
        tx0 = self.cells("tx_port_prio", EGRESS)
        rx0 = self.cells("rx_port_prio", in_port)
        self.send(in_port, pkt)
        tu.verify_packet(self, exp if exp is not None else routed(pkt, host_mac(EGRESS)), EGRESS)
        tu.verify_no_other_packets(self, timeout=0.3)
        want_tx = list(tx0)
        want_tx[expected_prio] += 1
        want_rx = list(rx0)
        want_rx[expected_prio] += 1
        self.wait_counter("tx_port_prio", EGRESS * 8 + expected_prio, want_tx[expected_prio])
        self.assertEqual(self.cells("tx_port_prio", EGRESS), want_tx, "tx_port_prio cells of port %d" % EGRESS)
        self.assertEqual(self.cells("rx_port_prio", in_port), want_rx, "rx_port_prio cells of port %d" % in_port)


class RoceDscp26ToQueue3(PriorityTest):
    """RoCE data with DSCP 26 is classified into priority/queue 3."""

    def runTest(self):
        self.assert_one_on(roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", dscp=26), 3)


class CnpDscp48ToQueue6(PriorityTest):
    """A CNP with DSCP 48 is classified into priority/queue 6."""

    def runTest(self):
        self.assert_one_on(roce.roce_cnp(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", dscp=48), 6)


class Dscp0ToQueue0(PriorityTest):
    """Best-effort DSCP 0 lands in priority 0."""

    def runTest(self):
        self.assert_one_on(roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", dscp=0), 0)


class DscpTrustIgnoresPcp(PriorityTest):
    """On a DSCP-trusting port a tagged frame with PCP 5 and DSCP 26 is priority 3, not 5."""

    def runTest(self):
        pkt = roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", dscp=26, vlan=(0, 5))
        self.assert_one_on(pkt, 3)


class PcpTrustPerPort(PriorityTest):
    """Port 0 set to PCP trust: PCP 5 wins over DSCP 26; port 2 (DSCP trust) still gives 3."""

    def runTest(self):
        self.set_ports(p0=dict(trust=fabric.enum_value("Trust", "TRUST_PCP")))
        pkt = roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", dscp=26, vlan=(0, 5))
        self.assert_one_on(pkt, 5, in_port=0)
        pkt2 = roce.roce_write(ROUTER_MAC, host_mac(2), "10.0.2.1", "10.0.1.2", dscp=26, vlan=(0, 5))
        self.assert_one_on(pkt2, 3, in_port=2)


class DscpMapFromFabric(PriorityTest):
    """SetQosMaps moving DSCP 10 to priority 4 (default map: 10 >> 3 = 1) takes effect."""

    def runTest(self):
        dscp_map = [d >> 3 for d in range(64)]
        dscp_map[10] = 4
        self.fabric_set("QosMaps", fabric.msg("QosMaps", dscp_to_priority=dscp_map, pcp_to_priority=list(range(8))))
        self.assert_one_on(roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", dscp=10), 4)
        self.assert_one_on(roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", dscp=11), 1)


class RoceV1TaggedTakesPcpOnDscpPort(PriorityTest):
    """A RoCE v1 frame (EtherType 0x8915, no IP, so no DSCP) tagged PCP 3 is bridged at priority 3 on a DSCP-trusting port."""

    def runTest(self):
        vid, dst = 10, "02:00:00:00:0a:01"
        self.add_l2(vid, dst, EGRESS)
        # VLAN, then GRH (40 bytes: version 6, next header 0x1B = BTH) and
        # a BTH (RDMA WRITE ONLY), as a RoCE v1 NIC sends them.
        grh = bytes([0x60, 0, 0, 0, 0, 28, 0x1B, 64]) + bytes(32)
        bth = bytes([0x0A, 0, 0xFF, 0xFF, 0, 0, 0, 0x11, 0x80, 0, 0, 1])
        pkt = Ether(dst=dst, src=host_mac(0)) / Dot1Q(vlan=vid, prio=3, type=0x8915) / Raw(grh + bth + bytes(16))
        self.assert_one_on(pkt, 3, exp=pkt)
