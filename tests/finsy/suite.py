#!/usr/bin/env python3
"""finsy (PyPI) against a running roceswitch: the real-client checks of the P4Runtime server.

What it covers, each case with finsy's own API: connecting (arbitration,
Capabilities, gNMI UNIMPLEMENTED tolerated, P4Info fetched from the switch),
the P4Info contents, insert/read/modify/delete of table entries in every
match kind the program has (exact: ``l2_fwd``/``my_station``, lpm:
``ipv4_lpm``/``ipv6_lpm``, ternary and range: ``acl``), per-update error
details (ALREADY_EXISTS, NOT_FOUND), default-entry modify and reset, an ECMP
group on the ``nexthop`` action selector (members, weights, group modify,
traffic spread over the member ports), indexed counters (single index,
wildcard, and the increments a packet causes), PacketOut to every port and
PacketIn from an ACL punt, and ``delete_all()``.

Contract: run as root in the namespace that holds the switch's peer
interfaces (``--port N=IFACE``, the PTF namespace of ``tests/ptf/run``), with
``--addr`` the daemon's gRPC address. Frames are sent and received with raw
AF_PACKET sockets (no scapy). Every case starts from empty client-owned
tables. Prints ``PASS name`` / ``FAIL name: why`` per case and the closing
line ``finsy: N passed, N failed``; exits 1 if any case failed or the
connection could not be made. Counter indices follow
``p4/programs/roce_switch.p4`` (``*_port_prio``: ``port * 8 + priority``).
"""

import argparse
import asyncio
import ipaddress
import os
import select
import socket
import struct
import sys
import time
import traceback

import grpc
import grpc.aio

_plain_aio_insecure_channel = grpc.aio.insecure_channel


def _aio_insecure_channel(target, options=None, *args, **kwargs):
    """``grpc.aio.insecure_channel`` with ``:authority`` "localhost" on ``unix:`` targets.

    grpcio sends a ``unix:/path`` target's path as the HTTP/2 ``:authority``,
    which the switch's tonic/h2 server rejects (see tests/ptf/README.md);
    finsy has no channel-option hook, so its channel factory is wrapped.
    """
    opts = list(options or [])
    if str(target).startswith("unix:") and not any(k == "grpc.default_authority" for k, _ in opts):
        opts.append(("grpc.default_authority", "localhost"))
    return _plain_aio_insecure_channel(target, opts, *args, **kwargs)


grpc.aio.insecure_channel = _aio_insecure_channel

import finsy as fy  # noqa: E402  (after the channel patch on purpose)

ROUTER_MAC = "00:aa:bb:cc:dd:00"
CPU_PORT = 510
DROP_NO_ROUTE = 3
DROP_REASONS = 8
PORT_PRIO_CELLS = 4096

# Client-owned tables, emptied before every case (entries first, then groups, then members).
OWNED_TABLES = ("acl", "ipv4_lpm", "ipv6_lpm", "nexthop", "l2_fwd", "my_station")


class CaseFailed(Exception):
    """A check of a case did not hold."""


def check(cond, msg):
    if not cond:
        raise CaseFailed(msg)


def check_eq(got, want, what):
    if got != want:
        raise CaseFailed(f"{what}: got {got!r}, want {want!r}")


# ---- frames -------------------------------------------------------------


def mac_bytes(mac):
    return bytes.fromhex(mac.replace(":", ""))


def host_mac(port):
    return "02:00:00:00:00:%02x" % (port + 1)


def nexthop_mac(index):
    return "02:00:00:00:10:%02x" % index


def ipv4_checksum(header):
    s = sum(struct.unpack("!%dH" % (len(header) // 2), header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def udp4(dst_mac, src_mac, src_ip, dst_ip, sport=0xC000, dport=5000, ttl=64, payload=b"finsy-roceswitch"):
    """An Ethernet/IPv4/UDP frame (UDP checksum 0), padded to 60 bytes."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, ttl, 17, 0,
        ipaddress.IPv4Address(src_ip).packed, ipaddress.IPv4Address(dst_ip).packed,
    )
    ip = ip[:10] + struct.pack("!H", ipv4_checksum(ip)) + ip[12:]
    frame = mac_bytes(dst_mac) + mac_bytes(src_mac) + b"\x08\x00" + ip + udp
    return frame + bytes(max(0, 60 - len(frame)))


def routed4(frame, dst_mac, src_mac=ROUTER_MAC):
    """What the router emits for an IPv4 frame: new MACs, TTL - 1, checksum redone."""
    ip = bytearray(frame[14:34])
    ip[8] -= 1
    ip[10:12] = b"\x00\x00"
    ip[10:12] = struct.pack("!H", ipv4_checksum(bytes(ip)))
    return mac_bytes(dst_mac) + mac_bytes(src_mac) + frame[12:14] + bytes(ip) + frame[34:]


# ---- dataplane: raw sockets on the switch's peer interfaces ---------------

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


class Dataplane:
    """One AF_PACKET socket per switch port's peer interface."""

    def __init__(self, ifaces):
        self.socks = {}
        for port, iface in ifaces.items():
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            s.bind((iface, 0))
            s.setblocking(False)
            self.socks[port] = s
        self.by_fd = {s.fileno(): p for p, s in self.socks.items()}

    def close(self):
        for s in self.socks.values():
            s.close()

    @property
    def ports(self):
        return sorted(self.socks)

    def send(self, port, frame):
        self.socks[port].send(frame)

    def _drain_ready(self, out):
        ready, _, _ = select.select(list(self.socks.values()), [], [], 0)
        for s in ready:
            while True:
                try:
                    data, addr = s.recvfrom(65535)
                except BlockingIOError:
                    break
                if addr[2] == PACKET_OUTGOING:
                    continue  # our own transmission
                out.append((self.by_fd[s.fileno()], data))

    async def collect(self, quiet_s=0.3, max_s=5.0):
        """Every frame received until none came for ``quiet_s``: ``[(port, bytes)]``."""
        frames = []
        start = last = time.monotonic()
        while True:
            n = len(frames)
            self._drain_ready(frames)
            now = time.monotonic()
            if len(frames) > n:
                last = now
            if now - last >= quiet_s or now - start >= max_s:
                return frames
            await asyncio.sleep(0.005)

    async def flush(self):
        await self.collect(quiet_s=0.05, max_s=1.0)


# ---- switch helpers -------------------------------------------------------


async def read_all(sw, entity):
    return [e async for e in sw.read(entity)]


async def clear_owned(sw):
    """Empty the client-owned tables, then the nexthop groups and members."""
    for table in OWNED_TABLES:
        entries = await read_all(sw, fy.P4TableEntry(table))
        if entries:
            await sw.delete(entries)
    groups = await read_all(sw, fy.P4ActionProfileGroup("nexthop"))
    if groups:
        await sw.delete(groups)
    members = await read_all(sw, fy.P4ActionProfileMember("nexthop"))
    if members:
        await sw.delete(members)


def ms(sw, table, **match):
    """finsy's match string for ``match`` after an encode/decode round trip.

    Read-back entries are compared by this string: both sides then use the
    same canonical values and formatting (finsy formats by P4Info type).
    """
    entry = fy.P4TableEntry(table, match=fy.P4TableMatch(**match))
    return fy.P4TableEntry.decode(entry.encode(sw.p4info), sw.p4info).match_str(sw.p4info)


def member(member_id, port, dst_mac):
    return fy.P4ActionProfileMember(
        "nexthop",
        member_id=member_id,
        action=fy.P4TableAction("set_nexthop", port=port, src_mac=ROUTER_MAC, dst_mac=dst_mac),
    )


def my_station():
    return fy.P4TableEntry("my_station", match=fy.P4TableMatch(dst_mac=ROUTER_MAC), action=fy.P4TableAction("set_routed"))


def route4(prefix, nexthop_id):
    return fy.P4TableEntry(
        "ipv4_lpm",
        match=fy.P4TableMatch(dst_addr=prefix),
        action=fy.P4TableAction("set_nexthop_id", nexthop_id=nexthop_id),
    )


def nexthop_entry(nexthop_id, *, member_id=None, group_id=None):
    """A nexthop entry pointing at a member or a group (neither: the key alone, for DELETE)."""
    action = None
    if member_id is not None or group_id is not None:
        action = fy.P4IndirectAction(member_id=member_id, group_id=group_id)
    return fy.P4TableEntry("nexthop", match=fy.P4TableMatch(nexthop_id=nexthop_id), action=action)


async def counter(sw, name, index):
    """``(packets, bytes)`` of one cell of an indexed counter, read with P4CounterEntry."""
    got = await read_all(sw, fy.P4CounterEntry(name, index=index))
    check_eq(len(got), 1, f"entries returned for {name}[{index}]")
    check_eq(got[0].index, index, f"index of the {name} entry")
    return got[0].packet_count, got[0].byte_count


async def wait_counter(sw, name, index, at_least_packets, timeout_s=2.0):
    deadline = time.monotonic() + timeout_s
    while True:
        value = await counter(sw, name, index)
        if value[0] >= at_least_packets or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.05)


def write_error_codes(exc):
    """``{update index: canonical code name}`` of the failed updates of a finsy write error."""
    return {i: e.canonical_code.name for i, e in exc.details.items()}


async def expect_write_error(coro, codes, what):
    try:
        await coro
    except fy.P4ClientError as e:
        check_eq(write_error_codes(e), codes, f"{what}: per-update error codes")
        return e
    raise CaseFailed(f"{what}: write succeeded")


# ---- cases --------------------------------------------------------------

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


@case
async def connect_and_capabilities(sw, dp):
    """finsy's handshake made us primary with our election id; Capabilities gave a semver."""
    check(sw.is_primary, "not primary")
    check_eq(sw.primary_id, sw.election_id, "primary id in the arbitration reply")
    v = sw.p4runtime_version
    check(v is not None and v.major == 1, f"p4runtime version {v!r}")


@case
async def p4info_from_switch(sw, dp):
    """The P4Info fetched at connect names the tables, profile, counters and packet headers, with their match kinds."""
    info = sw.p4info
    check(info.exists, "no P4Info")
    kinds = {}
    for t in ("l2_fwd", "ipv4_lpm", "ipv6_lpm", "nexthop", "acl", "my_station"):
        table = info.tables[t]
        check_eq(table.id >> 24, 0x02, f"{t} id prefix")
        for f in table.match_fields:
            kinds[(t, f.alias)] = f.match_type.name
    check_eq(kinds[("l2_fwd", "dst_mac")], "EXACT", "l2_fwd.dst_mac")
    check_eq(kinds[("ipv4_lpm", "dst_addr")], "LPM", "ipv4_lpm.dst_addr")
    check_eq(kinds[("acl", "ether_type")], "TERNARY", "acl.ether_type")
    check_eq(kinds[("acl", "l4_dst_port")], "RANGE", "acl.l4_dst_port")
    check_eq(info.tables["ipv4_lpm"].match_fields["dst_addr"].bitwidth, 32, "ipv4_lpm.dst_addr width")
    check_eq(info.tables["ipv6_lpm"].match_fields["dst_addr"].bitwidth, 128, "ipv6_lpm.dst_addr width")
    prof = info.action_profiles["nexthop"]
    check(prof.with_selector, "nexthop profile is not a selector")
    check_eq(info.tables["nexthop"].action_profile.alias, "nexthop", "nexthop table implementation")
    check_eq(info.counters["drop_reason"].size, DROP_REASONS, "drop_reason size")
    check_eq(info.counters["rx_port_prio"].size, PORT_PRIO_CELLS, "rx_port_prio size")
    names = {m.alias for m in info.controller_packet_metadata}
    check_eq(names, {"packet_in", "packet_out"}, "controller headers")
    check_eq(
        [(m.name, m.bitwidth) for m in info.controller_packet_metadata["packet_out"].metadata],
        [("egress_port", 9), ("_pad", 7)],
        "packet_out fields",
    )


@case
async def exact_insert_read_modify_delete(sw, dp):
    """l2_fwd (two exact keys): insert, read back, modify the port, delete; traffic follows each step."""
    def l2(port):
        return fy.P4TableEntry(
            "l2_fwd",
            match=fy.P4TableMatch(vid=0, dst_mac=host_mac(3)),
            action=fy.P4TableAction("l2_forward", port=port),
        )

    frame = udp4(host_mac(3), host_mac(0), "10.1.0.1", "10.1.0.3")
    await sw.insert([l2(1)])
    got = await read_all(sw, fy.P4TableEntry("l2_fwd"))
    check_eq(len(got), 1, "l2_fwd entries after insert")
    check_eq(got[0].match_str(sw.p4info), ms(sw, "l2_fwd", vid=0, dst_mac=host_mac(3)), "match read back")
    check_eq(got[0].action_str(sw.p4info), "l2_forward(port=0x1)", "action read back")
    dp.send(0, frame)
    check_eq([(p, f) for p, f in await dp.collect()], [(1, frame)], "frames out after insert")

    await sw.modify([l2(2)])
    got = await read_all(sw, fy.P4TableEntry("l2_fwd"))
    check_eq([e.action_str(sw.p4info) for e in got], ["l2_forward(port=0x2)"], "action after modify")
    dp.send(0, frame)
    check_eq([(p, f) for p, f in await dp.collect()], [(2, frame)], "frames out after modify")

    await sw.delete([fy.P4TableEntry("l2_fwd", match=fy.P4TableMatch(vid=0, dst_mac=host_mac(3)))])
    check_eq(await read_all(sw, fy.P4TableEntry("l2_fwd")), [], "l2_fwd after delete")
    dp.send(0, frame)
    check_eq(await dp.collect(), [], "frames out after delete (unknown destination is dropped)")


@case
async def lpm_insert_read_modify_delete(sw, dp):
    """ipv4_lpm and ipv6_lpm: overlapping prefixes read back canonically, modify, delete; longest match routes."""
    await sw.insert([my_station(), member(1, 1, host_mac(1)), member(2, 2, host_mac(2))])
    await sw.insert([nexthop_entry(1, member_id=1), nexthop_entry(2, member_id=2)])
    routes = [route4("10.2.0.0/16", 1), route4("10.2.3.0/24", 2)]
    v6 = fy.P4TableEntry(
        "ipv6_lpm", match=fy.P4TableMatch(dst_addr="2001:db8:1::/48"),
        action=fy.P4TableAction("set_nexthop_id", nexthop_id=2),
    )
    await sw.insert(routes + [v6])
    got = sorted(e.match_str(sw.p4info) for e in await read_all(sw, fy.P4TableEntry("ipv4_lpm")))
    check_eq(got, sorted(ms(sw, "ipv4_lpm", dst_addr=p) for p in ("10.2.0.0/16", "10.2.3.0/24")), "ipv4_lpm read back")
    got6 = [(e.match_str(sw.p4info), e.action_str(sw.p4info)) for e in await read_all(sw, fy.P4TableEntry("ipv6_lpm"))]
    check_eq(got6, [(ms(sw, "ipv6_lpm", dst_addr="2001:db8:1::/48"), "set_nexthop_id(nexthop_id=0x2)")], "ipv6_lpm read back")

    short = udp4(ROUTER_MAC, host_mac(0), "10.9.0.1", "10.2.9.9")
    long_ = udp4(ROUTER_MAC, host_mac(0), "10.9.0.1", "10.2.3.9")
    for f in (short, long_):
        dp.send(0, f)
    out = sorted(await dp.collect())
    check_eq(out, sorted([(1, routed4(short, host_mac(1))), (2, routed4(long_, host_mac(2)))]), "longest prefix routing")

    await sw.modify([route4("10.2.0.0/16", 2)])
    got = {e.match_str(sw.p4info): e.action_str(sw.p4info) for e in await read_all(sw, fy.P4TableEntry("ipv4_lpm"))}
    check_eq(got[ms(sw, "ipv4_lpm", dst_addr="10.2.0.0/16")], "set_nexthop_id(nexthop_id=0x2)", "/16 after modify")
    dp.send(0, short)
    check_eq(await dp.collect(), [(2, routed4(short, host_mac(2)))], "/16 routes to the new next hop")

    await sw.delete([fy.P4TableEntry("ipv4_lpm", match=fy.P4TableMatch(dst_addr="10.2.3.0/24"))])
    got = [e.match_str(sw.p4info) for e in await read_all(sw, fy.P4TableEntry("ipv4_lpm"))]
    check_eq(got, [ms(sw, "ipv4_lpm", dst_addr="10.2.0.0/16")], "ipv4_lpm after deleting the /24")
    await sw.delete([fy.P4TableEntry("ipv6_lpm", match=fy.P4TableMatch(dst_addr="2001:db8:1::/48"))])
    check_eq(await read_all(sw, fy.P4TableEntry("ipv6_lpm")), [], "ipv6_lpm after delete")


@case
async def ternary_insert_read_modify_delete(sw, dp):
    """acl ternary keys with priorities: read back value/mask and priority, modify the action, delete."""
    def acl(action, prio, **match):
        return fy.P4TableEntry("acl", match=fy.P4TableMatch(**match), action=fy.P4TableAction(action), priority=prio)

    # src_addr/dst_addr are 128 bits wide (an IPv4 address sits in the low 32 bits).
    a = acl("acl_deny", 20, dst_addr="0x0a030000/&0xffff0000", ip_proto="17/&0xff")
    b = acl("acl_permit", 10, ether_type="0x88b5/&0xffff")
    await sw.insert([a, b])
    got = {e.priority: (e.match_str(sw.p4info), e.action_str(sw.p4info)) for e in await read_all(sw, fy.P4TableEntry("acl"))}
    check_eq(sorted(got), [10, 20], "acl priorities read back")
    check_eq(got[20], (ms(sw, "acl", dst_addr="0x0a030000/&0xffff0000", ip_proto="17/&0xff"), "acl_deny()"), "entry 20 read back")
    check_eq(got[10], (ms(sw, "acl", ether_type="0x88b5/&0xffff"), "acl_permit()"), "entry 10 read back")

    await sw.modify([acl("punt_to_cpu", 10, ether_type="0x88b5/&0xffff")])
    got = {e.priority: e.action_str(sw.p4info) for e in await read_all(sw, fy.P4TableEntry("acl"))}
    check_eq(got, {10: "punt_to_cpu()", 20: "acl_deny()"}, "acl actions after modify")

    # The same match at another priority is another entry; the key includes the priority.
    await expect_write_error(sw.insert([acl("acl_permit", 20, dst_addr="0x0a030000/&0xffff0000", ip_proto="17/&0xff")]),
                             {0: "ALREADY_EXISTS"}, "duplicate ternary insert")
    await sw.insert([acl("acl_permit", 30, dst_addr="0x0a030000/&0xffff0000", ip_proto="17/&0xff")])
    check_eq(len(await read_all(sw, fy.P4TableEntry("acl"))), 3, "acl entries with a second priority")

    await sw.delete([fy.P4TableEntry("acl", match=a.match, priority=20), fy.P4TableEntry("acl", match=b.match, priority=10)])
    got = [e.priority for e in await read_all(sw, fy.P4TableEntry("acl"))]
    check_eq(got, [30], "acl after deleting two")


@case
async def range_insert_read_modify_delete(sw, dp):
    """acl range keys (l4 ports): read back low...high, modify, delete; a deny in range drops, out of range passes."""
    def acl(action, lo, hi, prio=5):
        return fy.P4TableEntry(
            "acl", match=fy.P4TableMatch(l4_dst_port=f"{lo}...{hi}", ip_proto="17/&0xff"),
            action=fy.P4TableAction(action), priority=prio,
        )

    await sw.insert([my_station(), member(1, 1, host_mac(1))])
    await sw.insert([nexthop_entry(1, member_id=1), route4("10.4.0.0/16", 1)])
    await sw.insert([acl("acl_deny", 6000, 6099)])
    got = [(e.match_str(sw.p4info), e.action_str(sw.p4info)) for e in await read_all(sw, fy.P4TableEntry("acl"))]
    check_eq(got, [(ms(sw, "acl", l4_dst_port="6000...6099", ip_proto="17/&0xff"), "acl_deny()")], "range entry read back")

    inside = udp4(ROUTER_MAC, host_mac(0), "10.9.0.1", "10.4.0.1", dport=6050)
    outside = udp4(ROUTER_MAC, host_mac(0), "10.9.0.1", "10.4.0.1", dport=6100)
    dp.send(0, inside)
    dp.send(0, outside)
    check_eq(await dp.collect(), [(1, routed4(outside, host_mac(1)))], "only the out-of-range flow is routed")

    await sw.modify([acl("acl_permit", 6000, 6099)])
    got = [e.action_str(sw.p4info) for e in await read_all(sw, fy.P4TableEntry("acl"))]
    check_eq(got, ["acl_permit()"], "range entry action after modify")
    dp.send(0, inside)
    check_eq(await dp.collect(), [(1, routed4(inside, host_mac(1)))], "in-range flow routed after modify")

    # A different range is a different entry.
    await sw.insert([acl("acl_deny", 6000, 6049)])
    check_eq(len(await read_all(sw, fy.P4TableEntry("acl"))), 2, "two ranges")
    await sw.delete([fy.P4TableEntry("acl", match=acl("x", 6000, 6099).match, priority=5)])
    got = [e.match_str(sw.p4info) for e in await read_all(sw, fy.P4TableEntry("acl"))]
    check_eq(got, [ms(sw, "acl", l4_dst_port="6000...6049", ip_proto="17/&0xff")], "range left after delete")


@case
async def write_errors_per_update(sw, dp):
    """A batch with one duplicate gets per-update details; MODIFY/DELETE of a missing entry is NOT_FOUND."""
    await sw.insert([route4("10.5.0.0/16", 1)])
    err = await expect_write_error(
        sw.insert([route4("10.6.0.0/16", 1), route4("10.5.0.0/16", 2)]),
        {1: "ALREADY_EXISTS"}, "batch insert with a duplicate",
    )
    check(err.is_not_found_only is False, "duplicate reported as not-found")
    got = sorted(e.match_str(sw.p4info) for e in await read_all(sw, fy.P4TableEntry("ipv4_lpm")))
    check_eq(got, sorted(ms(sw, "ipv4_lpm", dst_addr=p) for p in ("10.5.0.0/16", "10.6.0.0/16")), "the good update of the batch applied")
    await expect_write_error(sw.modify([route4("10.7.0.0/16", 1)]), {0: "NOT_FOUND"}, "modify of a missing entry")
    await expect_write_error(
        sw.delete([fy.P4TableEntry("ipv4_lpm", match=fy.P4TableMatch(dst_addr="10.7.0.0/16"))]),
        {0: "NOT_FOUND"}, "delete of a missing entry",
    )
    # finsy's non-strict delete ignores NOT_FOUND-only errors.
    await sw.delete([fy.P4TableEntry("ipv4_lpm", match=fy.P4TableMatch(dst_addr="10.7.0.0/16"))], strict=False)


@case
async def default_entry_modify_and_reset(sw, dp):
    """MODIFY of ipv4_lpm's default entry is read back with is_default_action; MODIFY without action resets it."""
    await sw.modify([fy.P4TableEntry("ipv4_lpm", is_default_action=True, action=fy.P4TableAction("set_nexthop_id", nexthop_id=7))])
    got = await read_all(sw, fy.P4TableEntry("ipv4_lpm", is_default_action=True))
    check_eq([(e.is_default_action, e.action_str(sw.p4info)) for e in got], [(True, "set_nexthop_id(nexthop_id=0x7)")], "default after modify")
    check_eq(await read_all(sw, fy.P4TableEntry("ipv4_lpm")), [], "wildcard read must not return the default entry")
    await sw.modify([fy.P4TableEntry("ipv4_lpm", is_default_action=True)])
    got = await read_all(sw, fy.P4TableEntry("ipv4_lpm", is_default_action=True))
    check_eq([e.action_str(sw.p4info) for e in got], ["no_route()"], "default after reset")


ECMP_MEMBERS = [(11, 1), (12, 2), (13, 3)]


@case
async def ecmp_group(sw, dp):
    """Three members in a weighted group behind one route: read back, traffic on all member ports, modify, delete order."""
    await sw.insert([my_station()] + [member(mid, port, nexthop_mac(mid)) for mid, port in ECMP_MEMBERS])
    group = fy.P4ActionProfileGroup(
        "nexthop", group_id=100, max_size=8,
        members=[fy.P4Member(11, weight=1), fy.P4Member(12, weight=1), fy.P4Member(13, weight=2)],
    )
    await sw.insert([group])
    await sw.insert([nexthop_entry(50, group_id=100), route4("10.8.0.0/16", 50)])

    got = {m.member_id: m.action_str(sw.p4info) for m in await read_all(sw, fy.P4ActionProfileMember("nexthop"))}
    check_eq(sorted(got), [11, 12, 13], "members read back")
    check(got[12].startswith("set_nexthop(port=0x2"), f"member 12 action {got[12]!r}")
    groups = await read_all(sw, fy.P4ActionProfileGroup("nexthop"))
    check_eq(len(groups), 1, "groups read back")
    check_eq(groups[0].group_id, 100, "group id")
    check_eq(sorted((m.member_id, m.weight) for m in groups[0].members), [(11, 1), (12, 1), (13, 2)], "group members and weights")
    te = await read_all(sw, fy.P4TableEntry("nexthop"))
    check_eq([(e.match_str(sw.p4info), e.action.group_id) for e in te], [(ms(sw, "nexthop", nexthop_id=50), 100)], "indirect entry read back")

    async def spread(member_ports):
        flows = [0xC000 + 37 * i for i in range(48)]
        sent = {}
        for sport in flows:
            f = udp4(ROUTER_MAC, host_mac(0), "10.9.0.1", "10.8.0.1", sport=sport)
            sent[sport] = f
            dp.send(0, f)
        out = await dp.collect(quiet_s=0.5)
        seen = {}
        for port, data in out:
            sport = struct.unpack("!H", data[34:36])[0]
            check(sport in sent and sport not in seen, f"unexpected or duplicate frame on port {port}")
            mid = {v: k for k, v in ECMP_MEMBERS}.get(port)
            check(mid is not None and port in member_ports, f"flow {sport:#x} left non-member port {port}")
            check_eq(data, routed4(sent[sport], nexthop_mac(mid)), f"flow {sport:#x} bytes")
            seen[sport] = port
        check_eq(sorted(seen), sorted(sent), "every flow delivered once")
        return seen

    seen = await spread({1, 2, 3})
    check_eq(sorted(set(seen.values())), [1, 2, 3], "ports used by 48 flows over 3 members")

    await sw.modify([fy.P4ActionProfileGroup("nexthop", group_id=100, max_size=8, members=[fy.P4Member(11, weight=1), fy.P4Member(12, weight=1)])])
    groups = await read_all(sw, fy.P4ActionProfileGroup("nexthop"))
    check_eq(sorted(m.member_id for m in groups[0].members), [11, 12], "members after group modify")
    seen = await spread({1, 2})
    check_eq(sorted(set(seen.values())), [1, 2], "ports used after removing member 13")

    # A group still referenced by a table entry cannot go away.
    await expect_write_error(sw.delete([fy.P4ActionProfileGroup("nexthop", group_id=100)]), {0: "FAILED_PRECONDITION"}, "delete of a group in use")
    await sw.delete([fy.P4TableEntry("ipv4_lpm", match=fy.P4TableMatch(dst_addr="10.8.0.0/16")), nexthop_entry(50)])
    await sw.delete([fy.P4ActionProfileGroup("nexthop", group_id=100)])
    await sw.delete([fy.P4ActionProfileMember("nexthop", member_id=mid) for mid, _ in ECMP_MEMBERS])
    check_eq(await read_all(sw, fy.P4ActionProfileGroup("nexthop")), [], "groups after delete")
    check_eq(await read_all(sw, fy.P4ActionProfileMember("nexthop")), [], "members after delete")


@case
async def counters_read_and_count(sw, dp):
    """Indexed counters: one index, a wildcard read of all cells, and exact increments from one frame."""
    cells = await read_all(sw, fy.P4CounterEntry("drop_reason"))
    check_eq(sorted(c.index for c in cells), list(range(DROP_REASONS)), "drop_reason wildcard read indices")
    await sw.insert([my_station(), member(1, 1, host_mac(1))])
    await sw.insert([nexthop_entry(1, member_id=1), route4("10.10.0.0/16", 1)])

    drop0 = await counter(sw, "drop_reason", DROP_NO_ROUTE)
    rx_cell = 2 * 8 + 0  # port 2, priority 0 (DSCP 0 under the default DSCP trust)
    rx0 = await counter(sw, "rx_port_prio", rx_cell)
    tx_cell = 1 * 8 + 0
    tx0 = await counter(sw, "tx_port_prio", tx_cell)

    lost = udp4(ROUTER_MAC, host_mac(2), "10.9.0.1", "172.16.0.1")
    dp.send(2, lost)
    check_eq(await dp.collect(), [], "frames out for an unrouted destination")
    drop1 = await wait_counter(sw, "drop_reason", DROP_NO_ROUTE, drop0[0] + 1)
    check_eq(drop1[0] - drop0[0], 1, "drop_reason[NO_ROUTE] packet increment")

    ok = udp4(ROUTER_MAC, host_mac(2), "10.9.0.1", "10.10.0.1", payload=bytes(100))
    dp.send(2, ok)
    check_eq(await dp.collect(), [(1, routed4(ok, host_mac(1)))], "routed frame")
    rx1 = await wait_counter(sw, "rx_port_prio", rx_cell, rx0[0] + 2)
    check_eq((rx1[0] - rx0[0], rx1[1] - rx0[1]), (2, len(lost) + len(ok)), "rx_port_prio[port 2, prio 0] (packets, bytes)")
    tx1 = await wait_counter(sw, "tx_port_prio", tx_cell, tx0[0] + 1)
    check_eq((tx1[0] - tx0[0], tx1[1] - tx0[1]), (1, len(ok)), "tx_port_prio[port 1, prio 0] (packets, bytes)")


@case
async def no_direct_counters(sw, dp):
    """roce_switch.p4 declares no direct counters: P4Info lists none and tables carry no counter data."""
    check_eq(len(sw.p4info.direct_counters), 0, "direct counters in P4Info")
    await sw.insert([route4("10.11.0.0/16", 1)])
    got = await read_all(sw, fy.P4TableEntry("ipv4_lpm"))
    check_eq([e.counter_data for e in got], [None], "counter_data of a table without a direct counter")


@case
async def packet_out_each_port(sw, dp):
    """A P4PacketOut with egress_port N leaves port N byte-exact (packet_out header stripped) and no other."""
    for port in dp.ports:
        frame = udp4(host_mac(port), "02:00:00:00:0c:01", "10.12.0.1", "10.12.0.2", sport=0xD000 + port)
        await sw.write([fy.P4PacketOut(frame, egress_port=port, _pad=0)])
        check_eq(await dp.collect(), [(port, frame)], f"frames after PacketOut to port {port}")


@case
async def packet_in_from_acl_punt(sw, dp):
    """An ACL punt on EtherType 0x88b5 arrives through read_packets with the payload and ingress_port."""
    await sw.insert([fy.P4TableEntry(
        "acl", match=fy.P4TableMatch(ether_type="0x88b5/&0xffff"), action=fy.P4TableAction("punt_to_cpu"), priority=10,
    )])
    frames = {
        port: mac_bytes("02:00:00:00:ff:01") + mac_bytes(host_mac(port)) + b"\x88\xb5" + bytes([port]) * 46
        for port in dp.ports
    }

    async def receive(n):
        got = []
        async for pkt in sw.read_packets(eth_types={0x88B5}):
            got.append(pkt)
            if len(got) == n:
                return got

    task = asyncio.create_task(receive(len(frames)))
    await asyncio.sleep(0.1)  # the queue opens when the iterator first runs
    for port, frame in frames.items():
        dp.send(port, frame)
    try:
        got = await asyncio.wait_for(task, 5)
    except asyncio.TimeoutError:
        raise CaseFailed("PacketIn for every port did not arrive within 5 s") from None
    by_port = {p["ingress_port"]: p.payload for p in got}
    check_eq(by_port, frames, "PacketIn payload by ingress_port")
    check_eq(await dp.collect(), [], "punted frames must not leave a port")


@case
async def delete_all_empties_owned_state(sw, dp):
    """finsy's delete_all() (wildcard reads incl. PRE, default-entry resets, groups, members) leaves no client state."""
    await sw.insert([my_station(), member(1, 1, host_mac(1)), member(2, 2, host_mac(2))])
    await sw.insert([fy.P4ActionProfileGroup("nexthop", group_id=5, members=[fy.P4Member(1, weight=1), fy.P4Member(2, weight=1)])])
    await sw.insert([nexthop_entry(5, group_id=5), route4("10.13.0.0/16", 5)])
    await sw.delete_all()
    for table in OWNED_TABLES:
        check_eq(await read_all(sw, fy.P4TableEntry(table)), [], f"{table} after delete_all")
    check_eq(await read_all(sw, fy.P4ActionProfileGroup("nexthop")), [], "groups after delete_all")
    check_eq(await read_all(sw, fy.P4ActionProfileMember("nexthop")), [], "members after delete_all")


# ---- TLS cases: a second daemon with mutual TLS (--tls-addr) -------------

TLS_CASES = []


def tls_case(fn):
    TLS_CASES.append(fn)
    return fn


def tls_options(args, *, ca=None, with_cert=True):
    """finsy options for the mTLS daemon; ``target_name_override`` names the
    server certificate's host (a ``unix:`` target has none)."""
    from pathlib import Path

    from finsy.grpcutil import GRPCCredentialsTLS

    creds = GRPCCredentialsTLS(
        cacert=Path(ca or args.tls_ca),
        cert=Path(args.tls_cert) if with_cert else None,
        private_key=Path(args.tls_key) if with_cert else None,
        target_name_override="localhost",
    )
    return fy.SwitchOptions(device_id=args.device_id, initial_election_id=args.election_id, channel_credentials=creds)


async def expect_refused(addr, opts, what):
    """Connecting with ``opts`` must fail (an error, not a session) within 10 s."""
    try:
        async with fy.Switch("roceswitch-tls", addr, opts) as sw:
            raise CaseFailed(f"{what}: connected (primary={sw.is_primary})")
    except CaseFailed:
        raise
    except Exception as e:  # the refusal, as finsy reports it
        return e


@tls_case
async def tls_mutual_session_writes_and_reads(args):
    """With the CA and a client certificate finsy connects over mTLS, gets Capabilities and the P4Info, writes and reads."""
    async with fy.Switch("roceswitch-tls", args.tls_addr, tls_options(args)) as sw:
        check(sw.is_primary, "not primary over mTLS")
        check_eq(sw.p4runtime_version.major, 1, "p4runtime major version")
        await sw.insert([route4("10.20.0.0/16", 1)])
        got = [e.match_str(sw.p4info) for e in await read_all(sw, fy.P4TableEntry("ipv4_lpm"))]
        check_eq(got, [ms(sw, "ipv4_lpm", dst_addr="10.20.0.0/16")], "entry read back over mTLS")
        await sw.delete_all()


@tls_case
async def tls_client_without_certificate_refused(args):
    """The mTLS daemon refuses a TLS client that presents no certificate."""
    await expect_refused(args.tls_addr, tls_options(args, with_cert=False), "client without a certificate")


@tls_case
async def tls_plaintext_client_refused(args):
    """The mTLS daemon refuses a plain-text client."""
    opts = fy.SwitchOptions(device_id=args.device_id, initial_election_id=args.election_id)
    await expect_refused(args.tls_addr, opts, "plain-text client")


@tls_case
async def tls_server_of_another_ca_refused(args):
    """finsy refuses the daemon when it trusts another CA than the one that signed the server."""
    await expect_refused(args.tls_addr, tls_options(args, ca=args.tls_rogue_ca), "client trusting another CA")


# ---- runner -------------------------------------------------------------


async def run_cases(args, ifaces):
    opts = fy.SwitchOptions(device_id=args.device_id, initial_election_id=args.election_id)
    dp = Dataplane(ifaces)
    passed = failed = 0
    try:
        async with fy.Switch("roceswitch", args.addr, opts) as sw:
            for fn in CASES:
                if args.only and fn.__name__ not in args.only:
                    continue
                t0 = time.monotonic()
                try:
                    await asyncio.wait_for(clear_owned(sw), args.case_timeout)
                    await dp.flush()
                    await asyncio.wait_for(fn(sw, dp), args.case_timeout)
                    passed += 1
                    print(f"PASS {fn.__name__} ({time.monotonic() - t0:.2f} s)", flush=True)
                except CaseFailed as e:
                    failed += 1
                    print(f"FAIL {fn.__name__}: {e}", flush=True)
                except asyncio.TimeoutError:
                    failed += 1
                    print(f"FAIL {fn.__name__}: no result within {args.case_timeout} s", flush=True)
                except Exception as e:  # a client or server error is a failure of this case
                    failed += 1
                    print(f"FAIL {fn.__name__}: {type(e).__name__}: {e}", flush=True)
                    if args.verbose:
                        traceback.print_exc()
            try:
                await clear_owned(sw)
            except Exception as e:
                print(f"warning: final cleanup failed: {e}", file=sys.stderr)
    finally:
        dp.close()
    if args.tls_addr:
        for fn in TLS_CASES:
            if args.only and fn.__name__ not in args.only:
                continue
            t0 = time.monotonic()
            try:
                await asyncio.wait_for(fn(args), args.case_timeout)
                passed += 1
                print(f"PASS {fn.__name__} ({time.monotonic() - t0:.2f} s)", flush=True)
            except asyncio.TimeoutError:
                failed += 1
                print(f"FAIL {fn.__name__}: no result within {args.case_timeout} s", flush=True)
            except Exception as e:
                failed += 1
                print(f"FAIL {fn.__name__}: {type(e).__name__}: {e}", flush=True)
                if args.verbose:
                    traceback.print_exc()
    return passed, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--addr", required=True, help="gRPC address: unix:/path or HOST:PORT")
    ap.add_argument("--port", action="append", default=[], metavar="N=IFACE", help="switch port N's peer interface")
    ap.add_argument("--device-id", type=int, default=1)
    ap.add_argument("--election-id", type=int, default=10)
    ap.add_argument("--case-timeout", type=float, default=30.0)
    ap.add_argument("--only", action="append", default=[], help="run only this case (repeatable)")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--tls-addr", help="address of a second daemon serving mutual TLS (runs the tls_* cases)")
    ap.add_argument("--tls-ca", help="CA (PEM) of the TLS daemon's and the client's certificates")
    ap.add_argument("--tls-cert", help="client certificate (PEM)")
    ap.add_argument("--tls-key", help="client key (PEM)")
    ap.add_argument("--tls-rogue-ca", help="a CA that did not sign the server's certificate (PEM)")
    args = ap.parse_args()
    ifaces = {}
    for spec in args.port:
        n, _, iface = spec.partition("=")
        ifaces[int(n)] = iface
    if len(ifaces) < 4:
        ap.error("give at least 4 --port N=IFACE (ports 0..3)")
    if args.tls_addr and not all((args.tls_ca, args.tls_cert, args.tls_key, args.tls_rogue_ca)):
        ap.error("--tls-addr needs --tls-ca, --tls-cert, --tls-key and --tls-rogue-ca")
    unknown = set(args.only) - {fn.__name__ for fn in CASES + TLS_CASES}
    if unknown:
        ap.error(f"unknown cases: {sorted(unknown)}")
    try:
        passed, failed = asyncio.run(run_cases(args, ifaces))
    except Exception as e:
        # No session at all (connect failed): the whole suite counts as one failure.
        print(f"FAIL connect: {type(e).__name__}: {e}", flush=True)
        if args.verbose:
            traceback.print_exc()
        passed, failed = 0, 1
    print(f"finsy: {passed} passed, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
