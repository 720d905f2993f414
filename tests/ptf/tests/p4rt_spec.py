"""P4Runtime rules checked from a plain grpcio client, one case per rule.

Each case is named by the status code it expects and the section of the
P4Runtime specification (v1.4.1) that names it, as in
control/tests/p4runtime_spec.rs. They use the official protos directly
(p4runtime-shell only resolves names), so what is checked is what goes over
the wire. Arbitration cases run under their own role name: the server keeps
the highest election id ever seen per (device, role) (§5.4), so using the
default role here would lock the rest of the suite out.
"""

import queue
import subprocess
import threading
import time

import grpc
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2
from google.protobuf import any_pb2
from p4runtime_sh import shell as sh
from p4runtime_sh.context import P4Type

import ptf.testutils as tu
from scapy.layers.inet import UDP
from scapy.layers.l2 import Ether

import roce
import rsbase
from rsbase import ROUTER_MAC, SwitchTest, host_mac, routed

# The election id p4runtime-shell's session (rsbase.connect) holds.
SUITE_ELECTION_ID = (0, 1)


class Stream:
    """One StreamChannel: send arbitration updates, read what the server answers."""

    def __init__(self, test):
        self._requests = queue.Queue()
        self._responses = queue.Queue()
        self._call = sh.client.stub.StreamChannel(iter(self._requests.get, None))
        self.error = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        test.addCleanup(self.close)

    def _read(self):
        try:
            for rep in self._call:
                self._responses.put(rep)
        except grpc.RpcError as e:
            self.error = e
            self._responses.put(e)

    def arbitrate(self, device_id, election_id, role="", config=None):
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = device_id
        req.arbitration.election_id.high = election_id[0]
        req.arbitration.election_id.low = election_id[1]
        if role:
            req.arbitration.role.name = role
        if config is not None:
            req.arbitration.role.config.CopyFrom(config)
        self._requests.put(req)

    def send(self, req):
        self._requests.put(req)

    def next(self, timeout=3.0, field="arbitration"):
        """The next reply carrying ``field``, or the RpcError that ended the stream."""
        while True:
            rep = self._responses.get(timeout=timeout)
            if isinstance(rep, grpc.RpcError) or rep.HasField(field):
                return rep

    def close(self):
        self._requests.put(None)
        self._call.cancel()


class SpecTest(SwitchTest):
    """Helpers for raw requests with the suite's session."""

    def write(self, *updates, election_id=SUITE_ELECTION_ID):
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
        req.election_id.high, req.election_id.low = election_id
        req.updates.extend(updates)
        sh.client.stub.Write(req)

    def assert_write_fails(self, code, *updates):
        """A failed Write is UNKNOWN with one p4.v1.Error per update (§12.3); checks the first."""
        with self.assertRaises(grpc.RpcError) as cm:
            self.write(*updates)
        e = cm.exception
        self.assertEqual(e.code(), grpc.StatusCode.UNKNOWN, e.details())
        errors = write_errors(e)
        self.assertEqual(len(errors), len(updates), "one p4.v1.Error per update")
        self.assertEqual(errors[0].canonical_code, code.value[0], errors[0].message)
        self.assertTrue(errors[0].message, "the error names what is wrong")
        return errors[0]

    def insert(self, entity):
        u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
        u.entity.CopyFrom(entity)
        return u

    def nexthop_entry(self, nexthop_id, member_id):
        te = sh.TableEntry("nexthop")
        te.match["nexthop_id"] = str(nexthop_id)
        te.member_id = member_id
        e = p4runtime_pb2.Entity()
        e.table_entry.CopyFrom(te.msg())
        return e

    def read_entities(self, *entities, role=""):
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id, role=role)
        req.entities.extend(entities)
        out = []
        for rep in sh.client.stub.Read(req):
            out.extend(rep.entities)
        return out

    def read_partial(self, *entities):
        """Reads until the stream ends: (entities, RpcError or None)."""
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        req.entities.extend(entities)
        got = []
        try:
            for rep in sh.client.stub.Read(req):
                got.extend(rep.entities)
        except grpc.RpcError as e:
            return got, e
        return got, None

    def set_pipeline(self, action, config=None, role="", election_id=SUITE_ELECTION_ID):
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=self.device_id, role=role)
        req.election_id.high, req.election_id.low = election_id
        req.action = action
        if config is not None:
            req.config.CopyFrom(config)
        sh.client.stub.SetForwardingPipelineConfig(req)

    def running_config(self, cookie):
        """The running program's config (P4Info and device config) with ``cookie``."""
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=self.device_id)
        config = sh.client.stub.GetForwardingPipelineConfig(req).config
        config.cookie.cookie = cookie
        return config

    def modify(self, entity):
        u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
        u.entity.CopyFrom(entity)
        return u


class NotFound_S9_1_2_EntryNamesMissingMember(SpecTest):
    """§9.1.2 NOT_FOUND: a nexthop entry pointing at a member that does not exist."""

    def runTest(self):
        self.assert_write_fails(grpc.StatusCode.NOT_FOUND, self.insert(self.nexthop_entry(7, 4242)))
        self.assertEqual(list(sh.TableEntry("nexthop").read()), [], "a refused write changed the table")


class NotFound_S9_2_2_GroupNamesMissingMember(SpecTest):
    """§9.2.2 NOT_FOUND: an action-profile group listing a member that does not exist."""

    def runTest(self):
        g = sh.ActionProfileGroup("nexthop")(group_id=9)
        g.add(member_id=4343)
        e = p4runtime_pb2.Entity()
        e.action_profile_group.CopyFrom(g.msg())
        self.assert_write_fails(grpc.StatusCode.NOT_FOUND, self.insert(e))


class OutOfRange_S9_3_CounterIndexBeyondSize(SpecTest):
    """§9.3 OUT_OF_RANGE: reading a counter cell past the counter's size."""

    def runTest(self):
        counter = sh.CounterEntry("drop_reason")
        size = next(c.size for c in sh.context.p4info.counters if c.preamble.id == counter.id)
        e = p4runtime_pb2.Entity()
        e.counter_entry.counter_id = counter.id
        e.counter_entry.index.index = size
        with self.assertRaises(grpc.RpcError) as cm:
            self.read_entities(e)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.OUT_OF_RANGE, cm.exception.details())
        e.counter_entry.index.index = size - 1
        self.assertEqual(len(self.read_entities(e)), 1, "the last cell is readable")


class InvalidArgument_S9_1_IsConstInWrite(SpecTest):
    """§9.1 INVALID_ARGUMENT: a client may not set is_const on an entry it writes."""

    def runTest(self):
        self.add_member(5, self.ports[1], rsbase.host_mac(self.ports[1]))
        e = self.nexthop_entry(5, 5)
        e.table_entry.is_const = True
        self.assert_write_fails(grpc.StatusCode.INVALID_ARGUMENT, self.insert(e))


class InvalidArgument_S9_1_8_TimeSinceLastHitInWrite(SpecTest):
    """§9.1.8 INVALID_ARGUMENT: time_since_last_hit is read-only."""

    def runTest(self):
        self.add_member(6, self.ports[1], rsbase.host_mac(self.ports[1]))
        e = self.nexthop_entry(6, 6)
        e.table_entry.time_since_last_hit.elapsed_ns = 1000
        self.assert_write_fails(grpc.StatusCode.INVALID_ARGUMENT, self.insert(e))


class InvalidArgument_S9_2_2_MemberWeightZero(SpecTest):
    """§9.2.2 INVALID_ARGUMENT: a group member with weight 0."""

    def runTest(self):
        self.add_member(11, self.ports[1], rsbase.host_mac(self.ports[1]))
        g = sh.ActionProfileGroup("nexthop")(group_id=12)
        g.add(member_id=11)
        e = p4runtime_pb2.Entity()
        e.action_profile_group.CopyFrom(g.msg())
        e.action_profile_group.members[0].weight = 0
        self.assert_write_fails(grpc.StatusCode.INVALID_ARGUMENT, self.insert(e))


class Ok_S9_1_6_ReadFiltersOnAction(SpecTest):
    """§9.1.6 OK: a table read whose entity names an action returns only entries with that action."""

    def runTest(self):
        self.add_acl("acl_deny", priority=10, ether_type="0x88b5&&&0xffff")
        self.add_acl("acl_permit", priority=20, ether_type="0x88b6&&&0xffff")
        entries = self.read_entities(_table_read("acl"))
        self.assertEqual(len(entries), 2)
        wanted = {e.table_entry.action.action.action_id for e in entries}
        for action_id in wanted:
            f = _table_read("acl")
            f.table_entry.action.action.action_id = action_id
            got = self.read_entities(f)
            self.assertEqual(len(got), 1, "filter on action %d" % action_id)
            self.assertEqual(got[0].table_entry.action.action.action_id, action_id)


class Unknown_S13_3_ReadBatchGoodEntitiesThenOneErrorPerRequest(SpecTest):
    """§13.3 UNKNOWN: a Read of {good, bad, good} streams both good requests' entities, then UNKNOWN with p4.Error OK / OUT_OF_RANGE / OK."""

    def runTest(self):
        self.add_my_station()
        self.add_acl("acl_deny", priority=10, ether_type="0x88b5&&&0xffff")
        bad = p4runtime_pb2.Entity()
        bad.counter_entry.counter_id = sh.CounterEntry("drop_reason").id
        bad.counter_entry.index.index = 1 << 30
        got, err = self.read_partial(_table_read("my_station"), bad, _table_read("acl"))
        self.assertIsNotNone(err, "the batch has a bad request")
        self.assertEqual(err.code(), grpc.StatusCode.UNKNOWN, err.details())
        self.assertEqual(
            sorted(e.table_entry.table_id for e in got),
            sorted([sh.TableEntry("my_station").id, sh.TableEntry("acl").id]),
            "the entities of both good requests",
        )
        codes = [e.canonical_code for e in write_errors(err)]
        self.assertEqual(codes, [code_pb2.OK, code_pb2.OUT_OF_RANGE, code_pb2.OK])


class OutOfRange_S13_3_ReadOfOneBadRequest(SpecTest):
    """§13.3: a Read of a single bad request answers with that request's code, its p4.Error in the details."""

    def runTest(self):
        bad = p4runtime_pb2.Entity()
        bad.register_entry.register_id = _register_id("acl_fault_seen")
        bad.register_entry.index.index = 1 << 20
        got, err = self.read_partial(bad)
        self.assertEqual(got, [])
        self.assertIsNotNone(err)
        self.assertEqual(err.code(), grpc.StatusCode.OUT_OF_RANGE, err.details())
        self.assertEqual([e.canonical_code for e in write_errors(err)], [code_pb2.OUT_OF_RANGE])


class NotFound_S5_4_BackupIsNotPromotedWhenThePrimaryLeaves(SpecTest):
    """§5.4 NOT_FOUND: after the primary (election id 10) leaves, a client with id 5 stays backup, is told id 10, and may not write."""

    ROLE = "ptf.spec.arbitration"

    def runTest(self):
        primary = Stream(self)
        primary.arbitrate(self.device_id, (0, 10), role=self.ROLE)
        rep = primary.next()
        self.assertNotIsInstance(rep, grpc.RpcError, str(rep))
        self.assertEqual(rep.arbitration.status.code, code_pb2.OK, rep)
        primary.close()
        backup = Stream(self)
        backup.arbitrate(self.device_id, (0, 5), role=self.ROLE)
        rep = backup.next()
        self.assertNotIsInstance(rep, grpc.RpcError, str(rep))
        self.assertEqual(rep.arbitration.status.code, code_pb2.NOT_FOUND, rep)
        self.assertEqual((rep.arbitration.election_id.high, rep.arbitration.election_id.low), (0, 10), rep)
        # Its writes are refused as a backup's (§5.4, §12.2).
        te = sh.TableEntry("my_station")(action="set_routed")
        te.match["dst_mac"] = rsbase.ROUTER_MAC
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id, role=self.ROLE)
        req.election_id.low = 5
        req.updates.add(type=p4runtime_pb2.Update.INSERT).entity.table_entry.CopyFrom(te.msg())
        with self.assertRaises(grpc.RpcError) as cm:
            sh.client.stub.Write(req)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.PERMISSION_DENIED, cm.exception.details())
        # A client at or above the highest id seen becomes primary.
        taker = Stream(self)
        taker.arbitrate(self.device_id, (0, 10), role=self.ROLE)
        rep = taker.next()
        self.assertEqual(rep.arbitration.status.code, code_pb2.OK, rep)


class FailedPrecondition_S5_3_StreamChangesItsDeviceId(SpecTest):
    """§5.3 FAILED_PRECONDITION: a stream that arbitrated for one device may not switch to another."""

    ROLE = "ptf.spec.device"

    def runTest(self):
        s = Stream(self)
        s.arbitrate(self.device_id, (0, 3), role=self.ROLE)
        rep = s.next()
        self.assertNotIsInstance(rep, grpc.RpcError, str(rep))
        s.arbitrate(self.device_id + 1, (0, 3), role=self.ROLE)
        rep = s.next()
        self.assertIsInstance(rep, grpc.RpcError, "the server accepted a second device id: %s" % rep)
        self.assertEqual(rep.code(), grpc.StatusCode.FAILED_PRECONDITION, rep.details())


class NotFound_S5_3_ArbitrationForAnotherDevice(SpecTest):
    """§5.3 NOT_FOUND: arbitration for a device id this switch is not."""

    def runTest(self):
        s = Stream(self)
        s.arbitrate(self.device_id + 41, (0, 2), role="ptf.spec.other-device")
        rep = s.next()
        self.assertIsInstance(rep, grpc.RpcError, "arbitration for another device answered: %s" % rep)
        self.assertEqual(rep.code(), grpc.StatusCode.NOT_FOUND, rep.details())


class NotFound_S14_CommitWithoutSavedConfig(SpecTest):
    """§14 NOT_FOUND: COMMIT when no VERIFY_AND_SAVE preceded it."""

    def runTest(self):
        with self.assertRaises(grpc.RpcError) as cm:
            self.set_pipeline(p4runtime_pb2.SetForwardingPipelineConfigRequest.COMMIT)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.NOT_FOUND, cm.exception.details())


class Ok_S14_CommitReplaysTheWritesSinceTheSave(SpecTest):
    """§14: VERIFY_AND_SAVE leaves the state; COMMIT realises the saved config with the writes made since the save."""

    def runTest(self):
        Req = p4runtime_pb2.SetForwardingPipelineConfigRequest
        self.add_my_station("02:00:00:00:aa:01")
        self.set_pipeline(Req.VERIFY_AND_SAVE, self.running_config(cookie=1501))
        self.assertEqual(len(list(sh.TableEntry("my_station").read())), 1, "SAVE changes no state")
        self.add_my_station("02:00:00:00:aa:02")
        self.set_pipeline(Req.COMMIT)
        macs = [e.match["dst_mac"] for e in sh.TableEntry("my_station").read()]
        self.assertEqual(len(macs), 1, macs)
        self.assertEqual(macs[0].exact.value, bytes.fromhex("02000000aa02"), "only the write since the save")
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id, response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.COOKIE_ONLY
        )
        self.assertEqual(sh.client.stub.GetForwardingPipelineConfig(req).config.cookie.cookie, 1501)


def role_config(shared_ids, can_push_pipeline=False):
    """A stratum.P4RoleConfig (the scheme the switch understands) as an Any, encoded by hand."""

    def varint(n):
        out = b""
        while True:
            b, n = n & 0x7F, n >> 7
            out += bytes([b | (0x80 if n else 0)])
            if not n:
                return out

    ids = b"".join(varint(i) for i in shared_ids)
    value = b"\x12" + varint(len(ids)) + ids  # shared_p4_ids = 2, packed
    if can_push_pipeline:
        value += b"\x28\x01"  # can_push_pipeline = 5
    return any_pb2.Any(type_url="type.googleapis.com/stratum.P4RoleConfig", value=value)


class Ok_S13_ReadRoleFiltersEntities(SpecTest):
    """§13, §9.1.6: a Read naming a role returns only that role's entities; an unknown role is NOT_FOUND."""

    ROLE = "ptf.spec.read-role"

    def runTest(self):
        self.add_my_station()
        self.add_acl("acl_deny", priority=10, ether_type="0x88b5&&&0xffff")
        acl_id = sh.TableEntry("acl").id
        s = Stream(self)
        s.arbitrate(self.device_id, (0, 7), role=self.ROLE, config=role_config([acl_id]))
        rep = s.next()
        self.assertNotIsInstance(rep, grpc.RpcError, str(rep))
        all_tables = p4runtime_pb2.Entity()
        all_tables.table_entry.SetInParent()
        got = self.read_entities(all_tables, role=self.ROLE)
        self.assertEqual({e.table_entry.table_id for e in got}, {acl_id}, got)
        self.assertGreater(len(self.read_entities(all_tables)), len(got), "no role: every table")
        with self.assertRaises(grpc.RpcError) as cm:
            self.read_entities(all_tables, role="ptf.spec.nobody")
        self.assertEqual(cm.exception.code(), grpc.StatusCode.NOT_FOUND, cm.exception.details())


class PermissionDenied_S5_2_PipelinePushFromRoleWithoutCanPushPipeline(SpecTest):
    """§5.2, §14 PERMISSION_DENIED: the primary of a role whose config does not allow pushing pipelines."""

    ROLE = "ptf.spec.no-push"

    def runTest(self):
        s = Stream(self)
        s.arbitrate(self.device_id, (0, 9), role=self.ROLE, config=role_config([sh.TableEntry("acl").id]))
        rep = s.next()
        self.assertEqual(rep.arbitration.status.code, code_pb2.OK, rep)
        with self.assertRaises(grpc.RpcError) as cm:
            self.set_pipeline(
                p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY,
                self.running_config(cookie=1),
                role=self.ROLE,
                election_id=(0, 9),
            )
        self.assertEqual(cm.exception.code(), grpc.StatusCode.PERMISSION_DENIED, cm.exception.details())


class InvalidArgument_S9_1_InsertIntoKeylessTable(SpecTest):
    """§9.1 INVALID_ARGUMENT: INSERT into a table without a match key (only its default entry exists)."""

    def runTest(self):
        te = sh.TableEntry("ecmp_hash_seed")(action="set_ecmp_seed")
        te.action["seed"] = "7"
        e = p4runtime_pb2.Entity()
        e.table_entry.CopyFrom(te.msg())
        self.assert_write_fails(grpc.StatusCode.INVALID_ARGUMENT, self.insert(e))


class Ok_S9_1_3_DefaultEntryCookiesReadBackUntilReset(SpecTest):
    """§9.1.3: a default entry reads back with the metadata it was set with; a MODIFY without action resets both."""

    def runTest(self):
        table_id = sh.TableEntry("ipv4_lpm").id
        d = p4runtime_pb2.Entity()
        d.table_entry.table_id = table_id
        d.table_entry.is_default_action = True
        d.table_entry.action.action.action_id = sh.context.get_obj_id(P4Type.action, "no_route")
        d.table_entry.metadata = b"ptf-default"
        self.write(self.modify(d))
        try:
            got = self.read_entities(d)
            self.assertEqual(len(got), 1)
            self.assertEqual(got[0].table_entry.metadata, b"ptf-default")
        finally:
            reset = p4runtime_pb2.Entity()
            reset.table_entry.table_id = table_id
            reset.table_entry.is_default_action = True
            self.write(self.modify(reset))
        got = self.read_entities(d)
        self.assertEqual(got[0].table_entry.metadata, b"", "the reset cleared it")


class PermissionDenied_S9_1_3_DefaultEntryOfIndirectTable(SpecTest):
    """§9.1.3 PERMISSION_DENIED: the default entry of an indirect (action selector) table is constant."""

    def runTest(self):
        d = p4runtime_pb2.Entity()
        d.table_entry.table_id = sh.TableEntry("nexthop").id
        d.table_entry.is_default_action = True
        d.table_entry.action.action.action_id = sh.context.get_obj_id(P4Type.action, "no_route")
        self.assert_write_fails(grpc.StatusCode.PERMISSION_DENIED, self.modify(d))
        d.table_entry.ClearField("action")
        self.assertTrue(self.read_entities(d)[0].table_entry.is_const)


class Ok_S9_1_6_ActionFilterIgnoresParams(SpecTest):
    """§9.1.6: the action filter of a table read is the action id; params do not filter."""

    def runTest(self):
        self.add_route("10.1.0.0/16", 1)
        self.add_route("10.2.0.0/16", 2)
        f = _table_read("ipv4_lpm")
        f.table_entry.action.action.action_id = sh.context.get_obj_id(P4Type.action, "set_nexthop_id")
        self.assertEqual(len(self.read_entities(f)), 2)
        f.table_entry.action.action.action_id = sh.context.get_obj_id(P4Type.action, "no_route")
        self.assertEqual(self.read_entities(f), [])


class Ok_S9_2_2_GroupMaxSizeReadsBack(SpecTest):
    """§9.2.2, §8.3: a group's max_size reads back as inserted; an empty watch_port means none."""

    def runTest(self):
        self.add_member(21, self.ports[1], rsbase.host_mac(self.ports[1]))
        g = sh.ActionProfileGroup("nexthop")(group_id=22)
        g.add(member_id=21, weight=3)
        e = p4runtime_pb2.Entity()
        e.action_profile_group.CopyFrom(g.msg())
        e.action_profile_group.max_size = 8
        e.action_profile_group.members[0].watch_port = b""
        self.write(self.insert(e))
        f = p4runtime_pb2.Entity()
        f.action_profile_group.action_profile_id = e.action_profile_group.action_profile_id
        f.action_profile_group.group_id = 22
        got = self.read_entities(f)
        self.assertEqual(len(got), 1)
        self.assertEqual(got[0].action_profile_group.max_size, 8)
        self.assertEqual(got[0].action_profile_group.members[0].weight, 3)


class OutOfRange_S8_4_RegisterValueWiderThanTheCell(SpecTest):
    """§8.4 OUT_OF_RANGE: a register value (P4Data bitstring) wider than its bit<32> cell."""

    def runTest(self):
        e = p4runtime_pb2.Entity()
        e.register_entry.register_id = _register_id("acl_fault_seen")
        e.register_entry.index.index = 3
        e.register_entry.data.bitstring = b"\x01\x00\x00\x00\x00"
        self.assert_write_fails(grpc.StatusCode.OUT_OF_RANGE, self.modify(e))


class InvalidArgument_S16_AckOfUnknownDigest(SpecTest):
    """§16 INVALID_ARGUMENT: a DigestListAck naming no digest of the P4Info gets a StreamError naming the ack."""

    def runTest(self):
        s = Stream(self)
        s.arbitrate(self.device_id, (0, 4), role="ptf.spec.digest-ack")
        s.next()
        req = p4runtime_pb2.StreamMessageRequest()
        req.digest_ack.digest_id = 0x17000999
        req.digest_ack.list_id = 5
        s.send(req)
        rep = s.next(field="error")
        self.assertNotIsInstance(rep, grpc.RpcError, str(rep))
        self.assertEqual(rep.error.canonical_code, code_pb2.INVALID_ARGUMENT, rep)
        self.assertEqual(rep.error.digest_list_ack.digest_list_ack.list_id, 5, rep)


class Ok_S9_2_3_OneShotNexthopForwards(SpecTest):
    """§9.2.3: a nexthop entry programmed in one shot (an action set) forwards, reads back as written and shows no members or groups."""

    def runTest(self):
        self.add_my_station()
        self.add_route("10.0.9.0/24", 31)
        out = self.ports[2]
        a = sh.Action("set_nexthop")
        a["port"] = str(out)
        a["src_mac"] = ROUTER_MAC
        a["dst_mac"] = host_mac(out)
        te = sh.TableEntry("nexthop")
        te.match["nexthop_id"] = "31"
        e = p4runtime_pb2.Entity()
        e.table_entry.CopyFrom(te.msg())
        act = e.table_entry.action.action_profile_action_set.action_profile_actions.add()
        act.action.CopyFrom(a.msg())
        act.weight = 2
        self.write(self.insert(e))
        got = self.read_entities(self.nexthop_read(31))
        self.assertEqual(len(got), 1)
        self.assertEqual(got[0].table_entry.action, e.table_entry.action, "read back as written")
        members = p4runtime_pb2.Entity()
        members.action_profile_member.SetInParent()
        self.assertEqual(self.read_entities(members), [], "the one shot's members are not the client's")
        pkt = roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.9.2")
        self.send(0, pkt)
        tu.verify_packet(self, routed(pkt, host_mac(out)), out)
        tu.verify_no_other_packets(self, timeout=0.5)

    def nexthop_read(self, nexthop_id):
        te = sh.TableEntry("nexthop")
        te.match["nexthop_id"] = str(nexthop_id)
        e = p4runtime_pb2.Entity()
        e.table_entry.CopyFrom(te.msg())
        return e


class Ok_S9_2_2_WatchPortDownTakesTheMemberOutOfTheGroup(SpecTest):
    """§9.2.2: with port 2's link down, an ECMP group whose members watch ports 2 and 3 sends every flow to port 3."""

    def runTest(self):
        self.add_my_station()
        for member_id, port in ((41, 2), (42, 3)):
            self.add_member(member_id, port, host_mac(port))
        g = sh.ActionProfileGroup("nexthop")(group_id=43)
        g.add(member_id=41, watch_port=b"\x02")
        g.add(member_id=42, watch_port=b"\x03")
        g.insert()
        te = sh.TableEntry("nexthop")
        te.match["nexthop_id"] = "40"
        te.group_id = 43
        te.insert()
        self.add_route("10.0.4.0/24", 40)
        flows = [
            roce.udp_packet(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.4.2", sport=1000 + i)
            for i in range(16)
        ]
        for pkt in flows:
            self.send(0, pkt)
        got = self.collect()
        self.assertEqual({port for port, _, _ in got}, {2, 3}, "16 flows spread over both members")
        # A flow the group sent to port 2: how soon it moves to port 3.
        on_2 = next(Ether(data)[UDP].sport for port, data, _ in got if port == 2)
        probe = next(pkt for pkt in flows if pkt[UDP].sport == on_2)
        # The switch's side goes down (ptf's own socket on ptf2 would not
        # survive its interface going down).
        dut_ns = tu.test_param_get("dut_ns", "")
        if not dut_ns:
            self.fail("the run passes the DUT namespace as test param dut_ns")
        link = ["ip", "-n", dut_ns, "link", "set", "dut2"]
        try:
            down = time.monotonic()
            subprocess.run(link + ["down"], check=True)
            moved = None
            while moved is None and time.monotonic() - down < 2.0:
                self.send(0, probe)
                if any(port == 3 for port, _, _ in self.collect(quiet_s=0.01)):
                    moved = time.monotonic() - down
            self.assertIsNotNone(moved, "the flow never left port 2")
            print("watch port: the flow moved to port 3 %.0f ms after port 2 went down" % (moved * 1e3))
            for pkt in flows:
                self.send(0, pkt)
            got = self.collect()
            self.assertEqual(len(got), len(flows), "every flow delivered: %s" % [p for p, _, _ in got])
            self.assertEqual({port for port, _, _ in got}, {3})
            members = list(sh.ActionProfileGroup("nexthop")(group_id=43).read())
            self.assertEqual(len(members[0].members), 2, "the group reads back as written")
        finally:
            subprocess.run(link + ["up"], check=True)
            for _ in range(100):
                with open("/sys/class/net/ptf2/carrier") as f:
                    if f.read().strip() == "1":
                        break
                time.sleep(0.05)
            time.sleep(1.0)  # the switch reopens the port within ~200 ms
        # Port 2 is back: so is its member.
        for pkt in flows:
            self.send(0, pkt)
        self.assertEqual({port for port, _, _ in self.collect()}, {2, 3})


class Ok_S9_5_ReplicaPortBytesReadBackCanonical(SpecTest):
    """§9.5, §8.4: a multicast replica given with the v1.4 `port` bytes (00 02) is port 2 and reads back as `port` in canonical form."""

    GROUP = 77

    def group(self):
        e = p4runtime_pb2.Entity()
        e.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = self.GROUP
        return e

    def runTest(self):
        e = self.group()
        g = e.packet_replication_engine_entry.multicast_group_entry
        r = g.replicas.add()
        r.port = b"\x00\x02"
        r.instance = 1
        r = g.replicas.add()
        r.egress_port = 3
        r.instance = 1
        self.write(self.insert(e))
        try:
            got = self.read_entities(self.group())
        finally:
            self.write(p4runtime_pb2.Update(type=p4runtime_pb2.Update.DELETE, entity=self.group()))
        self.assertEqual(len(got), 1, got)
        replicas = got[0].packet_replication_engine_entry.multicast_group_entry.replicas
        self.assertEqual([r.WhichOneof("port_kind") for r in replicas], ["port", "egress_port"])
        self.assertEqual(replicas[0].port, b"\x02")
        self.assertEqual(replicas[1].egress_port, 3)


def write_errors(rpc_error):
    """The p4.v1.Error of each update, from the grpc-status-details-bin trailer."""
    for key, value in rpc_error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            errors = []
            for detail in status.details:
                err = p4runtime_pb2.Error()
                detail.Unpack(err)
                errors.append(err)
            return errors
    return []


def _register_id(alias):
    """The id of a register (p4runtime-shell 0.0.6 has no register type)."""
    return next(r.preamble.id for r in sh.context.p4info.registers if r.preamble.alias == alias)


def _table_read(name):
    e = p4runtime_pb2.Entity()
    e.table_entry.table_id = sh.TableEntry(name).id
    return e
