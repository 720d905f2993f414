"""Scapy builders for the frames the conformance suite sends and expects.

What is here: RoCEv2 packets (BTH from ``scapy.contrib.roce``, plus a RETH
layer scapy lacks, IBTA Vol 1 9.3.3: virtual address 64 bits, R_Key 32 bits,
DMA length 32 bits), CNPs (roce-semantics R-ROCE-5), PFC frames
(802.1Qbb, R-PFC-FMT-1..3, via ``scapy.contrib.mac_control``), plain
IPv4/IPv6 UDP packets, and checks on received bytes (ICRC still valid, PFC
frame well formed).

Contract: every builder returns a scapy packet whose ICRC (for RoCE) is left
for scapy to compute, so ``bytes(pkt)`` is what goes on the wire. The ICRC
masks TOS/TTL/IP checksum/UDP checksum/BTH byte 4 (R-ROCE-7), so an expected
packet built with the rewritten TTL or ECN has the same ICRC as the one sent.
Units: pause times in quanta (512 bit times), lengths in bytes.
"""

import struct

from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.contrib.roce import AETH, BTH, cnp
from scapy.fields import IntField, LongField
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1AD, Dot1Q, Ether
from scapy.packet import Packet, Raw, bind_layers

ROCEV2_UDP_PORT = 4791
PFC_DST_MAC = "01:80:c2:00:00:01"
ETHERTYPE_MAC_CONTROL = 0x8808
PFC_OPCODE = 0x0101

OPCODE_RC_SEND_ONLY = 0x04
OPCODE_RC_WRITE_FIRST = 0x06
OPCODE_RC_WRITE_ONLY = 0x0A
OPCODE_RC_READ_REQUEST = 0x0C
OPCODE_RC_ACK = 0x11
OPCODE_CNP = 0x81

# DSCP values of the RoCE lab defaults (R-MAP-2): data on 26, CNP on 48.
DSCP_ROCE = 26
DSCP_CNP = 48

# ECN codepoints (RFC 3168).
NOT_ECT = 0
ECT1 = 1
ECT0 = 2
CE = 3


class RETH(Packet):
    """RDMA Extended Transport Header (16 bytes)."""

    name = "RETH"
    fields_desc = [
        LongField("va", 0),
        IntField("rkey", 0),
        IntField("dlen", 0),
    ]


for _op in (0x06, 0x0A, 0x0C, 0x26, 0x2A):
    bind_layers(BTH, RETH, opcode=_op)


def tos(dscp, ecn=NOT_ECT):
    """The IPv4 TOS / IPv6 traffic-class byte for a DSCP and ECN codepoint."""
    return ((dscp & 0x3F) << 2) | (ecn & 0x3)


def roce_write(
    eth_dst,
    eth_src,
    ip_src,
    ip_dst,
    sport=0xC242,
    dscp=DSCP_ROCE,
    ecn=ECT0,
    ttl=64,
    dqpn=0x123,
    psn=16,
    payload_len=64,
    vlan=None,
    ipv6=False,
):
    """An RC RDMA WRITE Only packet (BTH + RETH + payload + ICRC).

    ``vlan`` is ``None`` or ``(vid, pcp)`` for one 802.1Q tag.
    """
    data = bytes((i * 7 + 3) & 0xFF for i in range(payload_len))
    l2 = Ether(dst=eth_dst, src=eth_src)
    if vlan is not None:
        l2 = l2 / Dot1Q(vlan=vlan[0], prio=vlan[1])
    if ipv6:
        l3 = IPv6(src=ip_src, dst=ip_dst, tc=tos(dscp, ecn), hlim=ttl, fl=0)
    else:
        l3 = IP(src=ip_src, dst=ip_dst, tos=tos(dscp, ecn), ttl=ttl, flags="DF", id=1)
    return (
        l2
        / l3
        / UDP(sport=sport, dport=ROCEV2_UDP_PORT, chksum=0)
        / BTH(opcode=OPCODE_RC_WRITE_ONLY, dqpn=dqpn, psn=psn, ackreq=1)
        / RETH(va=0x1234ABCD00000000 | psn, rkey=0x1234, dlen=payload_len)
        / Raw(data)
    )


def roce_cnp(eth_dst, eth_src, ip_src, ip_dst, dqpn=0x123, dscp=DSCP_CNP, ecn=ECT0, ttl=64):
    """A RoCEv2 CNP (BTH opcode 0x81, BECN set, 16 reserved bytes)."""
    return (
        Ether(dst=eth_dst, src=eth_src)
        / IP(src=ip_src, dst=ip_dst, tos=tos(dscp, ecn), ttl=ttl, flags="DF", id=1)
        / UDP(sport=0, dport=ROCEV2_UDP_PORT, chksum=0)
        / cnp(dqpn)
    )


def roce_ack(eth_dst, eth_src, ip_src, ip_dst, dqpn=0x123, psn=16, dscp=DSCP_ROCE, ttl=64):
    """An RC ACKNOWLEDGE (BTH + AETH)."""
    return (
        Ether(dst=eth_dst, src=eth_src)
        / IP(src=ip_src, dst=ip_dst, tos=tos(dscp, ECT0), ttl=ttl, flags="DF", id=1)
        / UDP(sport=0xC100, dport=ROCEV2_UDP_PORT, chksum=0)
        / BTH(opcode=OPCODE_RC_ACK, dqpn=dqpn, psn=psn)
        / AETH(syndrome=0x1F, msn=psn)
    )


def udp_packet(
    eth_dst,
    eth_src,
    ip_src,
    ip_dst,
    sport=1234,
    dport=5678,
    dscp=0,
    ecn=NOT_ECT,
    ttl=64,
    payload_len=32,
    ipv6=False,
    vlans=(),
    ip_options=None,
):
    """A plain UDP packet; ``vlans`` is a sequence of ``(tpid, vid, pcp)`` outer first."""
    l2 = Ether(dst=eth_dst, src=eth_src)
    for tpid, vid, pcp in vlans:
        l2 = l2 / (Dot1AD(vlan=vid, prio=pcp) if tpid == 0x88A8 else Dot1Q(vlan=vid, prio=pcp))
    if ipv6:
        l3 = IPv6(src=ip_src, dst=ip_dst, tc=tos(dscp, ecn), hlim=ttl, fl=0)
    elif ip_options is not None:
        l3 = IP(src=ip_src, dst=ip_dst, tos=tos(dscp, ecn), ttl=ttl, id=7, options=ip_options)
    else:
        l3 = IP(src=ip_src, dst=ip_dst, tos=tos(dscp, ecn), ttl=ttl, id=7)
    data = bytes((i * 13 + 1) & 0xFF for i in range(payload_len))
    return l2 / l3 / UDP(sport=sport, dport=dport) / Raw(data)


def pfc_frame(eth_src, quanta_by_priority):
    """A PFC frame; ``quanta_by_priority`` maps priority -> pause quanta (0 = XON)."""
    fields = {}
    for prio, quanta in quanta_by_priority.items():
        fields["c%d_enabled" % prio] = 1
        fields["c%d_pause_time" % prio] = quanta
    return Ether(src=eth_src, dst=PFC_DST_MAC, type=ETHERTYPE_MAC_CONTROL) / MACControlClassBasedFlowControl(
        **fields
    )


def parse_pfc(frame):
    """Decode a received PFC frame.

    Returns ``(enable_vector, [8 quanta])`` or ``None`` if the bytes are not
    a PFC frame (wrong destination, EtherType, opcode or length).
    """
    if len(frame) < 14 + 20:
        return None
    if frame[0:6] != bytes.fromhex("0180c2000001"):
        return None
    (ethertype, opcode, vector) = struct.unpack("!HHH", frame[12:18])
    if ethertype != ETHERTYPE_MAC_CONTROL or opcode != PFC_OPCODE:
        return None
    quanta = list(struct.unpack("!8H", frame[18:34]))
    return vector, quanta


def pfc_problems(frame):
    """Every way a received PFC frame breaks R-PFC-FMT-1..4 (empty list = well formed)."""
    problems = []
    parsed = parse_pfc(frame)
    if parsed is None:
        return ["not a PFC frame: %s" % frame[:20].hex()]
    vector, quanta = parsed
    if len(frame) < 60:
        problems.append("frame is %d bytes, shorter than the 60-byte minimum" % len(frame))
    if vector >> 8:
        problems.append("reserved high octet of the enable vector is 0x%02x" % (vector >> 8))
    for prio in range(8):
        if not (vector >> prio) & 1 and quanta[prio] != 0:
            problems.append("priority %d not enabled but carries time %d" % (prio, quanta[prio]))
    if any(frame[34:60]):
        problems.append("padding is not zero")
    if frame[6] & 1:
        problems.append("source MAC is multicast")
    return problems


def icrc_ok(frame):
    """True if the RoCE ICRC at the end of ``frame`` is what scapy recomputes."""
    pkt = Ether(frame)
    if BTH not in pkt:
        return False
    wire = pkt[BTH].icrc
    del pkt[BTH].icrc
    rebuilt = Ether(bytes(pkt))
    return rebuilt[BTH].icrc == wire


def ecn_of(frame):
    """The ECN codepoint of an IPv4/IPv6 frame (None if neither)."""
    pkt = Ether(frame)
    if IP in pkt:
        return pkt[IP].tos & 0x3
    if IPv6 in pkt:
        return pkt[IPv6].tc & 0x3
    return None
