// Fields of a type introduced by `type` (P4_16 §7.6) take values of their
// underlying type through casts, and give theirs back the same way; a
// typedef of the type is the type itself.
#include <core.p4>
#include <v1model.p4>

type bit<16> Port_t;
typedef Port_t PortAlias_t;

header data_t {
    Port_t      port;
    PortAlias_t copy;
    bit<16>     raw;
    bit<8>      same;
}

struct headers_t {
    data_t d;
}

struct meta_t {}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.d);
        transition accept;
    }
}

control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.d.copy = h.d.port;
        h.d.port = (Port_t)(h.d.raw + 1);
        h.d.raw = (bit<16>)h.d.copy;
        h.d.same = h.d.port == h.d.copy ? 8w1 : 8w0;
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
