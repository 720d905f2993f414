"""``roceperf frame`` writes pcap files scapy reads, with ICRCs scapy agrees with.

An independent check of the frame builder (``dataplane::wire::roce_frame``)
and of the crate's one ICRC: ``roceperf frame --pcap`` writes RoCE v2 frames
(IPv4 and IPv6, tagged and not, several opcode classes); scapy reads the file
(``rdpcap``), dissects each frame down to the BTH (``scapy.contrib.roce``),
recomputes its ICRC and, for IPv4, the header checksum, and both must equal
what is on the wire. ``roceperf decode --json`` must report the same ICRC.
scapy computes no RoCE v1 ICRC, so v1 is left to the Rust tests.

Needs no switch: the test runs the ``roceperf`` binary next to
``$ROCESWITCH_BIN`` or in the repository's ``target/debug`` (``tests/run``
builds every binary first); without one it fails rather than skips.
"""

import json
import os
import subprocess
import tempfile

from ptf.base_tests import BaseTest
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.utils import rdpcap

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

# (flags, frames): each line one pcap written by roceperf frame.
CASES = [
    (["--opcode", "RDMA_WRITE_ONLY", "--qpn", "0x11", "--psn", "5", "--payload-len", "61",
      "--va", "0x7f0000001000", "--rkey", "0x1234abcd", "--ack-req"], 3),
    (["--opcode", "SEND_FIRST", "--payload-len", "256", "--payload", "fill:0xa5",
      "--vlan", "100", "--pcp", "3", "--dscp", "26", "--ecn", "ce"], 2),
    (["--opcode", "ACKNOWLEDGE", "--msn", "7", "--syndrome", "0x60", "--dscp", "48"], 1),
    (["--opcode", "CNP", "--qpn", "0x123", "--dscp", "48", "--sport", "0xd00d"], 1),
    (["--opcode", "RDMA_READ_REQUEST", "--dma-len", "65536", "--src-ip", "fd00::1",
      "--dst-ip", "fd00::2", "--flow-label", "0xabcde"], 2),
    (["--opcode", "SEND_ONLY_WITH_IMMEDIATE", "--imm", "0xdeadbeef", "--payload-len", "5",
      "--src-ip", "2001:db8::10", "--dst-ip", "2001:db8::20", "--vlan", "7", "--pcp", "5",
      "--ttl", "3"], 2),
    (["--opcode", "UC_RDMA_WRITE_FIRST", "--payload-len", "1024", "--qpn", "0xabcdef"], 1),
]


def roceperf():
    candidates = []
    if os.environ.get("ROCESWITCH_BIN"):
        candidates.append(os.path.join(os.path.dirname(os.environ["ROCESWITCH_BIN"]), "roceperf"))
    candidates.append(os.path.join(REPO, "target", "debug", "roceperf"))
    for c in candidates:
        if os.access(c, os.X_OK):
            return c
    return None


def swap32(v):
    return int.from_bytes(v.to_bytes(4, "big"), "little")


def rebuilt_icrc(pkt):
    """scapy's ICRC for ``pkt``: drop the wire value and build again."""
    p = pkt.copy()
    del p[BTH].icrc
    return Ether(bytes(p))[BTH].icrc


class FrameBuilderPcapScapyIcrc(BaseTest):
    """Every frame of every pcap: scapy's ICRC and IPv4 checksum equal the wire's and decode's."""

    def runTest(self):
        bin_ = roceperf()
        self.assertIsNotNone(bin_, "no roceperf binary (cargo build -p lab --bin roceperf)")
        checked = 0
        with tempfile.TemporaryDirectory() as tmp:
            for i, (flags, count) in enumerate(CASES):
                path = os.path.join(tmp, "case%d.pcap" % i)
                subprocess.run([bin_, "frame", *flags, "--count", str(count), "--pcap", path],
                               check=True, capture_output=True)
                decoded = subprocess.run([bin_, "decode", "--json", "--no-switch", path],
                                         check=True, capture_output=True, text=True).stdout
                ours = [json.loads(line) for line in decoded.splitlines()]
                pkts = rdpcap(path)
                self.assertEqual(len(pkts), count, flags)
                self.assertEqual(len(ours), count, flags)
                for n, (pkt, d) in enumerate(zip(pkts, ours)):
                    what = "%s frame %d" % (" ".join(flags), n)
                    self.assertIn(BTH, pkt, what)
                    wire = pkt[BTH].icrc
                    self.assertEqual(rebuilt_icrc(pkt), wire, what)
                    # scapy reads the 4 wire bytes big-endian; the ICRC goes
                    # on the wire least significant byte first (R-ROCE-7).
                    self.assertEqual(d["icrc"]["received"], swap32(wire), what)
                    self.assertTrue(d["icrc"]["valid"], what)
                    self.assertEqual(pkt[BTH].psn, d["bth"]["psn"], what)
                    self.assertEqual(pkt[BTH].opcode, d["bth"]["opcode"], what)
                    if IP in pkt:
                        p = pkt.copy()
                        del p[IP].chksum
                        self.assertEqual(Ether(bytes(p))[IP].chksum, pkt[IP].chksum, what)
                    else:
                        self.assertIn(IPv6, pkt, what)
                    if "--vlan" in flags:
                        self.assertEqual(pkt[Dot1Q].prio, int(flags[flags.index("--pcp") + 1]), what)
                    checked += 1
                # One flipped payload bit: scapy and decode both see a bad ICRC.
                if i == 0:
                    raw = bytearray(bytes(pkts[0]))
                    raw[-6] ^= 0x01
                    bad = Ether(bytes(raw))
                    self.assertNotEqual(rebuilt_icrc(bad), bad[BTH].icrc)
                    r = subprocess.run([bin_, "decode", "--json", "--no-switch", "--hex", raw.hex()],
                                       capture_output=True, text=True)
                    self.assertEqual(r.returncode, 1)
                    self.assertFalse(json.loads(r.stdout)["icrc"]["valid"])
        self.assertEqual(checked, sum(c for _, c in CASES))
