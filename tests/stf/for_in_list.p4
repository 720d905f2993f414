// `for (T v in {a, b, c})` (P4_16 v1.2.5 §12.8): the loop variable takes
// each element of the list in turn; `continue` and `break` work as in
// other loops.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8> a;
    bit<8> b;
    bit<8> sum;    // a + b + 3
    bit<8> odd;    // how many of a, b, 3 are odd
    bit<8> first;  // the first of a, b, 3 above 0x80 (0 if none)
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
        h.d.sum = 0;
        h.d.odd = 0;
        h.d.first = 0;
        for (bit<8> v in { h.d.a, h.d.b, 3 }) {
            h.d.sum = h.d.sum + v;
        }
        for (bit<8> v in { h.d.a, h.d.b, 8w3 }) {
            if (v[0:0] == 0) {
                continue;
            }
            h.d.odd = h.d.odd + 1;
        }
        for (v in { h.d.a, h.d.b, 8w3 }) {
            if (v > 0x80) {
                h.d.first = v;
                break;
            }
        }
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
