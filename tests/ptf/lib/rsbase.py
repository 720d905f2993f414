"""Base class and helpers for PTF tests against a running ``roceswitch``.

What is here: ``SwitchTest``, a ``ptf.base_tests.BaseTest`` that connects to
the switch's P4Runtime server with p4runtime-shell (the P4Info comes from
the switch: ``GetForwardingPipelineConfig``; every ID is resolved by name),
empties the P4Runtime-owned tables it uses before and after each test, and
restores every fabric-service section a test changed. Helpers add router
MACs, IPv4/IPv6 routes, next hops (action-profile members), ECMP groups, L2
entries and ACL entries; read indexed counters; receive frames on any port;
and talk to the fabric QoS service (``fabric.FabricClient``).

Contract: test parameters (``--test-params``) ``grpcaddr`` (``unix:/path``),
``device_id`` (default 1), ``cpu_port`` (default 510), ``speed_bps`` (the
daemon's ``--speed``). ``sh.teardown()`` always runs in ``tearDown`` (the
shell's stream thread is not a daemon thread; reference pitfall 8). A
feature the fabric service answers UNIMPLEMENTED for fails the test,
naming the RPC (a switch that lost an RPC must not pass as skipped);
anything else that goes wrong fails the test too.
Counter indices of ``*_port_prio`` are ``port * 8 + priority`` as in
``p4/programs/roce_switch.p4``; ``drop_reason`` indices are the program's
``DROP_*`` constants.
"""

import logging
import time

import grpc
import ptf
import ptf.testutils as tu
from p4.v1 import p4runtime_pb2
from p4runtime_sh import shell as sh
from p4runtime_sh.p4runtime import P4RuntimeClient
from ptf.base_tests import BaseTest

import fabric as fabric_mod

ROUTER_MAC = "00:aa:bb:cc:dd:00"

# drop_reason counter indices (roce_switch.p4).
DROP_PARSER_ERROR = 0
DROP_CHECKSUM = 1
DROP_TTL_EXPIRED = 2
DROP_NO_ROUTE = 3
DROP_ACL = 4
DROP_UNKNOWN_L2_DST = 5

# Tables P4Runtime clients own, emptied around every test (entries that
# point at members/groups first).
OWNED_TABLES = ("acl", "ipv4_lpm", "ipv6_lpm", "nexthop", "l2_fwd", "my_station")


def host_mac(port):
    """The MAC of the emulated host behind a port."""
    return "02:00:00:00:00:%02x" % (port + 1)


def nexthop_mac(index):
    """A next-hop MAC distinct per index (ECMP members are told apart by it)."""
    return "02:00:00:00:10:%02x" % index


_plain_insecure_channel = grpc.insecure_channel


def _insecure_channel(target, options=None, compression=None):
    """``grpc.insecure_channel`` with ``:authority`` "localhost" on ``unix:`` targets.

    grpcio sends the socket path as the HTTP/2 ``:authority`` of a
    ``unix:/path`` target; the switch's tonic server resets such streams
    (RST_STREAM PROTOCOL_ERROR, seen with grpcio 1.85). Until the server
    accepts it, every client of this suite (p4runtime-shell included) sets
    the standard ``grpc.default_authority`` channel argument. The test
    ``control_plane.UnixSocketDefaultAuthority`` keeps checking the
    unmodified client.
    """
    opts = list(options or [])
    if str(target).startswith("unix:") and not any(k == "grpc.default_authority" for k, _ in opts):
        opts.append(("grpc.default_authority", "localhost"))
    return _plain_insecure_channel(target, options=opts, compression=compression)


grpc.insecure_channel = _insecure_channel

# p4runtime-shell echoes every written entry to stdout; turning "verbose" off
# would also turn off canonical bytestrings (pitfall 2), so mute the echo.
sh._print = lambda *args, **kwargs: None


class SessionError(Exception):
    """The P4Runtime session could not be established."""


class _Client(P4RuntimeClient):
    """p4runtime-shell's client, raising instead of ``sys.exit`` on a failed handshake."""

    def handshake(self):
        try:
            super().handshake()
        except SystemExit:
            self.tear_down()
            raise SessionError("no arbitration reply from the switch within 2 s") from None


def connect(grpc_addr, device_id, election_id=(0, 1)):
    """What ``sh.setup`` does, without its ``sys.exit`` paths."""
    try:
        grpc.channel_ready_future(grpc.insecure_channel(grpc_addr)).result(timeout=5)
    except grpc.FutureTimeoutError:
        raise SessionError("P4Runtime server at %s is not reachable" % grpc_addr) from None
    client = _Client(device_id, grpc_addr, election_id)
    sh.client = client
    try:
        p4info = client.get_p4info()
        if p4info is None:
            raise SessionError("the switch returned no P4Info")
        sh.context.set_p4info(p4info)
    except BaseException:
        sh.teardown()
        raise


class SwitchTest(BaseTest):
    """One P4Runtime session and a clean forwarding state per test."""

    def setUp(self):
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        self.grpc_addr = tu.test_param_get("grpcaddr", "unix:/tmp/roceswitch-p4rt.sock")
        self.device_id = int(tu.test_param_get("device_id", 1))
        self.cpu_port = int(tu.test_param_get("cpu_port", 510))
        self.speed_bps = int(tu.test_param_get("speed_bps", 10_000_000_000))
        self.ports = sorted(p for (_, p) in ptf.config["port_map"].keys())
        self._fabric = None
        self._fabric_saved = {}
        self._connected = False
        try:
            connect(self.grpc_addr, self.device_id)
        except SessionError as e:
            self.fail(str(e))
        self._connected = True
        self.clear_tables()

    def tearDown(self):
        try:
            if self._fabric_saved:
                self.restore_fabric()
            if self._connected:
                self.clear_tables()
        finally:
            if self._connected:
                sh.teardown()
                self._connected = False
            if self._fabric is not None:
                self._fabric.close()
            BaseTest.tearDown(self)

    # ---- P4Runtime tables -------------------------------------------------

    def clear_tables(self):
        """Delete every entry of the client-owned tables, then groups and members."""
        for table in OWNED_TABLES:
            sh.TableEntry(table).read(function=lambda e: e.delete())
        sh.ActionProfileGroup("nexthop").read(function=lambda g: g.delete())
        sh.ActionProfileMember("nexthop").read(function=lambda m: m.delete())

    def add_my_station(self, mac=ROUTER_MAC):
        te = sh.TableEntry("my_station")(action="set_routed")
        te.match["dst_mac"] = mac
        te.insert()
        return te

    def add_route(self, prefix, nexthop_id):
        """An LPM route (``"10.0.1.0/24"`` or ``"2001:db8::/64"``) to a next-hop id."""
        table = "ipv6_lpm" if ":" in prefix else "ipv4_lpm"
        te = sh.TableEntry(table)(action="set_nexthop_id")
        te.match["dst_addr"] = prefix
        te.action["nexthop_id"] = str(nexthop_id)
        te.insert()
        return te

    def add_member(self, member_id, port, dst_mac, src_mac=ROUTER_MAC):
        m = sh.ActionProfileMember("nexthop")(member_id=member_id, action="set_nexthop")
        m.action["port"] = str(port)
        m.action["src_mac"] = src_mac
        m.action["dst_mac"] = dst_mac
        m.insert()
        return m

    def add_nexthop(self, nexthop_id, port, dst_mac, src_mac=ROUTER_MAC):
        """A single next hop: member ``nexthop_id`` and the nexthop entry pointing at it."""
        self.add_member(nexthop_id, port, dst_mac, src_mac)
        te = sh.TableEntry("nexthop")
        te.match["nexthop_id"] = str(nexthop_id)
        te.member_id = nexthop_id
        te.insert()
        return te

    def add_ecmp(self, nexthop_id, group_id, members):
        """An ECMP group: ``members`` is a list of ``(member_id, port, dst_mac)``."""
        for member_id, port, dst_mac in members:
            self.add_member(member_id, port, dst_mac)
        g = sh.ActionProfileGroup("nexthop")(group_id=group_id)
        for member_id, _, _ in members:
            g.add(member_id=member_id)
        g.insert()
        te = sh.TableEntry("nexthop")
        te.match["nexthop_id"] = str(nexthop_id)
        te.group_id = group_id
        te.insert()
        return g

    def set_group_members(self, group_id, member_ids):
        g = sh.ActionProfileGroup("nexthop")(group_id=group_id)
        for member_id in member_ids:
            g.add(member_id=member_id)
        g.modify()

    def add_l2(self, vid, mac, port):
        te = sh.TableEntry("l2_fwd")(action="l2_forward")
        te.match["vid"] = str(vid)
        te.match["dst_mac"] = mac
        te.action["port"] = str(port)
        te.insert()
        return te

    def add_acl(self, action, priority=10, **match):
        """A ternary ACL entry; ``match`` values are p4runtime-shell strings (``"0x88b5&&&0xffff"``)."""
        te = sh.TableEntry("acl")(action=action)
        for field, value in match.items():
            te.match[field] = value
        te.priority = priority
        te.insert()
        return te

    def route_v4(self, prefix, port, nexthop_id=1):
        """Router MAC + one IPv4 route to one next hop on ``port`` (the common setup)."""
        self.add_my_station()
        self.add_nexthop(nexthop_id, port, host_mac(port))
        self.add_route(prefix, nexthop_id)

    # ---- counters ---------------------------------------------------------

    def counter(self, name, index):
        """``(packets, bytes)`` of one cell of an indexed counter."""
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        ent = req.entities.add()
        ent.counter_entry.counter_id = sh.CounterEntry(name).id
        ent.counter_entry.index.index = index
        for rep in sh.client.stub.Read(req):
            for e in rep.entities:
                if e.counter_entry.index.index == index:
                    return e.counter_entry.data.packet_count, e.counter_entry.data.byte_count
        self.fail("counter %s[%d] not returned by Read" % (name, index))

    def packets(self, name, index):
        return self.counter(name, index)[0]

    def wait_counter(self, name, index, at_least, timeout_s=2.0):
        """Poll a counter until its packet count reaches ``at_least``; returns the last value."""
        deadline = time.time() + timeout_s
        while True:
            value = self.packets(name, index)
            if value >= at_least or time.time() > deadline:
                return value
            time.sleep(0.05)

    # ---- dataplane --------------------------------------------------------

    def send(self, port, pkt, count=1):
        tu.send_packet(self, port, bytes(pkt), count)

    def send_burst(self, port, pkts):
        """Send frames back to back: all are serialised first, then written in a tight loop.

        Building a scapy RoCE packet costs about 2 ms, so sending while
        building offers only ~4 Mb/s; pre-built frames leave at hundreds of
        Mb/s, fast enough to congest a shaped port.
        """
        frames = [bytes(p) for p in pkts]
        for f in frames:
            self.dataplane.send(0, port, f)

    def recv(self, port=None, timeout=1.0):
        """The next frame ``(port, bytes, time)`` on ``port`` (any port if None) or None."""
        res = self.dataplane.poll(device_number=0, port_number=port, timeout=timeout)
        if isinstance(res, self.dataplane.PollSuccess):
            return res.port, bytes(res.packet), res.time
        return None

    def collect(self, quiet_s=0.3, port=None, limit=100000):
        """Every frame until none arrives for ``quiet_s``: a list of ``(port, bytes, time)``."""
        frames = []
        while len(frames) < limit:
            got = self.recv(port=port, timeout=quiet_s)
            if got is None:
                break
            frames.append(got)
        return frames

    # ---- fabric service ---------------------------------------------------

    @property
    def fabric(self):
        if self._fabric is None:
            self._fabric = fabric_mod.FabricClient(self.grpc_addr)
        return self._fabric

    def fabric_call(self, rpc, request=None):
        """A fabric RPC; UNIMPLEMENTED fails the test naming the RPC."""
        try:
            return self.fabric.call(rpc, request)
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.UNIMPLEMENTED:
                self.fail("fabric service answers UNIMPLEMENTED for %s: %s" % (rpc, e.details()))
            raise

    def fabric_set(self, section, message):
        """``Set<section>`` after saving the current section for ``tearDown`` to restore."""
        if section not in self._fabric_saved:
            self._fabric_saved[section] = self.fabric_call("Get" + section)
        return self.fabric_call("Set" + section, message)

    def restore_fabric(self):
        # Newest change first: a later section may refer to an earlier one
        # (an ECN profile names a port that the Ports section configures).
        for section, saved in reversed(list(self._fabric_saved.items())):
            try:
                self.fabric.call("Set" + section, saved)
            except grpc.RpcError as e:
                logging.error("restoring fabric %s failed: %s", section, e)
        self._fabric_saved = {}

    def ports_config(self):
        """The current ``PortsConfig`` with an entry for every test port."""
        cfg = self.fabric_call("GetPorts")
        have = {p.port for p in cfg.ports}
        for port in self.ports:
            if port not in have:
                cfg.ports.add(
                    port=port,
                    speed_bps=self.speed_bps,
                    mtu_bytes=9100,
                    cable_length_m=5,
                    trust=fabric_mod.enum_value("Trust", "TRUST_DSCP"),
                )
        return cfg

    def set_ports(self, **per_port):
        """Change fields of ports: ``set_ports(p0=dict(trust=...), p1=dict(speed_bps=...))``."""
        cfg = self.ports_config()
        for p in cfg.ports:
            changes = per_port.get("p%d" % p.port)
            if not changes:
                continue
            for field, value in changes.items():
                if field == "pfc_priorities":
                    del p.pfc_priorities[:]
                    p.pfc_priorities.extend(value)
                else:
                    setattr(p, field, value)
        return self.fabric_set("Ports", cfg)

    def fabric_counters(self, port, priority):
        return self.fabric_call("GetCounters", fabric_mod.msg("CountersRequest", ports=[port])).counters

    def prio_counters(self, port, priority):
        """The fabric ``PriorityCounters`` of one (port, priority)."""
        for c in self.fabric_counters(port, priority):
            if c.port == port and c.priority == priority:
                return c
        self.fail("fabric GetCounters has no entry for port %d priority %d" % (port, priority))


def routed(pkt, dst_mac, src_mac=ROUTER_MAC, hops=1):
    """The frame a router emits for ``pkt``: new MACs, TTL/hop limit down, IPv4 checksum redone."""
    from scapy.layers.inet import IP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether

    out = Ether(bytes(pkt))
    out[Ether].dst = dst_mac
    out[Ether].src = src_mac
    if IP in out:
        out[IP].ttl -= hops
        del out[IP].chksum
    elif IPv6 in out:
        out[IPv6].hlim -= hops
    return out
