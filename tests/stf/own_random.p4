// A program's own extern function named like one of v1model's: P4_16
// overloads functions by their number of parameters, so `random` of one
// parameter (as p4c's samples declare it, `random(bit<5> logRange)`) is the
// program's own, implemented in `own_random.externs.rs`, beside v1model's
// `random(out T result, in T lo, in T hi)` of three. A call picks the one
// of its number of arguments.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8> a;
    bit<8> b;
}

struct headers_t {
    data_t d;
}

struct meta_t {}

/// 2^logRange - 1 (`own_random.externs.rs`): stands in for a random value
/// below 2^logRange, deterministic so the STF can expect it.
extern bit<32> random(in bit<5> logRange);

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.d);
        transition accept;
    }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.d.a = (bit<8>)random((bit<5>)h.d.a);
        // v1model's: lo == hi leaves one value.
        random(h.d.b, 7, 7);
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }

control CC(inout headers_t h, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t h) {
    apply {
        pkt.emit(h.d);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
