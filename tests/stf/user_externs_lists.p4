// A user extern's constructor parameter of a list type (P4_16 §7.2.10:
// `list<T>` holds any number of T, fixed by the value; p4c's list1, list2
// and list9 samples give one to an extern): the argument is a list
// expression, cast to the list type or not, of scalars, structs or tuples,
// and the Rust side receives a slice.
#include <core.p4>
#include <v1model.p4>

struct range_t {
    bit<8> lo;
    bit<8> hi;
}

/// Which of its ranges (1-based) holds `x`, 0 if none.
extern RangeSet {
    RangeSet(list<range_t> ranges);
    bit<8> find(in bit<8> x);
}

/// The value paired with key `k`, `dflt` if none.
extern Pairs<K, V> {
    Pairs(list<tuple<K, V>> pairs, V dflt);
    V get(in K k);
}

/// How many of its bytes there are, and their sum.
extern Bytes {
    Bytes(list<bit<8>> bytes);
    bit<8> count();
    bit<8> sum();
}

header h_t {
    bit<8> x;
    bit<8> range;
    bit<16> value;
    bit<8> n3;
    bit<8> sum3;
    bit<8> n0;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

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
    RangeSet((list<range_t>){ {0, 9}, {10, 99}, {100, 199} }) ranges;
    Pairs<bit<8>, bit<16>>({ {1, 0x1111}, {2, 0x2222} }, 0xffff) pairs;
    Bytes({ 1, 2, 3 }) three;
    Bytes({ }) none;
    apply {
        sm.egress_spec = 1;
        hdr.h.range = ranges.find(hdr.h.x);
        hdr.h.value = pairs.get(hdr.h.x);
        hdr.h.n3 = three.count();
        hdr.h.sum3 = three.sum();
        hdr.h.n0 = none.count() + none.sum();
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
