// `==` and `!=` on structs and tuples against list and struct-valued
// expressions (P4_16 §8.12, §8.13): the expression takes the type of the
// value it is compared with, on either side, and tuples compare element by
// element.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<16> b;
    bit<8>  res;
}

struct pair_t {
    bit<8>  a;
    bit<16> b;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        pair_t p = { hdr.h.a, hdr.h.b };
        tuple<bit<8>, bit<16>> t = { hdr.h.a, hdr.h.b };
        bit<8> r = 0;
        if (p == { a = 1, b = 2 }) { r = r | 1; }
        if ({ 8w1, 16w2 } == p) { r = r | 2; }
        if (t == { 1, 2 }) { r = r | 4; }
        if (t != { 1, 2 }) { r = r | 8; }
        tuple<bit<8>, bit<16>> u = { 1, 2 };
        if (t == u) { r = r | 16; }
        if (p != { 1, 2 }) { r = r | 32; }
        hdr.h.res = r;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
