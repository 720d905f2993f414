// `select` on keys of tuple and struct types (P4_16 §13.6, §8.15): a list
// expression among the keys is matched by a list keyset nested as it is,
// with `_`/`default` for any of its values or for it as a whole; a tuple or
// struct value as the only key is matched by a list of its components or by
// a tuple keyset `(a, b)` of them, whose elements may be masks and ranges.
// The parser marks which case matched (0 for none) and the deparser emits
// the mark before the header.
#include <core.p4>
#include <v1model.p4>

header mark_t { bit<8> v; }
header x_t { bit<8> a; bit<8> b; bit<8> c; }
struct pair_t { bit<8> first; bit<8> second; }
struct headers_t { mark_t m; x_t x; }
struct meta_t { bit<8> mark; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.x);
        transition select(h.x.a, {h.x.b, h.x.c}) {
            (1, {2, 3}): mark1;
            (1, {_, 4}): mark2;
            (1, default): mark3;
            (2, _): by_tuple;
            (3, _): by_struct;
            default: accept;
        }
    }
    state by_tuple {
        tuple<bit<8>, bit<8>> t = {h.x.b, h.x.c};
        transition select(t) {
            {5, 6}: mark4;
            (7, 8): mark5;
            {9, _}: mark6;
            default: accept;
        }
    }
    state by_struct {
        pair_t p = {h.x.b, h.x.c};
        transition select(p) {
            {5, 6}: mark7;
            (0x10 &&& 0xf0, 1 .. 3): mark8;
            default: accept;
        }
    }
    state mark1 { m.mark = 1; transition accept; }
    state mark2 { m.mark = 2; transition accept; }
    state mark3 { m.mark = 3; transition accept; }
    state mark4 { m.mark = 4; transition accept; }
    state mark5 { m.mark = 5; transition accept; }
    state mark6 { m.mark = 6; transition accept; }
    state mark7 { m.mark = 7; transition accept; }
    state mark8 { m.mark = 8; transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.m.setValid();
        h.m.v = m.mark;
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) {
    apply {
        pkt.emit(h.m);
        pkt.emit(h.x);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
