// Directionless `int` apply parameters (P4_16 §6.8: a directionless
// parameter of a control or parser holds a compile-time value; p4c's
// issue3394): each direct application `C.apply(k, ..)` (or, in a parser
// state, `P.apply(pkt, k, ..)`) runs it with k bound to its value, an
// `int` that takes the width of what it meets.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

control AddShift(int k, int s, inout bit<8> v, out bit<16> w) {
    apply {
        v = v + k;
        w = (bit<16>)v << s;
    }
}

parser Flip(packet_in pkt, int mask, inout h_t h) {
    state start {
        h.b = h.b ^ mask;
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        Flip.apply(pkt, 0x0f, hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<16> unused;
        AddShift.apply(1, 0, hdr.h.a, unused);
        AddShift.apply(-2, 4, hdr.h.b, hdr.h.c);
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
