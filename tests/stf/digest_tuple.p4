// A digest of a list of values (a tuple, `digest(1, {a, b})`): learned
// like a struct made up for it, `tuple_0` with fields f0, f1.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8>  kind;
    bit<16> value;
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
        if (h.d.kind == 1) {
            digest(1, { h.d.value, sm.ingress_port });
        }
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
