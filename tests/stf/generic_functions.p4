// Generic functions (P4_16 §10.2, §6.8.1): type arguments inferred from the
// arguments (a bit string, a header) or given explicitly; a generic function
// calling another one. Each distinct list of type arguments is its own
// function in the generated code.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header pair_t {
    bit<8> a;
    bit<8> b;
}

header wide_t {
    bit<16> w;
}

struct headers_t {
    ethernet_t ethernet;
    pair_t     p;
    pair_t     q;
    wide_t     w;
}

struct meta_t { }

T pick<T>(in bool first, in T x, in T y) {
    if (first) {
        return x;
    }
    return y;
}

void swap<T>(inout T x, inout T y) {
    T t = x;
    x = y;
    y = t;
}

void swap_twice_then_once<T>(inout T x, inout T y) {
    swap(x, y);
    swap(x, y);
    swap<T>(x, y);
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.p);
        pkt.extract(hdr.q);
        pkt.extract(hdr.w);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        swap(hdr.p.a, hdr.p.b);
        swap_twice_then_once(hdr.p, hdr.q);
        hdr.w.w = pick<bit<16>>(hdr.w.w == 0, 0xbeef, hdr.w.w + 1);
        hdr.q.b = pick(hdr.q.a > hdr.q.b, hdr.q.a, hdr.q.b);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.p);
        pkt.emit(hdr.q);
        pkt.emit(hdr.w);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
