// Indexed slices `e[lo +: w]`: the `w` bits of `e` from bit `lo` up, the
// same as `e[lo + w - 1 : lo]`, read and written (P4_16 v1.2.5 §8.6).
#include <core.p4>
#include <v1model.p4>

const bit<32> NIBBLE = 4;

header data_t {
    bit<16> x;
    bit<8>  mid;   // x[4 +: 8]
    bit<8>  top;   // x[NIBBLE + 8 +: 4] ++ 4w0
    bit<16> y;     // bits 8..11 of y replaced by x's low nibble
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
        h.d.mid = h.d.x[4 +: 8];
        h.d.top = h.d.x[NIBBLE + 8 +: 4] ++ 4w0;
        h.d.y[8 +: 4] = h.d.x[0 +: 4];
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
