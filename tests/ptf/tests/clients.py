"""p4runtime-shell's whole entry lifecycle, per match kind, against the switch.

The other modules use the shell to program the switch; this one checks what
a controller sees through it: Capabilities, insert/read/modify/delete of
table entries in every match kind of ``roce_switch.p4`` (exact, lpm,
ternary, range) with the values read back, per-update errors, padded
bytestrings, ECMP members and groups read back, and wildcard counter reads.
The finsy suite (tests/finsy) covers the same list with finsy.
"""

import ipaddress

import ptf.testutils as tu
from p4runtime_sh import shell as sh
from p4runtime_sh.p4runtime import P4RuntimeWriteException

import roce
from rsbase import DROP_ACL, ROUTER_MAC, SwitchTest, host_mac, routed


def fields(entry):
    """``{field name: FieldMatch}`` of a read-back shell TableEntry."""
    info = {f.id: f.name for f in sh.context.get_obj(sh.P4Type.table, entry.name).match_fields}
    return {info[m.field_id]: m for m in entry.msg().match}


def action_of(entry):
    """``(action name, {param name: int})`` of a read-back direct entry."""
    a = entry.msg().action.action
    name = sh.context.get_name_from_id(a.action_id)
    info = {p.id: p.name for p in sh.context.get_obj(sh.P4Type.action, name).params}
    return name.split(".")[-1], {info[p.param_id]: int.from_bytes(p.value, "big") for p in a.params}


def read(table):
    return list(sh.TableEntry(table).read())


class ShellCapabilities(SwitchTest):
    """APIVersion() (Capabilities with the shell's empty request) is a semver string."""

    def runTest(self):
        version = sh.APIVersion()
        parts = version.split(".")
        self.assertEqual(len(parts), 3, version)
        self.assertTrue(all(p.isdigit() for p in parts), version)


class ShellExactLifecycle(SwitchTest):
    """l2_fwd: insert, read back both exact keys and the port, modify the port, delete; traffic follows."""

    def runTest(self):
        frame = bytes(roce.udp_packet(host_mac(3), host_mac(0), "10.1.0.1", "10.1.0.3"))
        te = self.add_l2(0, host_mac(3), 1)
        (got,) = read("l2_fwd")
        m = fields(got)
        self.assertEqual(m["vid"].exact.value, b"\x00")
        self.assertEqual(m["dst_mac"].exact.value, bytes.fromhex("020000000004"))
        self.assertEqual(action_of(got), ("l2_forward", {"port": 1}))
        self.send(0, frame)
        tu.verify_packet(self, frame, 1)

        te.action["port"] = "2"
        te.modify()
        (got,) = read("l2_fwd")
        self.assertEqual(action_of(got), ("l2_forward", {"port": 2}))
        self.send(0, frame)
        tu.verify_packet(self, frame, 2)
        tu.verify_no_other_packets(self, timeout=0.3)

        te.delete()
        self.assertEqual(read("l2_fwd"), [])
        self.send(0, frame)
        tu.verify_no_other_packets(self, timeout=0.3)


class ShellLpmLifecycle(SwitchTest):
    """ipv4_lpm/ipv6_lpm: canonical value and prefix read back, modify, delete; duplicate is ALREADY_EXISTS."""

    def runTest(self):
        self.add_my_station()
        self.add_nexthop(1, 1, host_mac(1))
        self.add_nexthop(2, 2, host_mac(2))
        r4 = self.add_route("10.2.0.0/16", 1)
        self.add_route("2001:db8:1::/48", 2)
        (got,) = read("ipv4_lpm")
        lpm = fields(got)["dst_addr"].lpm
        self.assertEqual((lpm.value, lpm.prefix_len), (bytes([10, 2, 0, 0]), 16))
        (got6,) = read("ipv6_lpm")
        lpm6 = fields(got6)["dst_addr"].lpm
        self.assertEqual((lpm6.value, lpm6.prefix_len), (ipaddress.IPv6Address("2001:db8:1::").packed, 48))
        self.assertEqual(action_of(got6), ("set_nexthop_id", {"nexthop_id": 2}))

        with self.assertRaises(P4RuntimeWriteException) as cm:
            self.add_route("10.2.0.0/16", 2)
        self.assertIn("ALREADY_EXISTS", str(cm.exception))

        pkt = roce.udp_packet(ROUTER_MAC, host_mac(0), "10.9.0.1", "10.2.7.7")
        self.send(0, pkt)
        tu.verify_packet(self, routed(pkt, host_mac(1)), 1)
        r4.action["nexthop_id"] = "2"
        r4.modify()
        (got,) = read("ipv4_lpm")
        self.assertEqual(action_of(got), ("set_nexthop_id", {"nexthop_id": 2}))
        self.send(0, pkt)
        tu.verify_packet(self, routed(pkt, host_mac(2)), 2)
        tu.verify_no_other_packets(self, timeout=0.3)

        # A padded key (canonical bytestrings off) names the same entry.
        sh.global_options["canonical_bytestrings"] = False
        try:
            te = sh.TableEntry("ipv4_lpm")
            te.match["dst_addr"] = "10.2.0.0/16"
            te.delete()
        finally:
            sh.global_options["canonical_bytestrings"] = True
        self.assertEqual(read("ipv4_lpm"), [])


class ShellTernaryLifecycle(SwitchTest):
    """acl ternary keys: value, mask and priority read back; modify the action; delete by key and priority."""

    def runTest(self):
        dst = int(ipaddress.IPv4Address("10.3.0.0"))
        te = self.add_acl("acl_deny", priority=20, dst_addr="%d&&&0xffff0000" % dst, ip_proto="17&&&0xff")
        self.add_acl("acl_permit", priority=10, ether_type="0x88b5&&&0xffff")
        got = {e.msg().priority: e for e in read("acl")}
        self.assertEqual(sorted(got), [10, 20])
        m = fields(got[20])
        self.assertEqual((m["dst_addr"].ternary.value, m["dst_addr"].ternary.mask), (bytes([10, 3, 0, 0]), bytes([0xFF, 0xFF, 0, 0])))
        self.assertEqual((m["ip_proto"].ternary.value, m["ip_proto"].ternary.mask), (b"\x11", b"\xff"))
        self.assertEqual(set(m), {"dst_addr", "ip_proto"}, "don't-care fields must be absent")
        self.assertEqual(action_of(got[20])[0], "acl_deny")

        te = sh.TableEntry("acl")(action="punt_to_cpu")
        te.match["dst_addr"] = "%d&&&0xffff0000" % dst
        te.match["ip_proto"] = "17&&&0xff"
        te.priority = 20
        te.modify()
        got = {e.msg().priority: action_of(e)[0] for e in read("acl")}
        self.assertEqual(got, {10: "acl_permit", 20: "punt_to_cpu"})
        te.delete()
        self.assertEqual([e.msg().priority for e in read("acl")], [10])


class ShellRangeLifecycle(SwitchTest):
    """acl range on l4_dst_port: low/high read back, deny in range drops, modify to permit, delete."""

    def runTest(self):
        self.route_v4("10.4.0.0/16", 1)
        te = self.add_acl("acl_deny", priority=5, ip_proto="17&&&0xff", l4_dst_port="6000..6099")
        (got,) = read("acl")
        rng = fields(got)["l4_dst_port"].range
        self.assertEqual((int.from_bytes(rng.low, "big"), int.from_bytes(rng.high, "big")), (6000, 6099))
        before = self.packets("drop_reason", DROP_ACL)
        inside = roce.udp_packet(ROUTER_MAC, host_mac(0), "10.9.0.1", "10.4.0.1", dport=6050)
        outside = roce.udp_packet(ROUTER_MAC, host_mac(0), "10.9.0.1", "10.4.0.1", dport=6100)
        self.send(0, inside)
        self.send(0, outside)
        tu.verify_packet(self, routed(outside, host_mac(1)), 1)
        tu.verify_no_other_packets(self, timeout=0.3)
        self.assertEqual(self.wait_counter("drop_reason", DROP_ACL, before + 1), before + 1)

        te = sh.TableEntry("acl")(action="acl_permit")
        te.match["ip_proto"] = "17&&&0xff"
        te.match["l4_dst_port"] = "6000..6099"
        te.priority = 5
        te.modify()
        self.assertEqual([action_of(e)[0] for e in read("acl")], ["acl_permit"])
        self.send(0, inside)
        tu.verify_packet(self, routed(inside, host_mac(1)), 1)
        te.delete()
        self.assertEqual(read("acl"), [])


class ShellEcmpReadBack(SwitchTest):
    """ECMP members and a weighted group read back through the shell; the indirect entry names the group."""

    def runTest(self):
        self.add_ecmp(50, 100, [(11, 1, "02:00:00:00:10:0b"), (12, 2, "02:00:00:00:10:0c")])
        members = {m.msg().member_id: m.msg() for m in sh.ActionProfileMember("nexthop").read()}
        self.assertEqual(sorted(members), [11, 12])
        params = {p.param_id: p.value for p in members[12].action.params}
        port_id = next(p.id for p in sh.context.get_obj(sh.P4Type.action, "set_nexthop").params if p.name == "port")
        self.assertEqual(params[port_id], b"\x02")
        (group,) = [g.msg() for g in sh.ActionProfileGroup("nexthop").read()]
        self.assertEqual(group.group_id, 100)
        self.assertEqual(sorted((m.member_id, m.weight) for m in group.members), [(11, 1), (12, 1)])
        (entry,) = read("nexthop")
        self.assertEqual(entry.msg().action.action_profile_group_id, 100)


class ShellCounterWildcardRead(SwitchTest):
    """CounterEntry("drop_reason").read() returns every index once; one index reads alone."""

    def runTest(self):
        size = sh.context.get_obj(sh.P4Type.counter, "drop_reason").size
        got = sorted(c.msg().index.index for c in sh.CounterEntry("drop_reason").read())
        self.assertEqual(got, list(range(size)))
        ce = sh.CounterEntry("drop_reason")
        ce.index = 3
        one = [c.msg().index.index for c in ce.read()]
        self.assertEqual(one, [3])
