// `list<T>` parameters of functions (P4_16 §7.2.10): a list's length is
// its value's, so each call binds the parameter to the list it passes (a
// list expression of T's or a list variable) and the callee reads its
// elements, iterates over them with `for (x in l)` and passes it on.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> sum2;
    bit<8> sum3;
    bit<8> last;
    bit<8> first;
    bit<8> doubled;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

bit<8> total(in list<bit<8>> l) {
    bit<8> s = 0;
    for (bit<8> x in l) {
        s = s + x;
    }
    return s;
}

// Passes its list on to another list parameter.
bit<8> total_plus_one(in list<bit<8>> l) {
    return total(l) + 1;
}

bit<8> first_of<T>(in list<T> l, in bit<8> base) {
    return base + (bit<8>)l[0];
}

// An inout list: each element doubled in place.
void double_all(inout list<bit<8>> l) {
    l[0] = l[0] << 1;
    l[1] = l[1] << 1;
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
        // Two lengths: two instances of `total`.
        hdr.h.sum2 = total({ hdr.h.a, hdr.h.b });
        list<bit<8>> three = { hdr.h.a, hdr.h.b, hdr.h.c };
        hdr.h.sum3 = total_plus_one(three);
        hdr.h.first = first_of({ 4w1, 4w2 }, hdr.h.c);
        list<bit<8>> pair = { hdr.h.b, hdr.h.c };
        double_all(pair);
        hdr.h.doubled = pair[0];
        hdr.h.last = pair[1];
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
