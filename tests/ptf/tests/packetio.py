"""Controller packet I/O through the P4Runtime StreamChannel, and the ACL.

PacketOut with ``packet_out.egress_port`` leaves exactly that port
unchanged (the packet_out header is stripped); an ACL ``punt_to_cpu`` entry
sends a frame to CPU port 510, which arrives as a PacketIn carrying the
ingress port in ``packet_in.ingress_port``; ``acl_deny`` drops and counts.
"""

import ipaddress

import ptf.testutils as tu
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2
from p4runtime_sh import shell as sh

import roce
from rsbase import DROP_ACL, ROUTER_MAC, SwitchTest, host_mac, routed


def _metadata(msg, name):
    info = sh.P4Objects(sh.P4Type.controller_packet_metadata)["packet_in"]
    ids = {m.name: m.id for m in info.metadata}
    for md in msg.packet.metadata:
        if md.metadata_id == ids[name]:
            return int.from_bytes(md.value, "big")
    return None


class PacketIoTest(SwitchTest):
    def assert_no_stream_error(self, wait_s=0.05):
        """Fails if the switch answered on the StreamChannel with anything but arbitration/packets."""
        q = sh.client.stream_in_q["unknown"]
        try:
            msg = q.get(timeout=wait_s)
        except Exception:
            return
        if msg is not None:
            self.fail("StreamChannel error from the switch: %s" % msg)


class PacketOutToEachPort(PacketIoTest):
    """A PacketOut for each port leaves that port byte-exact, and no other."""

    def runTest(self):
        for port in self.ports:
            frame = bytes(roce.roce_write(host_mac(port), "02:00:00:00:0c:01", "10.0.9.1", "10.0.9.2", psn=port))
            sh.PacketOut(frame, egress_port=str(port), _pad="0").send()
            self.assert_no_stream_error()
            tu.verify_packet(self, frame, port)
            tu.verify_no_other_packets(self, timeout=0.3)


class PacketInFromAclPunt(PacketIoTest):
    """An ACL punt on EtherType 0x88b5 delivers the frame as a PacketIn with its ingress port."""

    def runTest(self):
        self.add_acl("punt_to_cpu", ether_type="0x88b5&&&0xffff")
        pin = sh.PacketIn()
        frame = bytes.fromhex("02000000ff01") + bytes.fromhex(host_mac(2).replace(":", "")) + b"\x88\xb5" + bytes(range(46))
        self.send(2, frame)
        msgs = list(pin.sniff(timeout=2))
        self.assertEqual(len(msgs), 1, "expected exactly one PacketIn, got %d" % len(msgs))
        self.assertEqual(msgs[0].packet.payload, frame)
        self.assertEqual(_metadata(msgs[0], "ingress_port"), 2)
        tu.verify_no_other_packets(self, timeout=0.3)


class PacketOutMissingFieldRefused(PacketIoTest):
    """A PacketOut without the _pad field is refused with a StreamError, and nothing is sent."""

    def runTest(self):
        frame = bytes(roce.udp_packet(host_mac(1), "02:00:00:00:0c:01", "10.0.9.1", "10.0.9.2"))
        # p4runtime-shell fills every field, so the request is built by hand.
        info = sh.P4Objects(sh.P4Type.controller_packet_metadata)["packet_out"]
        ids = {m.name: m.id for m in info.metadata}
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = frame
        md = req.packet.metadata.add()
        md.metadata_id = ids["egress_port"]
        md.value = b"\x01"
        sh.client.stream_out_q.put(req)
        msg = sh.client.stream_in_q["unknown"].get(timeout=2)
        self.assertIsNotNone(msg, "no StreamError for an incomplete PacketOut")
        self.assertTrue(msg.HasField("error"), "unexpected stream message %s" % msg)
        self.assertIn("_pad", msg.error.message)
        tu.verify_no_other_packets(self, timeout=0.3)


class AclDenyDropCounted(SwitchTest):
    """A routed flow hit by acl_deny is dropped and drop_reason[ACL] counts it; other flows pass."""

    def runTest(self):
        self.route_v4("10.0.1.0/24", 1)
        self.add_acl("acl_deny", dst_addr="%d&&&0xffffffff" % int(ipaddress.IPv4Address("10.0.1.66")))
        before = self.packets("drop_reason", DROP_ACL)
        self.send(0, roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.66"))
        tu.verify_no_other_packets(self, timeout=0.5)
        self.assertEqual(self.wait_counter("drop_reason", DROP_ACL, before + 1), before + 1)
        ok = roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.67")
        self.send(0, ok)
        tu.verify_packet(self, routed(ok, host_mac(1)), 1)


class PacketOutErrorTest(PacketIoTest):
    """Sends a hand-built PacketOut on the shell's stream and returns the StreamError it gets."""

    def send_packet_out(self, metadata):
        frame = bytes(roce.udp_packet(host_mac(1), "02:00:00:00:0c:01", "10.0.9.1", "10.0.9.2"))
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = frame
        for md_id, value in metadata:
            md = req.packet.metadata.add()
            md.metadata_id = md_id
            md.value = value
        sh.client.stream_out_q.put(req)
        msg = sh.client.stream_in_q["unknown"].get(timeout=2)
        self.assertIsNotNone(msg, "no StreamError for a bad PacketOut")
        self.assertTrue(msg.HasField("error"), "unexpected stream message %s" % msg)
        # §16: the error carries the offending PacketOut back.
        self.assertTrue(msg.error.HasField("packet_out"), msg)
        self.assertEqual(msg.error.packet_out.packet_out.payload, frame)
        tu.verify_no_other_packets(self, timeout=0.3)
        return msg.error

    def ids(self):
        info = sh.P4Objects(sh.P4Type.controller_packet_metadata)["packet_out"]
        return {m.name: m.id for m in info.metadata}


class InvalidArgument_S10_S16_PacketOutUnknownMetadataId(PacketOutErrorTest):
    """§10, §16: a PacketOut with a metadata id the packet_out header does not have is a StreamError INVALID_ARGUMENT; nothing is sent."""

    def runTest(self):
        ids = self.ids()
        err = self.send_packet_out(
            [(ids["egress_port"], b"\x01"), (ids["_pad"], b"\x00"), (max(ids.values()) + 7, b"\x01")]
        )
        self.assertEqual(err.canonical_code, code_pb2.INVALID_ARGUMENT, err)


class InvalidArgument_S8_4_S16_PacketOutValueWiderThanItsField(PacketOutErrorTest):
    """§8.4, §16: egress_port 512 does not fit the 9-bit field: a StreamError INVALID_ARGUMENT; nothing is sent."""

    def runTest(self):
        ids = self.ids()
        err = self.send_packet_out([(ids["egress_port"], b"\x02\x00"), (ids["_pad"], b"\x00")])
        self.assertEqual(err.canonical_code, code_pb2.INVALID_ARGUMENT, err)
        self.assertIn("egress_port", err.message)


class Ok_S8_4_PacketOutPaddedValueIsAccepted(PacketIoTest):
    """§8.4: a PacketOut value with leading zero bytes (egress_port 00 00 02) is the same port 2."""

    def runTest(self):
        info = sh.P4Objects(sh.P4Type.controller_packet_metadata)["packet_out"]
        ids = {m.name: m.id for m in info.metadata}
        frame = bytes(roce.udp_packet(host_mac(2), "02:00:00:00:0c:01", "10.0.9.1", "10.0.9.2"))
        req = p4runtime_pb2.StreamMessageRequest()
        req.packet.payload = frame
        for md_id, value in [(ids["egress_port"], b"\x00\x00\x02"), (ids["_pad"], b"\x00")]:
            md = req.packet.metadata.add()
            md.metadata_id = md_id
            md.value = value
        sh.client.stream_out_q.put(req)
        self.assert_no_stream_error()
        tu.verify_packet(self, frame, 2)
        tu.verify_no_other_packets(self, timeout=0.3)
