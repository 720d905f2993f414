// Ranges over signed select keys (P4_16 §8.15.3): `a .. b` on an int<W> key
// holds the x with a <= x <= b as signed values, so `-5 .. 5` holds -5..-1
// and 0..5 (the bit patterns 0xfb..0xff and 0x00..0x05). A second select
// mixes a signed range with an unsigned key.
#include <core.p4>
#include <v1model.p4>

header h_t {
    int<8> s;
    bit<8> u;
    bit<8> mark;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.s) {
            -5 .. 5: small;
            -128 .. -6: negative;
            default: pair;
        }
    }
    state small {
        hdr.h.mark = 1;
        transition accept;
    }
    state negative {
        hdr.h.mark = 2;
        transition accept;
    }
    state pair {
        transition select(hdr.h.s, hdr.h.u) {
            (6 .. 100, 0 .. 9): low;
            (101 .. 127, _): high;
            default: accept;
        }
    }
    state low {
        hdr.h.mark = 3;
        transition accept;
    }
    state high {
        hdr.h.mark = 4;
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
