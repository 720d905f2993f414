// A function's directionless `int` parameter (P4_16 §6.8: for a function, a
// directionless parameter takes a compile-time known value, and an `int`
// parameter must be directionless). Each call binds it to its argument's
// value, so `add(1, ..)` and `add(16, ..)` add different amounts, and the
// parameter may set a width (`bit<k>`) and be passed on to another such call.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

void add(int n, inout bit<8> x) {
    x = x + n;
}

bit<8> low_bits(int k, in bit<8> v) {
    bit<k> low = v[k - 1:0];
    return (bit<8>)low;
}

void add_twice(int n, inout bit<8> x) {
    add(n, x);
    add(n, x);
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
        sm.egress_spec = 2;
        add(1, hdr.h.a);
        add(16, hdr.h.b);
        hdr.h.c = low_bits(4, hdr.h.c);
        add_twice(2, hdr.h.a);
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
