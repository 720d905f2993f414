// `/` and `%` of a constant zero by a value known only at run time
// (p4c's issue2287-bmv2): p4c accepts them, as its strength reduction
// makes `0 / e` and `0 % e` zero once the calls in `e` are taken out, so
// the divisor is still evaluated, side effects and all, and the result is
// zero, whatever the divisor (zero too). A dividend that is not a constant
// zero needs a constant divisor (p4c's div3 error test).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

bit<8> bump(inout bit<8> x) {
    x = x + 1;
    return x;
}

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
        hdr.h.c = 8w0 / bump(hdr.h.a);
        hdr.h.d = 0 % bump(hdr.h.b) + hdr.h.d / 2;
        hdr.h.c = hdr.h.c + 8w0 / hdr.h.d;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
