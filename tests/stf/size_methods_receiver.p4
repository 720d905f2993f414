// A size method's receiver is not evaluated (P4_16 "Compile-time size
// determination": `e.minSizeInBits()` is a compile-time constant, only the
// type of `e` counts): a receiver whose function call writes its `inout`
// argument, or a stack element at a run-time index, leaves the packet as it
// was, and the result is the size of the receiver's type.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<8>  c;
    bit<16> d;
}

header pair_t {
    bit<4> x;
    bit<4> y;
}

struct headers_t {
    h_t       h;
    pair_t[3] pairs;
}

struct meta_t { }

/// Bumps `v` and returns a 32-bit value: only its type is used below.
bit<32> bumped(inout bit<8> v) {
    v = v + 1;
    return (bit<32>)v;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.pairs.next);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.h.a = (bit<8>)bumped(hdr.h.b).minSizeInBits();
        hdr.h.c = (bit<8>)hdr.pairs[hdr.h.c].maxSizeInBytes();
        hdr.h.d = (bit<16>)(bumped(hdr.h.b) + bumped(hdr.h.b)).maxSizeInBits();
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.pairs);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
