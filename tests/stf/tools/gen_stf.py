#!/usr/bin/env python3
"""Writes the expected packets of the STF corpus (../NAME.stf).

Each test below builds its input packets and computes the bytes the P4
program must emit, independently of our compiler and runtime: checksums,
CRCs and header rewrites are computed here in plain Python. Run it after
changing a test: `python3 tests/stf/tools/gen_stf.py`.
"""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = {}


def test(fn):
    TESTS[fn.__name__] = fn
    return fn


def h(b):
    return b.hex()


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def ip(s):
    return bytes(int(x) for x in s.split("."))


def eth(dst, src, etype):
    return mac(dst) + mac(src) + struct.pack("!H", etype)


def ones_sum(data):
    if len(data) % 2:
        data += b"\0"
    s = 0
    for i in range(0, len(data), 2):
        s += (data[i] << 8) | data[i + 1]
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def csum16(data):
    return (~ones_sum(data)) & 0xFFFF


def ipv4(src, dst, ttl=64, proto=17, total_len=20, ident=1, tos=0, options=b"", csum=None):
    ihl = 5 + len(options) // 4
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, total_len, ident, 0, ttl, proto, 0, ip(src), ip(dst)) + options
    c = csum16(hdr) if csum is None else csum
    return hdr[:10] + struct.pack("!H", c) + hdr[12:]


def udp(src_ip, dst_ip, sport, dport, payload, csum=None):
    length = 8 + len(payload)
    hdr = struct.pack("!HHHH", sport, dport, length, 0)
    if csum is None:
        pseudo = ip(src_ip) + ip(dst_ip) + struct.pack("!BBH", 0, 17, length)
        csum = csum16(pseudo + hdr + payload)
    return struct.pack("!HHHH", sport, dport, length, csum) + payload


def crc16(data):
    """CRC-16/ARC (poly 0x8005 reflected, init 0), v1model crc16."""
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def crc32(data):
    return zlib.crc32(data) & 0xFFFFFFFF


def xor16(data):
    if len(data) % 2:
        data += b"\0"
    x = 0
    for i in range(0, len(data), 2):
        x ^= (data[i] << 8) | data[i + 1]
    return x


def pack_bits(fields):
    """[(value, width)] packed MSB-first into bytes (zero-padded)."""
    v, n = 0, 0
    for value, width in fields:
        v = (v << width) | (value & ((1 << width) - 1))
        n += width
    pad = (-n) % 8
    return (v << pad).to_bytes((n + pad) // 8, "big")


# ---------------------------------------------------------------------------


@test
def l2_flood():
    known = eth("00:00:00:00:00:02", "00:00:00:00:00:01", 0x0800) + b"\x11\x22\x33\x44"
    unknown = eth("ff:ff:ff:ff:ff:ff", "00:00:00:00:00:01", 0x0806) + b"\xaa\xbb"

    def stamp(pkt, rid):
        return pkt[:10] + struct.pack("!H", rid) + pkt[12:]

    return f"""# Multicast group 1: node 0 (rid 1) on ports 1 and 2, node 1 (rid 2) on port 3.
mc_mgrp_create 1
mc_node_create 1 1 2
mc_node_create 2 3
mc_node_associate 1 0
mc_node_associate 1 1
add dmac hdr.ethernet.dstAddr:0x000000000002 forward(port:2)

# Known destination: unicast to port 2, unchanged.
packet 1 {h(known)}
expect 2 {h(known)}$
wait

# Unknown destination from port 1: flooded to 2 (rid 1) and 3 (rid 2); the
# copy for port 1 is pruned in egress (port 1 is an interface here, so a
# copy there would fail the test).
packet 1 {h(unknown)}
expect 2 {h(stamp(unknown, 1))}$
expect 3 {h(stamp(unknown, 2))}$
wait

# From port 3: copies to 1 and 2 (both rid 1); port 3's own copy is pruned.
packet 3 {h(unknown)}
expect 1 {h(stamp(unknown, 1))}$
expect 2 {h(stamp(unknown, 1))}$
"""


@test
def ipv4_lpm():
    def pkt(dst, ttl):
        payload = b"\xde\xad\xbe\xef"
        return eth("00:00:00:00:00:aa", "00:00:00:00:00:bb", 0x0800) + ipv4("192.168.0.1", dst, ttl=ttl, total_len=24) + payload

    def routed(dst, ttl, dmac, smac):
        payload = b"\xde\xad\xbe\xef"
        return eth(dmac, smac, 0x0800) + ipv4("192.168.0.1", dst, ttl=ttl - 1, total_len=24) + payload

    return f"""add ipv4_lpm hdr.ipv4.dstAddr:10.0.0.0/8 set_nhop(dmac:00:00:00:00:01:01, smac:00:00:00:00:0f:01, port:1)
add ipv4_lpm hdr.ipv4.dstAddr:10.1.0.0/16 set_nhop(dmac:00:00:00:00:02:02, smac:00:00:00:00:0f:02, port:2)
add ipv4_lpm dstAddr:10.1.2.3/32 set_nhop(dmac:00:00:00:00:03:03, smac:00:00:00:00:0f:03, port:3)

# 10.9.9.9 only matches /8.
packet 0 {h(pkt("10.9.9.9", 64))}
expect 1 {h(routed("10.9.9.9", 64, "00:00:00:00:01:01", "00:00:00:00:0f:01"))}$
# 10.1.7.7 matches /8 and /16: the longer prefix wins.
packet 0 {h(pkt("10.1.7.7", 64))}
expect 2 {h(routed("10.1.7.7", 64, "00:00:00:00:02:02", "00:00:00:00:0f:02"))}$
# 10.1.2.3 matches all three: /32 wins; TTL 2 becomes 1.
packet 0 {h(pkt("10.1.2.3", 2))}
expect 3 {h(routed("10.1.2.3", 2, "00:00:00:00:03:03", "00:00:00:00:0f:03"))}$
# No route: dropped. TTL 1: dropped before the lookup.
packet 0 {h(pkt("11.0.0.1", 64))}
packet 0 {h(pkt("10.1.2.3", 1))}
"""


@test
def ecmp_selector():
    def flow(src, sport, dport):
        payload = b"\x01\x02\x03\x04"
        i = ipv4(src, "10.2.3.4", proto=17, total_len=20 + 8 + 4)
        u = udp(src, "10.2.3.4", sport, dport, payload)
        return eth("00:00:00:00:00:aa", "00:00:00:00:00:bb", 0x0800) + i + u

    def member_of(src, sport, dport):
        fields = [(int.from_bytes(ip(src), "big"), 32), (17, 8), (sport, 16), (dport, 16)]
        return crc16(pack_bits(fields)) % 2  # index into the group's members [1, 2]

    lines = []
    flows = [("192.168.1.%d" % i, 1000 + i, 4791) for i in range(1, 9)]
    seen = set()
    for src, sport, dport in flows:
        m = member_of(src, sport, dport)
        seen.add(m)
        pkt = flow(src, sport, dport)
        port = m + 1
        out = mac("00:00:00:00:00:0%d" % port) + pkt[6:]
        crc = crc16(pack_bits([(int.from_bytes(ip(src), "big"), 32), (17, 8), (sport, 16), (dport, 16)]))
        lines.append(f"# {src}:{sport} -> :{dport}: crc16 of the selector fields = 0x{crc:04x}, even -> member 1, odd -> member 2")
        lines.append(f"packet 0 {h(pkt)}")
        lines.append(f"expect {port} {h(out)}$")
    assert seen == {0, 1}, "flows must exercise both members"
    pl = b"\x01\x02\x03\x04"
    direct = eth("00:00:00:00:00:aa", "00:00:00:00:00:bb", 0x0800) + ipv4("192.168.9.9", "10.9.1.1", proto=17, total_len=32) + udp("192.168.9.9", "10.9.1.1", 7, 8, pl)
    direct_out = mac("00:00:00:00:00:03") + direct[6:]
    body = "\n".join(lines)
    return f"""member ecmp_selector_profile 1 set_nhop(dmac:00:00:00:00:00:01, port:1)
member ecmp_selector_profile 2 set_nhop(dmac:00:00:00:00:00:02, port:2)
member ecmp_selector_profile 3 set_nhop(dmac:00:00:00:00:00:03, port:3)
group ecmp_selector_profile 10 1 2
add ecmp hdr.ipv4.dstAddr:10.0.0.0/8 group(10)
add ecmp hdr.ipv4.dstAddr:10.9.0.0/16 member(3)

{body}

# 10.9.1.1 matches the /16 route, which points at member 3 directly.
packet 0 {h(direct)}
expect 3 {h(direct_out)}$
"""


def mpls(label, bos, ttl, tc=0):
    return struct.pack("!I", (label << 12) | (tc << 9) | (bos << 8) | ttl)


@test
def mpls_stack():
    payload = b"\x45\x00\x00\x14"

    def frame(etype, labels, depth=None):
        src = bytes([0, 0, 0, 0, 0, depth if depth is not None else 0xbb])
        return mac("00:00:00:00:00:aa") + src + struct.pack("!H", etype) + b"".join(labels) + payload

    return f"""add lfib hdr.mpls[0].label:100 pop(port:3)
add lfib mpls$0.label:200 push(label:0x777, port:2)
add lfib label:300 swap(label:301, port:1)

# Two labels, top 100: popped; one label (50, bottom of stack) remains.
packet 0 {h(frame(0x8847, [mpls(100, 0, 64), mpls(50, 1, 63)]))}
expect 3 {h(frame(0x8847, [mpls(50, 1, 63)], depth=2))}$
# One label 200: a new top label 0x777 with TTL 10-1 is pushed.
packet 0 {h(frame(0x8847, [mpls(200, 1, 10)]))}
expect 2 {h(frame(0x8847, [mpls(0x777, 0, 9), mpls(200, 1, 10)], depth=1))}$
# The only label popped: the stack is empty and the EtherType becomes IPv4.
packet 0 {h(frame(0x8847, [mpls(100, 1, 5)]))}
expect 3 {h(frame(0x0800, [], depth=1))}$
# Three labels, top 300: swapped to 301, TTL 7-1.
packet 0 {h(frame(0x8847, [mpls(300, 0, 7), mpls(1, 0, 1), mpls(2, 1, 2)]))}
expect 1 {h(frame(0x8847, [mpls(301, 0, 6), mpls(1, 0, 1), mpls(2, 1, 2)], depth=3))}$
# Unknown label: dropped.
packet 0 {h(frame(0x8847, [mpls(999, 1, 5)]))}
"""


ETH_A = "00:00:00:00:00:0a"
ETH_B = "00:00:00:00:00:0b"


@test
def calc():
    def req(op, a, b, ver=1):
        return eth(ETH_A, ETH_B, 0x1234) + struct.pack("!BBBBIII", 0x50, 0x34, ver, op, a, b, 0)

    def resp(op, a, b, res):
        return eth(ETH_B, ETH_A, 0x1234) + struct.pack("!BBBBIII", 0x50, 0x34, 1, op, a, b, res & 0xFFFFFFFF)

    cases = [(ord("+"), 7, 5, 12), (ord("-"), 3, 5, 3 - 5), (ord("&"), 0xF0F0, 0xFF00, 0xF000),
             (ord("|"), 0xF0F0, 0x0F00, 0xFFF0), (ord("^"), 0xFFFF0000, 0x0F0F0F0F, 0xF0F00F0F)]
    lines = []
    for op, a, b, r in cases:
        lines.append(f"# {a:#x} {chr(op)} {b:#x} = {r & 0xFFFFFFFF:#x}, sent back out of port 3 with the MACs swapped")
        lines.append(f"packet 3 {h(req(op, a, b))}")
        lines.append(f"expect 3 {h(resp(op, a, b, r))}$")
    body = "\n".join(lines)
    return f"""{body}
# Unknown operator: the const default action drops it.
packet 3 {h(req(ord("*"), 1, 2))}
# Version 2: lookahead does not recognise the header; not parsed, dropped.
packet 3 {h(req(ord("+"), 1, 2, ver=2))}
"""


@test
def registers_counters():
    def pkt(count=0, total=0):
        return eth(ETH_A, ETH_B, 0x88B5) + struct.pack("!II", count, total)

    n = len(pkt())
    return f"""# Port 1 starts counting from 100.
register_write pkt_count 1 100
packet 1 {h(pkt())}
expect 4 {h(pkt(101, 1))}$
packet 1 {h(pkt())}
expect 4 {h(pkt(102, 2))}$
packet 2 {h(pkt())}
expect 4 {h(pkt(1, 3))}$
wait
check_register pkt_count 1 102
check_register MyIngress.pkt_count 2 1
check_register all_count 0 3
check_counter port_counter(1) packets == 2
check_counter port_counter(1) bytes == {2 * n}
check_counter MyIngress.port_counter(2) packets == 1
check_counter port_counter(3) packets == 0
"""


@test
def meters():
    def pkt(idx, ci=0, cd=0):
        return eth(ETH_A, ETH_B, 0x88B5) + bytes([idx, ci, cd, 0])

    return f"""# Meter cell 0 and the direct meter of entry idx=0: CIR 1 packet/s,
# CBS 1 packet, PIR 1 packet/s, PBS 2 packets. Packets arrive 1 us apart,
# so the buckets do not refill: green, yellow, then red.
meter_set flow_meter 0 1 1 1 2
add policer hdr.data.idx:0 mark_direct()
add policer hdr.data.idx:1 mark_direct()
direct_meter_set policer hdr.data.idx:0 rates(cir:1, cburst:1, pir:1, pburst:2)
packet 0 {h(pkt(0))}
expect 1 {h(pkt(0, 0, 0))}$
packet 0 {h(pkt(0))}
expect 1 {h(pkt(0, 1, 1))}$
packet 0 {h(pkt(0))}
expect 1 {h(pkt(0, 2, 2))}$
# Meter cell 1 and the entry idx=1 are not configured: always green.
packet 0 {h(pkt(1))}
expect 1 {h(pkt(1, 0, 0))}$
packet 0 {h(pkt(1))}
expect 1 {h(pkt(1, 0, 0))}$
packet 0 {h(pkt(1))}
expect 1 {h(pkt(1, 0, 0))}$
"""


@test
def clone():
    def pkt(kind, itype=0, eport=0, mark=0x05):
        return eth(ETH_A, ETH_B, 0x88B5) + bytes([kind, itype, eport, mark])

    return f"""mirroring_add 5 4
mirroring_add 6 3

# kind 0: no clone.
packet 0 {h(pkt(0))}
expect 2 {h(pkt(0, 0, 2, 0x11))}$
wait
# kind 1: I2E clone to session 5 (port 4): instance type 1, the original
# mark 0x05 (ingress's 0x11 is not in the clone), and no tag.
packet 0 {h(pkt(1))}
expect 2 {h(pkt(1, 0, 2, 0x11))}$
expect 4 {h(pkt(1, 1, 4, 0x05))}$
wait
# kind 3: the same, preserving field list 1 (tag 0x70).
packet 0 {h(pkt(3))}
expect 2 {h(pkt(3, 0, 2, 0x11))}$
expect 4 {h(pkt(3, 1, 4, 0x75))}$
wait
# kind 2: E2E clone to session 6 (port 3): the copy keeps egress's header
# changes and runs egress again as instance type 2 on port 3.
packet 0 {h(pkt(2))}
expect 2 {h(pkt(2, 0, 2, 0x11))}$
expect 3 {h(pkt(2, 2, 3, 0x11))}$
"""


@test
def resubmit_recirc():
    def pkt(op, passes=0, rtype=0, value=0):
        return eth(ETH_A, ETH_B, 0x88B5) + bytes([op, passes, rtype, value])

    return f"""# op 1: resubmitted once; counter (field list 1) = 0x42 survives, scratch does not.
packet 0 {h(pkt(1))}
expect 1 {h(pkt(1, 0, 6, 0x42))}$
# op 2: three passes through egress; the last pass sees the counter the
# second pass preserved (2 << 4).
packet 0 {h(pkt(2))}
expect 1 {h(pkt(2, 3, 4, 0x20))}$
# op 0: straight through.
packet 0 {h(pkt(0, 9, 9, 9))}
expect 1 {h(pkt(0, 9, 9, 9))}$
"""


@test
def ternary_acl():
    def pkt(src, dst, proto):
        return eth(ETH_A, ETH_B, 0x0800) + ipv4(src, dst, proto=proto, total_len=20)

    cases = [
        ("10.2.0.1", "1.1.1.1", 6, 1, "10/8 (prio 10) beats the catch-all (prio 1)"),
        ("10.1.5.5", "1.1.1.1", 6, None, "10.1/16 deny (prio 20) beats 10/8"),
        ("10.1.1.1", "1.1.1.1", 17, 2, "host + UDP (prio 30) beats the deny"),
        ("10.1.1.1", "1.1.1.1", 6, None, "host but TCP: the deny (prio 20) wins"),
        ("11.0.0.1", "2.2.2.2", 6, 3, "only the catch-all matches"),
        ("11.0.0.1", "9.9.9.9", 1, 4, "dst 9.0.0.0/8 with low priority 2 beats catch-all 1"),
    ]
    lines = []
    for src, dst, proto, port, why in cases:
        lines.append(f"# {src} -> {dst} proto {proto}: {why}")
        lines.append(f"packet 0 {h(pkt(src, dst, proto))}")
        if port is not None:
            lines.append(f"expect {port} {h(pkt(src, dst, proto))}$")
    body = "\n".join(lines)
    return f"""# In STF the larger priority wins (p4c hands bmv2 10000 - priority).
add acl 10 hdr.ipv4.srcAddr:0x0a000000&&&0xff000000 permit(port:1)
add acl 20 srcAddr:0x0a01**** deny()
add acl 30 srcAddr:10.1.1.1&&&255.255.255.255 protocol:0x11 permit(port:2)
add acl 1 protocol:0x** permit(port:3)
add acl 2 dstAddr:0x09****** permit(port:4)

{body}
"""


@test
def range_optional():
    def pkt(a, b, cls=0):
        return eth(ETH_A, ETH_B, 0x88B5) + struct.pack("!HBB", a, b, cls)

    cases = [(120, 7, 1), (155, 7, 2), (155, 8, 1), (500, 9, 3), (500, 7, 0), (99, 7, 0), (200, 1, 0), (199, 1, 1)]
    lines = []
    for a, b, c in cases:
        lines.append(f"packet 0 {h(pkt(a, b))}")
        lines.append(f"expect 1 {h(pkt(a, b, c))}$")
    body = "\n".join(lines)
    return f"""add classify 10 hdr.data.a:100..199 set_class(c:1)
add classify 20 a:150->160 b:7 set_class(c:2)
add classify 5 a:* b:9 set_class(c:3)

# (a, b) -> class: (120,7)->1 (155,7)->2 (155,8)->1 (500,9)->3 (500,7)->0
# (99,7)->0 (200,1)->0 (199,1)->1
{body}
"""


@test
def value_set():
    def pkt(etype, tag):
        return eth(ETH_A, ETH_B, etype) + struct.pack("!H", tag) + b"\xcc"

    return f"""# Empty value set: nothing is parsed as a tag.
packet 0 {h(pkt(0x9999, 7))}
expect 1 {h(pkt(0x9999, 7))}$
value_set tag_types 0x9999 0x8800&&&0xff00
packet 0 {h(pkt(0x9999, 7))}
expect 2 {h(pkt(0x9999, 8))}$
packet 0 {h(pkt(0x88ab, 0x10))}
expect 2 {h(pkt(0x88ab, 0x11))}$
packet 0 {h(pkt(0x9998, 7))}
expect 1 {h(pkt(0x9998, 7))}$
"""


@test
def ipv4_options():
    payload = b"\x77\x66\x55\x44"

    def pkt(options, dport, csum=0x1234):
        u = struct.pack("!HHHH", 1111, dport, 12, csum) + payload
        i = ipv4("1.2.3.4", "5.6.7.8", proto=17, total_len=20 + len(options) + len(u), options=options)
        return eth(ETH_A, ETH_B, 0x0800) + i + u

    opt8 = bytes([0x94, 0x04, 0x00, 0x00, 0x01, 0x01, 0x01, 0x00])  # router alert, nop, nop, nop, eol
    opt4 = bytes([0x01, 0x01, 0x01, 0x00])
    none = b""
    return f"""# No options (IHL 5): UDP dst port 0x1002 -> egress port 2.
packet 0 {h(pkt(none, 0x1002))}
expect 2 {h(pkt(none, 0x1002, 0))}$
# 8 bytes of options (IHL 7): port 3.
packet 0 {h(pkt(opt8, 0x2003))}
expect 3 {h(pkt(opt8, 0x2003, 0))}$
# 4 bytes of options (IHL 6): port 1.
packet 0 {h(pkt(opt4, 0x0011))}
expect 1 {h(pkt(opt4, 0x0011, 0))}$
"""


@test
def header_union():
    payload = b"\xab\xcd"

    def v4(ttl, tos, total=22, csum=None):
        return eth(ETH_A, ETH_B, 0x0800) + ipv4("10.0.0.1", "10.0.0.2", ttl=ttl, tos=tos, proto=17, total_len=total, csum=csum) + payload

    orig_csum = csum16(ipv4("10.0.0.1", "10.0.0.2", ttl=64, tos=0, proto=17, total_len=22, csum=0))

    def v6(hl, src=b"\x20\x01" + b"\0" * 13 + b"\x01", dst=b"\x20\x01" + b"\0" * 13 + b"\x02", nh=17, plen=2):
        hdr = struct.pack("!IHBB", 6 << 28, plen, nh, hl) + src + dst
        return eth(ETH_A, ETH_B, 0x86DD) + hdr + payload

    mapped = lambda a: b"\0" * 10 + b"\xff\xff" + ip(a)
    converted = v6(63, src=mapped("10.0.0.1"), dst=mapped("10.0.0.2"))
    other = eth(ETH_A, ETH_B, 0x1111) + payload
    return f"""# IPv4: TTL 64 -> 63 out of port 1 (the header checksum is left alone).
packet 0 {h(v4(64, 0))}
expect 1 {h(v4(63, 0, csum=orig_csum))}$
# IPv6: hop limit 9 -> 8 out of port 2.
packet 0 {h(v6(9))}
expect 2 {h(v6(8))}$
# IPv4 with TOS 0xff becomes IPv6 (::ffff:10.0.0.1 -> ::ffff:10.0.0.2), hop limit 63.
packet 0 {h(v4(64, 0xff))}
expect 3 {h(converted)}$
# Neither: dropped.
packet 0 {h(other)}
"""


@test
def serializable_enums():
    def pkt(op, val, raw=0):
        return eth(ETH_A, ETH_B, 0x88B5) + bytes([op, val, raw, 0])

    arp = eth(ETH_A, ETH_B, 0x0806) + b"\x00\x01"
    arp_out = eth(ETH_A, ETH_B, 0x0800) + b"\x00\x01"
    other = eth(ETH_A, ETH_B, 0x0800) + b"\x00\x01"
    return f"""# SET: val = 0x55, raw = op + 0x10.
packet 0 {h(pkt(1, 3))}
expect 1 {h(pkt(1, 0x55, 0x11))}$
# INC: val + 1, op becomes NOP (0).
packet 0 {h(pkt(2, 3))}
expect 1 {h(pkt(0, 4, 0x10))}$
# 7 names no member: kept as it is.
packet 0 {h(pkt(7, 3))}
expect 1 {h(pkt(7, 3, 0x17))}$
# ARP: EtherType rewritten to IPV4, out of port 2.
packet 0 {h(arp)}
expect 2 {h(arp_out)}$
# Anything else: dropped.
packet 0 {h(other)}
"""


def data_pkt(body, etype=0x88B5):
    return eth(ETH_A, ETH_B, etype) + bytes(body)


def s8(v):
    """int<8> value to its byte."""
    return v & 0xFF


def sat_s8(v):
    return max(-128, min(127, v))


def pairs(cases):
    lines = []
    for comment, inp, out in cases:
        if comment:
            lines.append(f"# {comment}")
        lines.append(f"packet 0 {h(inp)}")
        if out is not None:
            lines.append(f"expect 1 {h(out)}$")
    return "\n".join(lines) + "\n"


@test
def action_run():
    def pkt(a, r1=0, r2=0, r3=0):
        return data_pkt([a, r1, r2, r3])

    return """add t1 hdr.data.a:1 set_x()
add t1 hdr.data.a:2 set_y()
add t1 hdr.data.a:3 NoAction()
add t2 hdr.data.a:1 mark(v:0x05)
add t3 hdr.data.a:2 NoAction()
""" + pairs([
        ("a=1: set_x -> r1 1; t2 hits mark(5) -> 0x15; t3 misses -> 0xaa", pkt(1), pkt(1, 1, 0x15, 0xAA)),
        ("a=2: set_y -> r1 2; t2 misses, default mark(0x0e) -> 0x2e; t3 hits -> 0xbb", pkt(2), pkt(2, 2, 0x2E, 0xBB)),
        ("a=3: t1 hits NoAction -> default branch, r1 3", pkt(3), pkt(3, 3, 0x2E, 0xAA)),
        ("a=4: t1 misses (default NoAction) -> r1 3", pkt(4), pkt(4, 3, 0x2E, 0xAA)),
    ])


@test
def exit_stmt():
    def pkt(op, b1=0, b2=0, b3=0, b4=0, e=0):
        return data_pkt([op, b1, b2, b3, b4, e])

    return "add t hdr.data.op:2 stop_here()\n" + pairs([
        ("op 1: exit right after b1; egress still sets e", pkt(1), pkt(1, 1, 0, 0, 0, 0xEE)),
        ("op 2: exit inside the action stop_here: b4 is not set", pkt(2), pkt(2, 1, 2, 3, 0, 0xEE)),
        ("op 0: no exit", pkt(0), pkt(0, 1, 2, 0x33, 4, 0xEE)),
    ])


@test
def saturating():
    cases = []
    for a, b, c, d in [(200, 100, 100, 50), (10, 20, -100, 50), (255, 1, -100, -50), (0, 0, 127, -1)]:
        out = [a, b, s8(c), s8(d), min(a + b, 255), max(a - b, 0), s8(sat_s8(c + d)), s8(sat_s8(c - d))]
        cases.append((f"a={a} b={b} c={c} d={d}", data_pkt([a, b, s8(c), s8(d), 0, 0, 0, 0]), data_pkt(out)))
    return pairs(cases)


@test
def slices_concat():
    real = []
    for x0, y0, z0 in [(0x1234, 0xAB, 0x4D), (0xFFFF, 0x01, 0x02), (0x0000, 0x00, 0xFF)]:
        x = (x0 & 0x00FF) | (y0 << 8)
        x = (x & 0xFFF0) | 0xF
        w = (y0 << 24) | (z0 << 16) | x
        cat = (z0 << 16) | (((x >> 4) & 0xFF) << 8) | 0x5A
        z = z0 | 0x80
        y = (y0 & 0xFE) | ((z >> 1) & 1)
        inp = data_pkt(struct.pack("!HBBI", x0, y0, z0, 0) + (0).to_bytes(3, "big"))
        out = data_pkt(struct.pack("!HBBI", x, y, z, w) + cat.to_bytes(3, "big"))
        real.append((f"x={x0:#06x} y={y0:#04x} z={z0:#04x}", inp, out))
    return pairs(real)


@test
def casts_signed():
    cases = []
    for a, b in [(-3, 5), (100, -7), (-128, 0)]:
        wide = (a & 0xFFFF)
        lt = 1 if a < b else 0
        sh = s8(a >> 2)
        neg = s8(-a)
        trunc = s8(b) & 0xF
        flag = 1 if b > 0 else 0
        inp = data_pkt([s8(a), s8(b), 0, 0, 0, 0, 0, 0, 0])
        out = data_pkt([s8(a), s8(b), wide >> 8, wide & 0xFF, lt, sh, neg, trunc, flag])
        cases.append((f"a={a} b={b}: wide={wide:#06x} lt={lt} sh={sh:#04x} neg={neg:#04x} trunc={trunc} flag={flag}", inp, out))
    return pairs(cases)


@test
def functions_nested():
    cases = []
    for a, b in [(3, 9), (200, 100), (250, 1)]:
        m = max(a, b)
        r = (m + 1 + 0x10) & 0xFF
        cases.append((f"max({a}, {b}) = {m}; r = m + 1 + 0x10 = {r:#04x}", data_pkt([a, b, 0, 0]), data_pkt([a, b, m, r])))
    return pairs(cases)


@test
def const_entries():
    cases = []
    for a, b, r in [(0x12, 1, 1), (0x1F, 1, 1), (0x22, 1, 3), (0x12, 2, 4), (0x13, 2, 0xFF)]:
        cases.append((f"a={a:#04x} b={b} -> r={r:#04x}", data_pkt([a, b, 0, 0]), data_pkt([a, b, r, 0])))
    return "# No control-plane entries: everything comes from const entries.\n" + pairs(cases)


@test
def const_entries_priority():
    cases = []
    for a, r in [(0x12, 2), (0x14, 3), (0x15, 1), (0x21, 0xFF), (0x20, 3)]:
        cases.append((f"a={a:#04x} -> r={r:#04x}", data_pkt([a, 0, 0, 0]), data_pkt([a, r, 0, 0])))
    return pairs(cases)


@test
def truncate_pkt():
    payload = bytes(range(1, 7))
    full = lambda op: data_pkt([op, 0x77, 0, 0]) + payload
    inp = lambda op: data_pkt([op, 0, 0, 0]) + payload
    return pairs([
        ("op 1: truncated to 18 bytes (Ethernet + data header)", inp(1), full(1)[:18]),
        ("op 0: full packet", inp(0), full(0)),
    ])


@test
def hashes():
    a, b, c = 0x1234, 0x5678, 0x0BADF00D
    fl = struct.pack("!HHI", a, b, c)
    crc16_v = crc16(fl) % 65536
    crc32_v = crc32(fl) % 0xFFFFFFFF
    ident = ((a << 16) | b) % 0xFFFFFFFF
    cs = csum16(fl) % 65536
    xo = xor16(fl) % 65536
    ranged = (100 + crc16(fl) % 1000) & 0xFFFF
    inp = data_pkt(fl + bytes(18))
    out = data_pkt(fl + struct.pack("!HIIHHHBB", crc16_v, crc32_v, ident, cs, xo, ranged, 7, 0))
    return pairs([(f"crc16={crc16_v:#06x} crc32={crc32_v:#010x} identity={ident:#010x} csum16={cs:#06x} xor16={xo:#06x} 100+crc16%1000={ranged}", inp, out)])


@test
def digest_learn():
    def pkt(src):
        return eth("00:00:00:00:00:ff", src, 0x0800) + b"\x01\x02"

    p1, p2, p3 = pkt("00:00:00:00:00:01"), pkt("00:00:00:00:00:02"), pkt("00:00:00:00:00:03")
    return f"""add smac hdr.ethernet.srcAddr:0x000000000001 NoAction()
# Known source: no digest.
packet 2 {h(p1)}
expect 1 {h(p1)}$
# Unknown sources: one digest each, with the ingress port.
packet 3 {h(p2)}
expect 1 {h(p2)}$
packet 4 {h(p3)}
expect 1 {h(p3)}$
wait
check_digest learn_t 0x000000000002 3
check_digest learn_t 00:00:00:00:00:03 4
"""


@test
def parser_error():
    good = data_pkt([1, 0, 0x12, 0x34])
    bad = data_pkt([2, 0, 0x12, 0x34])
    bad_out = data_pkt([2, 0xBD, 0x12, 0x34])
    short = data_pkt([1, 0])
    return f"""# Version 1: no error, port 1.
packet 0 {h(good)}
expect 1 {h(good)}$
# Version 2: verify fails with BadVersion; the data header was extracted, port 2.
packet 0 {h(bad)}
expect 2 {h(bad_out)}$
# Two bytes where the 4-byte data header should be: PacketTooShort, port 3;
# the unparsed bytes follow the Ethernet header unchanged.
packet 0 {h(short)}
expect 3 {h(short)}$
"""


@test
def verify_checksum():
    good = eth(ETH_A, ETH_B, 0x0800) + ipv4("1.1.1.1", "2.2.2.2", total_len=20)
    bad = eth(ETH_A, ETH_B, 0x0800) + ipv4("1.1.1.1", "2.2.2.2", total_len=20, csum=0xBEEF)
    other = eth(ETH_A, ETH_B, 0x0806) + b"\x00\x01"
    return f"""# Correct header checksum: port 1.
packet 0 {h(good)}
expect 1 {h(good)}$
# Wrong checksum (0xbeef): checksum_error = 1, port 2.
packet 0 {h(bad)}
expect 2 {h(bad)}$
# No IPv4 header: nothing to verify, port 1.
packet 0 {h(other)}
expect 1 {h(other)}$
"""


@test
def udp_checksum():
    payload = b"hello, udp!"

    def pkt(dport, csum=None):
        i = ipv4("10.0.0.1", "10.0.0.2", proto=17, total_len=20 + 8 + len(payload))
        return eth(ETH_A, ETH_B, 0x0800) + i + udp("10.0.0.1", "10.0.0.2", 4000, dport, payload, csum=csum)

    return f"""add port_map hdr.udp.dstPort:53 translate(port:5353)
# Port 53 translated to 5353; the checksum follows.
packet 0 {h(pkt(53))}
expect 1 {h(pkt(5353))}$
# Port 80 with a wrong checksum: recomputed anyway.
packet 0 {h(pkt(80, csum=0x1111))}
expect 1 {h(pkt(80))}$
"""


@test
def parser_select():
    def frame(etype, src_low, tags, payload=b"\xcc\xdd", dst_low=0xFF):
        dst = bytes([0, 0, 0, 0, 0, dst_low])
        src = bytes([0, 0, 0, 0, 0, src_low])
        return dst + src + struct.pack("!H", etype) + b"".join(bytes(t) for t in tags) + payload

    a_in = frame(0x88B5, 0x05, [(1, 0xAA), (0, 0xBB)])
    a_out = frame(0x88B5, 0x05, [(1, 0xAA), (0, 0xBB)], dst_low=2)
    b_in = frame(0x88B5, 0x85, [(1, 0xAA), (0, 0xBB)])
    b_out = frame(0x88B5, 0x85, [(1, 0xAA), (0, 0xBB)], dst_low=0)
    five = [(1, 1), (1, 2), (1, 3), (1, 4), (0, 5)]
    c_in = frame(0x88B6, 0x15, five)
    c_out = frame(0x88B6, 0x15, five, dst_low=3)
    d_in = frame(0x88B6, 0x20, [(0, 1)])
    d_out = frame(0x88B6, 0x20, [(0, 1)], dst_low=0)
    e_in = frame(0x0800, 0x99, [], payload=b"\x45\x00")
    e_out = frame(0x0800, 0x99, [], payload=b"\x45\x00", dst_low=0)
    return f"""# 0x88b5 with source low byte < 0x80: two tags, no error, port 1.
packet 0 {h(a_in)}
expect 1 {h(a_out)}$
# 0x88b5 with source low byte 0x85: no select case matches (no default): NoMatch, port 2.
packet 0 {h(b_in)}
expect 2 {h(b_out)}$
# 0x88b6, source low byte 0x15 in 0x10..0x1f: five chained tags overflow the
# 3-element stack: StackOutOfBounds, port 3, three tags valid, the rest unparsed.
packet 0 {h(c_in)}
expect 3 {h(c_out)}$
# 0x88b6 with 0x20, outside the range: NoMatch.
packet 0 {h(d_in)}
expect 2 {h(d_out)}$
# 0x0800 with any source: accepted without tags.
packet 0 {h(e_in)}
expect 1 {h(e_out)}$
"""


@test
def valid_key():
    def v4(dst):
        return ipv4("192.168.0.1", dst, total_len=20)

    def untagged(dst):
        return eth(ETH_A, ETH_B, 0x0800) + v4(dst)

    def tagged(dst):
        return eth(ETH_A, ETH_B, 0x8100) + struct.pack("!HH", (3 << 13) | 100, 0x0800) + v4(dst)

    return f"""add route vlan.valid:1 hdr.ipv4.dstAddr:10.0.0.0/8 pop_vlan(port:2)
add route vlan.valid:0 hdr.ipv4.dstAddr:10.0.0.0/8 set_port(port:1)
add route vlan.valid:0 hdr.ipv4.dstAddr:10.1.0.0/16 set_port(port:3)

# Untagged 10.2.3.4: only the untagged /8 matches.
packet 0 {h(untagged("10.2.3.4"))}
expect 1 {h(untagged("10.2.3.4"))}$
# Untagged 10.1.1.1: the /16 wins.
packet 0 {h(untagged("10.1.1.1"))}
expect 3 {h(untagged("10.1.1.1"))}$
# Tagged 10.1.1.1: only the tagged /8 exists; the VLAN tag is removed.
packet 0 {h(tagged("10.1.1.1"))}
expect 2 {h(untagged("10.1.1.1"))}$
# Tagged 11.0.0.1: no route, dropped.
packet 0 {h(tagged("11.0.0.1"))}
"""


@test
def arith():
    cases = []
    for a, b in [(0x9C, 0x05), (0x07, 0x07), (0x01, 0x08), (0xFF, 0x10), (0x00, 0x03)]:
        shl = (a << 3) & 0xFF
        shr = a >> 3
        div = a // 4
        mod = a % 7
        inv = (~a) & 0xFF
        mn = min(a, b)
        neg = (-a) & 0xFF
        mul = (a * b) & 0xFF
        wide = a * b
        cmp = (1 if a >= b else 0) + (2 if a != b else 0)
        big = (a << b) & 0xFF if b < 8 else 0
        inp = data_pkt([a, b] + [0] * 8 + [0, 0, 0, 0])
        out = data_pkt([a, b, shl, shr, div, mod, inv, mn, neg, mul, wide >> 8, wide & 0xFF, cmp, big])
        cases.append((f"a={a:#04x} b={b:#04x}", inp, out))
    return pairs(cases)


@test
def direct_counter():
    def pkt(dst, n):
        return eth(dst, "00:00:00:00:00:99", 0x0800) + bytes(n)

    a1, a2, b1 = pkt("00:00:00:00:00:01", 4), pkt("00:00:00:00:00:01", 10), pkt("00:00:00:00:00:02", 6)
    miss = pkt("00:00:00:00:00:03", 2)
    return f"""add fwd hdr.ethernet.dstAddr:0x000000000001 forward(port:1) = A
add fwd hdr.ethernet.dstAddr:0x000000000002 forward(port:2) = B
packet 0 {h(a1)}
expect 1 {h(a1)}$
packet 0 {h(a2)}
expect 1 {h(a2)}$
packet 0 {h(b1)}
expect 2 {h(b1)}$
# A miss counts on no entry.
packet 0 {h(miss)}
wait
check_counter hits($A) packets == 2
check_counter hits($A) bytes == {len(a1) + len(a2)}
check_counter MyIngress.hits($B) packets == 1
check_counter hits($B) bytes == {len(b1)}
"""


@test
def bound_action_args():
    def pkt(k, b1=0, b2=0, b3=0):
        return data_pkt([k, b1, b2, b3])

    return """add t1 hdr.data.k:1 setbyte(val:0x11)
add t2 hdr.data.k:1 setbyte(val:0x22)
add t2 hdr.data.k:2 setbyte(val:0x44)
""" + pairs([
        ("k=1: t1 writes b1, t2 writes b2, the direct call b3", pkt(1), pkt(1, 0x11, 0x22, 0x33)),
        ("k=2: t1 misses (NoAction); t2 writes b2", pkt(2), pkt(2, 0, 0x44, 0x33)),
        ("k=3: t2's default action setbyte(b2, 0xee)", pkt(3), pkt(3, 0, 0xEE, 0x33)),
    ])


@test
def annotations_names():
    def pkt(dst, etype, v=0x5A):
        return eth(dst, ETH_B, etype) + bytes([v])

    return f"""add l2.dmac dst:0x000000000002 type:0x0800&&&0xffff fwd_action(port:2)
add MyIngress.l2.dmac 5 dst:0x000000000002 type:0x88**  fwd_action(port:3)
packet 0 {h(pkt("00:00:00:00:00:02", 0x0800))}
expect 2 {h(pkt("00:00:00:00:00:02", 0x0800))}$
packet 0 {h(pkt("00:00:00:00:00:02", 0x88B5))}
expect 3 {h(pkt("00:00:00:00:00:02", 0x88B5))}$
# Unknown destination: dropped by the default action.
packet 0 {h(pkt("00:00:00:00:00:09", 0x0800))}
"""


@test
def struct_copy():
    def pkt(etype, *data, payload=b"\xab"):
        return eth(ETH_A, ETH_B, etype) + bytes(data) + payload

    return pairs([
        ("d1.a = 0xff: return before any change; egress sets the EtherType",
         pkt(0x88B5, 0xFF, 0x01, 0x05, 0x06), pkt(0x1234, 0xFF, 0x01, 0x05, 0x06)),
        ("d2 = d1, then d1.a + 1 = 0x10: egress exits before touching the EtherType",
         pkt(0x88B5, 0x0F, 0x02, 0x05, 0x06), pkt(0x88B5, 0x10, 0x02, 0x0F, 0x02)),
        ("d1.b = 0: d2 is set invalid, so its bytes disappear from the packet",
         pkt(0x88B5, 0x01, 0x00, 0x07, 0x08), pkt(0x1234, 0x02, 0x00)),
    ])


@test
def mc_clone():
    def pkt(rid=0, itype=0, eport=0):
        return eth(ETH_A, ETH_B, 0x88B5) + bytes([rid, itype, eport, 0]) + b"\x99"

    return f"""mc_mgrp_create 7
mc_node_create 21 1 2
mc_node_create 22 3
mc_node_associate 7 0
mc_node_associate 7 1
mirroring_add 2 9
packet 0 {h(pkt())}
expect 1 {h(pkt(21, 5, 1))}$
expect 2 {h(pkt(21, 5, 2))}$
expect 3 {h(pkt(22, 5, 3))}$
expect 9 {h(pkt(0, 1, 9))}$
"""


def main():
    import sys
    names = sys.argv[1:] or sorted(TESTS)
    for name in names:
        text = TESTS[name]()
        with open(os.path.join(HERE, "..", name + ".stf"), "w") as f:
            f.write(text)
        print("wrote", name + ".stf")


if __name__ == "__main__":
    main()
