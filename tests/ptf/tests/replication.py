"""Packet replication on the real switch, programmed over P4Runtime.

A multicast group (``MulticastGroupEntry``) written with p4runtime-shell and
an ``l2_fwd`` entry for the broadcast MAC pointing at it (``set_mcast_grp``):
a broadcast frame leaves unchanged on every other port of the group and
never back on the port it came in by; reading the group back returns what
was written. A clone session (``CloneSessionEntry``) and an ACL
``acl_mirror`` entry: a routed RoCE packet leaves on its next hop and an
unmodified copy on the session's port (one per replica of a session with
several, each with its instance); with ``packet_length_bytes`` the copy is
cut to that length. Each test asserts the exact frames out and that
nothing else leaves the switch. Groups and sessions are deleted around
every test.
"""

import ptf.testutils as tu
from p4runtime_sh import shell as sh
from scapy.layers.l2 import Ether
from scapy.packet import Raw

import roce
from rsbase import ROUTER_MAC, SwitchTest, host_mac, routed

NEG_TIMEOUT = 0.5
BROADCAST = "ff:ff:ff:ff:ff:ff"
GROUP = 1
SESSION = 5


class ReplicationTest(SwitchTest):
    """A ``SwitchTest`` that also empties the replication engine around each test."""

    def setUp(self):
        SwitchTest.setUp(self)
        self.clear_pre()

    def tearDown(self):
        if self._connected:
            self.clear_pre()
        SwitchTest.tearDown(self)

    def clear_pre(self):
        sh.MulticastGroupEntry().read(function=lambda g: g.delete())
        sh.CloneSessionEntry().read(function=lambda s: s.delete())

    def add_group(self, group_id, ports):
        g = sh.MulticastGroupEntry(group_id)
        for port in ports:
            g.add(port, 0)
        g.insert()
        return g

    def add_l2_mcast(self, vid, mac, group_id):
        te = sh.TableEntry("l2_fwd")(action="set_mcast_grp")
        te.match["vid"] = str(vid)
        te.match["dst_mac"] = mac
        te.action["mcast_grp"] = str(group_id)
        te.insert()
        return te

    def add_session(self, session_id, port, cos=0, packet_length_bytes=0, replicas=None):
        """A clone session to ``port`` (instance 0), or to ``replicas``: (port, instance) pairs."""
        s = sh.CloneSessionEntry(session_id)
        for p, instance in replicas or [(port, 0)]:
            s.add(p, instance)
        s.cos = cos
        s.packet_length_bytes = packet_length_bytes
        s.insert()
        return s

    def add_mirror(self, ingress_port, session_id):
        te = sh.TableEntry("acl")(action="acl_mirror")
        te.match["ingress_port"] = "%d&&&0x1ff" % ingress_port
        te.action["session"] = str(session_id)
        te.priority = 10
        te.insert()
        return te


def broadcast_frame():
    return Ether(dst=BROADCAST, src=host_mac(0), type=0x88B5) / Raw(b"\x5a" * 46)


class MulticastGroupFloodsBroadcast(ReplicationTest):
    """Broadcast in VLAN 0 -> group {0,1,2,3}: copies on 1, 2, 3, none back on 0; the group reads back as written."""

    def runTest(self):
        self.add_group(GROUP, self.ports)
        self.add_l2_mcast(0, BROADCAST, GROUP)
        groups = list(sh.MulticastGroupEntry(GROUP).read())
        self.assertEqual(len(groups), 1)
        self.assertEqual(
            [(r.egress_port, r.instance) for r in groups[0].replicas],
            [(p, 0) for p in self.ports],
        )
        pkt = broadcast_frame()
        self.send(0, pkt)
        tu.verify_packets(self, pkt, [p for p in self.ports if p != 0])
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)


class MulticastGroupModifyChangesThePorts(ReplicationTest):
    """MODIFY replaces a group's replicas; DELETE of the group stops the copies."""

    def runTest(self):
        g = self.add_group(GROUP, self.ports)
        self.add_l2_mcast(0, BROADCAST, GROUP)
        g.replicas = []
        g.add(2, 0)
        g.modify()
        pkt = broadcast_frame()
        self.send(0, pkt)
        tu.verify_packets(self, pkt, [2])
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
        g.delete()
        self.send(0, pkt)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)


class AclMirrorCopiesToCloneSession(ReplicationTest):
    """A routed RoCE WRITE from port 0 leaves on port 1; its unmodified copy leaves on the session's port 3."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        self.add_session(SESSION, 3)
        self.add_mirror(0, SESSION)
        pkt = roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2")
        self.send(0, pkt)
        tu.verify_packet(self, routed(pkt, host_mac(1)), 1)
        tu.verify_packet(self, pkt, 3)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
        # Traffic from another port is not mirrored.
        pkt2 = roce.roce_write(ROUTER_MAC, host_mac(2), "10.0.0.3", "10.0.1.2")
        self.send(2, pkt2)
        tu.verify_packet(self, routed(pkt2, host_mac(1)), 1)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)


class CloneSessionTruncatesTheCopy(ReplicationTest):
    """``packet_length_bytes`` 64 cuts the mirror copy to 64 bytes; the original is whole."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        self.add_session(SESSION, 2, cos=3, packet_length_bytes=64)
        sessions = list(sh.CloneSessionEntry(SESSION).read())
        self.assertEqual(len(sessions), 1)
        self.assertEqual((sessions[0].cos, sessions[0].packet_length_bytes), (3, 64))
        self.add_mirror(0, SESSION)
        pkt = roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2")
        self.assertGreater(len(bytes(pkt)), 64)
        self.send(0, pkt)
        tu.verify_packet(self, routed(pkt, host_mac(1)), 1)
        got = self.recv(port=2, timeout=2)
        self.assertIsNotNone(got, "mirror copy not received on port 2")
        self.assertEqual(got[1], bytes(pkt)[:64])
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)


class CloneSessionWithTwoReplicasCopiesToBoth(ReplicationTest):
    """A session with replicas (2, instance 1) and (3, instance 2): the mirrored packet leaves on its next hop and once on each replica's port; the session reads back as written."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        self.add_session(SESSION, None, replicas=[(2, 1), (3, 2)])
        sessions = list(sh.CloneSessionEntry(SESSION).read())
        self.assertEqual(len(sessions), 1)
        self.assertEqual(
            [(r.egress_port, r.instance) for r in sessions[0].replicas], [(2, 1), (3, 2)]
        )
        self.add_mirror(0, SESSION)
        pkt = roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2")
        self.send(0, pkt)
        tu.verify_packet(self, routed(pkt, host_mac(1)), 1)
        tu.verify_packet(self, pkt, 2)
        tu.verify_packet(self, pkt, 3)
        tu.verify_no_other_packets(self, timeout=NEG_TIMEOUT)
