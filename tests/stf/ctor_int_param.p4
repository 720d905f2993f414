// `int` constructor parameters of controls and parsers (P4_16 §7.1.6.5,
// §14.1: a compile-time value of infinite precision, given at each
// instantiation): each distinct argument makes a block of its own; the
// parameter reads as an `int` constant, in expressions (cast or taking
// the width of the other operand, reduced modulo 2^W), widths and
// defaults.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<8>  c;
    bit<16> d;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm)(int mark) {
    state start {
        pkt.extract(hdr.h);
        hdr.h.c = (bit<8>)mark;
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control Add(inout bit<8> v)(int k) {
    apply {
        v = v + k;
    }
}

control Wide(inout bit<16> v)(int w, int shift = 4) {
    bit<w> part = 0;
    apply {
        part = (bit<w>)v;
        v = ((bit<16>)part) << shift;
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm)(int port) {
    Add(3) three;
    Add(300) big;
    Add(-1) minus_one;
    Wide(4) low4;
    apply {
        sm.egress_spec = port;
        three.apply(hdr.h.a);
        big.apply(hdr.h.b);
        minus_one.apply(hdr.h.c);
        low4.apply(hdr.h.d);
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(0x7f), MyVerify(), MyIngress(2), MyEgress(), MyCompute(), MyDeparser()) main;
