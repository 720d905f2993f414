// Tuple elements by compile-time index, read and written (P4_16 §8.12),
// and integer 0/1 cast to bool (§8.11.1).
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8>  a;
    bit<16> b;
    bit<8>  sum;
    bit<8>  flag;
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
        tuple<bit<8>, bit<16>, bool> t = { h.d.a, h.d.b, (bool)1 };
        t[1] = t[1] + 1;
        h.d.b = t[1];
        h.d.sum = t[0] + t[1][7:0];
        bool off = (bool)0;
        h.d.flag = (t[2] && !off) ? 8w1 : 8w0;
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
