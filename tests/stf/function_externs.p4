// Extern objects and extern functions used from P4 functions (P4_16 §10):
// `bump` reads and writes a top-level register and counts a top-level
// counter, and is called from the parser and from the ingress, which see
// one register; `mix` calls a user-defined extern function and a method of
// a top-level user extern object, and is called from an action; the
// top-level action `count_kind` counts the top-level counter; the parser
// has a user extern object of its own, `pacc`.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8>  idx;
    bit<16> a;
    bit<16> b;
    bit<32> word;
    bit<16> c;
}

struct headers_t {
    data_t d;
}

struct meta_t {}

/// XOR of the two halves (`function_externs.externs.rs`).
extern bit<16> fold16(in bit<32> x);

/// A running sum from `start`; `add` returns the new sum.
extern Acc {
    Acc(bit<16> start);
    bit<16> add(in bit<16> v);
}

register<bit<16>>(4) hits;
counter(4, CounterType.packets) bumps;
Acc(100) acc;

bit<16> bump(in bit<8> i) {
    bit<16> v;
    hits.read(v, (bit<32>)i);
    v = v + 1;
    hits.write((bit<32>)i, v);
    bumps.count((bit<32>)i);
    return v;
}

bit<16> mix(in bit<32> x) {
    return fold16(x) ^ acc.add(1);
}

action count_kind(bit<8> kind) {
    bumps.count((bit<32>)kind + 2);
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    Acc(10) pacc;
    state start {
        pkt.extract(h.d);
        h.d.a = bump(0) + pacc.add(1);
        transition accept;
    }
}

control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action mix_word() {
        h.d.c = mix(h.d.word);
    }
    apply {
        sm.egress_spec = 1;
        h.d.b = bump(h.d.idx);
        mix_word();
        count_kind(h.d.idx);
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout headers_t h, inout meta_t m) { apply {} }
control Upd(inout headers_t h, inout meta_t m) { apply {} }
control Dep(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Vrfy(), MyIngress(), MyEgress(), Upd(), Dep()) main;
