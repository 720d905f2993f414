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
import threading

import grpc
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2
from p4runtime_sh import shell as sh

import rsbase
from rsbase import SwitchTest

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

    def arbitrate(self, device_id, election_id, role=""):
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = device_id
        req.arbitration.election_id.high = election_id[0]
        req.arbitration.election_id.low = election_id[1]
        if role:
            req.arbitration.role.name = role
        self._requests.put(req)

    def next(self, timeout=3.0):
        """The next arbitration reply, or the RpcError that ended the stream."""
        while True:
            rep = self._responses.get(timeout=timeout)
            if isinstance(rep, grpc.RpcError) or rep.HasField("arbitration"):
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

    def read_entities(self, *entities):
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        req.entities.extend(entities)
        out = []
        for rep in sh.client.stub.Read(req):
            out.extend(rep.entities)
        return out


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


class Ok_S13_3_ReadBatchGoodEntitiesThenError(SpecTest):
    """§13.3: a Read with a good and a bad request streams the good request's entities, then fails."""

    def runTest(self):
        self.add_my_station()
        bad = p4runtime_pb2.Entity()
        bad.counter_entry.counter_id = sh.CounterEntry("drop_reason").id
        bad.counter_entry.index.index = 1 << 30
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        req.entities.extend([_table_read("my_station"), bad])
        got = []
        with self.assertRaises(grpc.RpcError) as cm:
            for rep in sh.client.stub.Read(req):
                got.extend(rep.entities)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.OUT_OF_RANGE, cm.exception.details())
        self.assertEqual(len(got), 1, "the good request's entry arrives before the error")
        self.assertEqual(got[0].table_entry.table_id, sh.TableEntry("my_station").id)


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


def _table_read(name):
    e = p4runtime_pb2.Entity()
    e.table_entry.table_id = sh.TableEntry(name).id
    return e
