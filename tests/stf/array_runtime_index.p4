// Run-time indices into arrays of scalars (`bit<8>[4] a`, a struct's or
// header's fields a[0]..a[3]): a read takes the element the index names;
// a write (`=` or `op=`) changes that element, and none for an index out
// of range (as header stacks' writes, P4_16 §8.18). Indices of any integer
// type: a `bit<2>` names every element, a negative `int<8>` none.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>    i;
    int<8>    j;
    bit<8>[4] a;
    bit<8>    read;
}

struct headers_t {
    h_t h;
}

struct meta_t {
    bit<8>[3] m;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

// An index that counts its evaluations.
bit<8> counted(inout bit<8> calls, in bit<8> v) {
    calls = calls + 1;
    return v;
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    bit<8> calls = 0;

    apply {
        sm.egress_spec = 1;
        if (hdr.h.i < 4) {
            hdr.h.read = hdr.h.a[hdr.h.i];
        }
        // Out of range (i >= 4): no element changes.
        hdr.h.a[hdr.h.i] = 0xee;
        hdr.h.a[hdr.h.j] = hdr.h.a[hdr.h.j] + 1;
        hdr.h.a[(bit<2>)hdr.h.i + 1] |= 0x80;
        meta.m[counted(calls, hdr.h.i)] = 7;
        hdr.h.a[counted(calls, hdr.h.i)] += 0x10;
        if (hdr.h.i < 3) {
            hdr.h.read = hdr.h.read + meta.m[hdr.h.i];
        }
        hdr.h.read = hdr.h.read + (calls << 4);
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
