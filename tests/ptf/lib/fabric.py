"""Client for the roceswitch fabric QoS service (``roceswitch.fabric.v1.FabricQos``).

What is here: the message classes of ``proto/roceswitch/fabric/v1/fabric.proto``
built at run time (grpcio-tools' bundled protoc compiles the .proto into a
descriptor set in a temporary directory; the runtime protobuf library turns
the descriptors into classes), and a ``FabricClient`` with one method per
RPC. Nothing is generated into the repository and no ``*_pb2.py`` is
imported, so this works with the protobuf 3.20 that p4runtime-shell pins.

Contract: ``FabricClient(addr)`` dials a gRPC target (``unix:/path``);
``msg("PortsConfig", ...)`` builds a request; each RPC method returns the
reply message or raises ``grpc.RpcError`` (``SwitchTest.fabric_call``
turns UNIMPLEMENTED into a failure naming the RPC). Units are those of the .proto field names.
"""

import os
import tempfile

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "roceswitch.fabric.v1"
SERVICE = PACKAGE + ".FabricQos"
PROTO_FILE = "roceswitch/fabric/v1/fabric.proto"

_UNARY = {
    "GetConfig": ("GetConfigRequest", "FabricConfig"),
    "SetConfig": ("FabricConfig", "SetReply"),
    "GetPorts": ("GetConfigRequest", "PortsConfig"),
    "SetPorts": ("PortsConfig", "SetReply"),
    "GetQosMaps": ("GetConfigRequest", "QosMaps"),
    "SetQosMaps": ("QosMaps", "SetReply"),
    "GetBuffer": ("GetConfigRequest", "BufferConfig"),
    "SetBuffer": ("BufferConfig", "SetReply"),
    "GetEcn": ("GetConfigRequest", "EcnConfig"),
    "SetEcn": ("EcnConfig", "SetReply"),
    "GetEts": ("GetConfigRequest", "EtsConfig"),
    "SetEts": ("EtsConfig", "SetReply"),
    "GetWatchdog": ("GetConfigRequest", "WatchdogConfig"),
    "SetWatchdog": ("WatchdogConfig", "SetReply"),
    "GetSecurity": ("GetConfigRequest", "SecurityConfig"),
    "SetSecurity": ("SecurityConfig", "SetReply"),
    "GetCounters": ("CountersRequest", "CountersReply"),
}

_classes = {}


def _proto_root():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("ROCESWITCH_PROTO_DIR", os.path.join(here, "..", "..", "..", "proto", "proto"))


def _load_classes():
    if _classes:
        return _classes
    from grpc_tools import protoc  # imported late: only fabric tests need it

    with tempfile.TemporaryDirectory(prefix="rsptf-proto-") as tmp:
        out = os.path.join(tmp, "fabric.pb")
        rc = protoc.main(
            [
                "protoc",
                "-I" + _proto_root(),
                "--descriptor_set_out=" + out,
                "--include_imports",
                PROTO_FILE,
            ]
        )
        if rc != 0:
            raise RuntimeError("protoc failed (%d) on %s under %s" % (rc, PROTO_FILE, _proto_root()))
        with open(out, "rb") as f:
            fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    factory = message_factory.MessageFactory(pool)
    for fd in fds.file:
        if fd.package != PACKAGE:
            continue
        for m in fd.message_type:
            _classes[m.name] = factory.GetPrototype(pool.FindMessageTypeByName(PACKAGE + "." + m.name))
        for e in fd.enum_type:
            _classes[e.name] = pool.FindEnumTypeByName(PACKAGE + "." + e.name)
    return _classes


def msg(name, **fields):
    """A new message of type ``roceswitch.fabric.v1.<name>``."""
    return _load_classes()[name](**fields)


def enum_value(enum_name, value_name):
    """The number of an enum value (``enum_value("Trust", "TRUST_PCP")``)."""
    return _load_classes()[enum_name].values_by_name[value_name].number


class FabricClient:
    """One channel to the fabric service."""

    def __init__(self, addr, timeout_s=10.0):
        self._classes = _load_classes()
        self._channel = grpc.insecure_channel(addr)
        self._timeout_s = timeout_s
        self._stubs = {}
        for rpc, (req, rep) in _UNARY.items():
            self._stubs[rpc] = self._channel.unary_unary(
                "/%s/%s" % (SERVICE, rpc),
                request_serializer=self._classes[req].SerializeToString,
                response_deserializer=self._classes[rep].FromString,
            )
        self._watch = self._channel.unary_stream(
            "/%s/WatchEvents" % SERVICE,
            request_serializer=self._classes["WatchEventsRequest"].SerializeToString,
            response_deserializer=self._classes["Event"].FromString,
        )

    def call(self, rpc, request=None):
        """Call a unary RPC by name; ``request`` defaults to an empty request."""
        if request is None:
            request = self._classes[_UNARY[rpc][0]]()
        return self._stubs[rpc](request, timeout=self._timeout_s)

    def __getattr__(self, name):
        if name in _UNARY:
            return lambda request=None: self.call(name, request)
        raise AttributeError(name)

    def watch_events(self, timeout_s=None):
        """The server stream of events (an iterator; cancel it with ``.cancel()``)."""
        return self._watch(self._classes["WatchEventsRequest"](), timeout=timeout_s)

    def counters(self, ports=()):
        """``{(port, priority): PriorityCounters}`` for the given ports (all if empty)."""
        reply = self.GetCounters(self._classes["CountersRequest"](ports=list(ports)))
        return {(c.port, c.priority): c for c in reply.counters}

    def close(self):
        self._channel.close()
