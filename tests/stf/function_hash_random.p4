// `hash` and `random` inside functions (P4_16 §10.3: a function body may
// call extern functions), called from a parser state, an apply block and
// another function: each such function takes the switch's hash units and
// random source along.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> x;
    bit<16> a;
    bit<16> b;
    bit<8>  r;
}

struct headers_t {
    h_t h;
}

struct meta_t {
    bit<16> p;
}

bit<16> ident(in bit<16> v) {
    bit<16> o;
    hash(o, HashAlgorithm.identity, 16w0, { v }, 32w65536);
    return o;
}

bit<16> twice(in bit<16> v) {
    return ident(v) + ident(v);
}

bit<8> seven() {
    bit<8> o;
    random(o, 8w7, 8w7);
    return o;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        meta.p = twice(hdr.h.x);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.h.a = meta.p;
        hdr.h.b = ident(hdr.h.x ^ 16w0xffff);
        hdr.h.r = seven();
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
