// Arrays of scalars as header and struct fields, declared either way
// (`bit<8>[4] a` or `bit<8> a[4]`, as p4c accepts): on the wire an array is
// its elements in order; `s.a[K]` with a compile-time K reads and writes
// one element.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8>    len;
    bit<8>[4] bytes;
    bit<4>    nib[2];
}

struct pair_t {
    bit<16> v[2];
}

struct headers_t {
    data_t d;
}

struct meta_t {
    pair_t p;
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.d);
        transition accept;
    }
}

control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        // Reverse the bytes through the struct's array.
        m.p.v[0] = h.d.bytes[0] ++ h.d.bytes[1];
        m.p.v[1] = h.d.bytes[2] ++ h.d.bytes[3];
        h.d.bytes[0] = m.p.v[1][7:0];
        h.d.bytes[1] = m.p.v[1][15:8];
        h.d.bytes[2] = m.p.v[0][7:0];
        h.d.bytes[3] = m.p.v[0][15:8];
        // Swap the nibbles; len counts the non-zero bytes.
        bit<4> t = h.d.nib[0];
        h.d.nib[0] = h.d.nib[1];
        h.d.nib[1] = t;
        h.d.len = 0;
        if (h.d.bytes[0] != 0) { h.d.len = h.d.len + 1; }
        if (h.d.bytes[1] != 0) { h.d.len = h.d.len + 1; }
        if (h.d.bytes[2] != 0) { h.d.len = h.d.len + 1; }
        if (h.d.bytes[3] != 0) { h.d.len = h.d.len + 1; }
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
